"""Ids and roles: the character set they are restricted to, and when two ids are confusable.

A doc_id, object_id, supersedes or role is compared byte for byte by the registry, the
index and the policy, so two strings a person reads as one (a Cyrillic `е` for a Latin
`e`, a zero-width space, a right-to-left mark, padding) must never both exist: the gate
(canon.registry.gate) admits only ids that are already NFKC-normal and written in
ID_CHARSET, and the registry build (canon.registry.claims) refuses an id whose confusable
skeleton matches a different id it holds. docs/contracts.md, "Documents", is the contract.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Printable ASCII letters, digits and `._:-/`; `..` never (no path climbing in an id).
ID_CHARSET = "A-Z a-z 0-9 . _ : - /"
_ID = re.compile(r"^[A-Za-z0-9._:/-]+$")
MAX_ID_CHARS = 200

# Letters from other scripts drawn like a Latin one (the common Cyrillic and Greek look-alikes),
# and ASCII characters that read alike; `skeleton` maps each to one representative.
_LOOKALIKE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "к": "k", "м": "m", "т": "t", "в": "b", "н": "h",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "τ": "t", "κ": "k", "ι": "i", "χ": "x", "υ": "u",
    "0": "o", "1": "l", "i": "l", "|": "l",
})


def _visible(value: str) -> str:
    """A short, unambiguous echo of a bad value: escapes for anything not printable ASCII."""
    shown = value.encode("unicode_escape").decode("ascii")
    return repr(shown if len(shown) <= 60 else shown[:57] + "...")


def id_problem(value: Any, what: str) -> str | None:
    """Why `value` is not a valid id (None when it is). `what` names the field in the reason."""
    if not isinstance(value, str):
        return None  # a wrong type is reported by the document model
    if value == "":
        return f"{what} is empty"
    if value != value.strip():
        return f"{what} {_visible(value)} has leading or trailing whitespace"
    normal = unicodedata.normalize("NFKC", value)
    if normal != value:
        return f"{what} {_visible(value)} is not NFKC-normalised (NFKC form {_visible(normal)})"
    if not _ID.match(value):
        bad = sorted({ch for ch in value if not _ID.match(ch)})
        names = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}" for ch in bad[:3])
        return f"{what} {_visible(value)} has characters outside {ID_CHARSET} ({names})"
    if ".." in value:
        return f"{what} {_visible(value)} contains '..'"
    if len(value) > MAX_ID_CHARS:
        return f"{what} is {len(value)} characters, over {MAX_ID_CHARS}"
    return None


def role_problems(roles: Any) -> list[str]:
    """Every reason the allowed_roles value is not a list of valid roles."""
    values = [roles] if isinstance(roles, str) else roles
    if not isinstance(values, (list, tuple)):
        return []  # a wrong type is reported by the document model
    if not values:
        return ["allowed_roles is empty"]
    out = []
    for i, role in enumerate(values):
        if isinstance(role, str) and (problem := id_problem(role, f"allowed_roles[{i}]")) is not None:
            out.append(problem)
    return out


def skeleton(value: str) -> str:
    """What `value` looks like to a reader: NFKC, no invisible format characters, case-folded,
    look-alike letters and digits mapped to one. Two different ids with one skeleton are clones."""
    text = unicodedata.normalize("NFKC", value)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc", "Zs")).casefold()
    return text.translate(_LOOKALIKE).replace("rn", "m")

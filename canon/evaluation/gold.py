"""Gold sets: the release corpora with their gold cases, and reading a gold file."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from canon.core.dates import parse_as_of
from canon.core.errors import CanonInputError
from canon.core.settings import DEMO_RELEASE_SETS

# The demo's release gold sets (name, corpus, gold): the original 11 cases and Canon's harder set.
# A team's come from the configuration (`release_gate.gold`, canon/core/settings.py).
RELEASE_SETS = DEMO_RELEASE_SETS


@dataclass
class GoldCase:
    id: str
    question: str
    role: str
    as_of: dt.date | None
    expected_action: str
    gold_docs: list[str]
    gold_answer: str = ""


def load_gold(path: Path) -> list[GoldCase]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CanonInputError(path, "gold file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CanonInputError(path, f"not valid JSON: {exc}") from None
    if isinstance(data, dict):
        data = data.get("cases", data.get("gold", []))
    if not isinstance(data, list):
        raise CanonInputError(path, "expected a list of gold cases")
    out = []
    for i, c in enumerate(data):
        try:
            out.append(GoldCase(id=str(c["id"]), question=c["question"], role=c["role"],
                                as_of=parse_as_of(c.get("as_of"), source=f"{path} case {c.get('id', i)}"),
                                expected_action=c["expected_action"], gold_docs=list(c.get("gold_docs") or []),
                                gold_answer=c.get("gold_answer", "")))
        except KeyError as exc:
            raise CanonInputError(path, f"case {i} lacks {exc.args[0]!r}", field=f"[{i}].{exc.args[0]}") from None
    return out

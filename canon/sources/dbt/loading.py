"""Reading dbt artifact files: JSON decoding and schema-version checks.

Every failure here becomes a `CanonInputError` that names the file and the
reason (and the line for bad JSON), so a broken artifact never surfaces as a
traceback. dbt stamps each artifact with `metadata.dbt_schema_version`, a URL
such as https://schemas.getdbt.com/dbt/manifest/v12.json; the kind and the
number in it decide whether we can read the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from canon.core.errors import CanonInputError

try:  # orjson ships with Dagster's pinned dependencies; it is ~3x faster on 10 MB manifests.
    import orjson as _orjson
except ImportError:  # pragma: no cover - the stdlib path is the fallback, not the norm
    _orjson = None

# The artifact kinds Canon reads and the schema versions it understands.
SUPPORTED: dict[str, range] = {
    "manifest": range(5, 13),      # dbt 1.0 .. 1.11
    "run-results": range(1, 7),
    "sources": range(1, 4),
    "catalog": range(1, 2),
}

_SCHEMA_URL = re.compile(r"/dbt/(?P<kind>[a-z-]+)/v(?P<num>\d+)\.json\s*$")


def load_json(path: Path, what: str) -> dict[str, Any]:
    """Decode one artifact file into a dict, or raise CanonInputError naming it."""
    path = Path(path)
    if not path.exists():
        raise CanonInputError(path, f"{what} not found")
    if not path.is_file():
        raise CanonInputError(path, f"{what} is not a file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CanonInputError(path, f"cannot read {what}: {e.strerror or e}") from None
    if not raw.strip():
        raise CanonInputError(path, f"{what} is empty")
    doc: Any
    try:
        doc = _orjson.loads(raw) if _orjson is not None else json.loads(raw)
    except (ValueError, TypeError):
        # orjson refuses a few valid documents (integers beyond 64 bits); the
        # stdlib decides, and its message carries the line and column.
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as e:
            raise CanonInputError(path, f"invalid JSON in {what} (truncated or malformed): {e.msg} (line {e.lineno}, column {e.colno})",
                                  line=e.lineno) from None
        except (ValueError, RecursionError) as e:
            raise CanonInputError(path, f"invalid JSON in {what}: {e}") from None
    if not isinstance(doc, dict):
        raise CanonInputError(path, f"{what} must be a JSON object at the top level, found {type(doc).__name__}")
    return doc


def schema_version(doc: dict[str, Any], path: Path | str, kind: str) -> int:
    """Check `metadata.dbt_schema_version` names `kind` at a supported version; return the number."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        raise CanonInputError(path, f"not a dbt {kind} artifact: no metadata object", field="metadata")
    url = meta.get("dbt_schema_version")
    if not isinstance(url, str) or not url:
        raise CanonInputError(path, f"not a dbt {kind} artifact: metadata.dbt_schema_version is missing",
                              field="metadata.dbt_schema_version")
    m = _SCHEMA_URL.search(url)
    if m is None:
        raise CanonInputError(path, f"unrecognised dbt_schema_version {url!r}", field="metadata.dbt_schema_version")
    found_kind, num = m.group("kind"), int(m.group("num"))
    if found_kind != kind:
        raise CanonInputError(path, f"expected a dbt {kind} artifact but this is a dbt {found_kind} "
                                    f"(schema v{num}, {url})", field="metadata.dbt_schema_version")
    ok = SUPPORTED[kind]
    if num not in ok:
        raise CanonInputError(path, f"unsupported {kind} schema version v{num} ({url}); "
                                    f"Canon reads v{ok.start}..v{ok.stop - 1}", field="metadata.dbt_schema_version")
    return num


def dumps(obj: Any) -> str:
    """Deterministic compact JSON (sorted keys) for the *_json columns."""
    if _orjson is not None:
        try:
            return _orjson.dumps(obj, option=_orjson.OPT_SORT_KEYS | _orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # integers beyond 64 bits and other oddities
            pass
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)

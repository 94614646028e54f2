"""LanceDB tables of the index directory, listed with their versions (the
deletion walks every version of every table, not only the served one)."""

from __future__ import annotations

from pathlib import Path

import lancedb


def table_names(lancedb_dir: Path) -> list[str]:
    if not Path(lancedb_dir).exists():
        return []
    db = lancedb.connect(str(lancedb_dir))
    names, token = [], None
    while True:
        resp = db.list_tables(page_token=token)
        names.extend(resp.tables)
        token = getattr(resp, "page_token", None)
        if not token:
            return sorted(names)


def versions(tbl) -> list[int]:
    return sorted(int(v["version"]) for v in tbl.list_versions())

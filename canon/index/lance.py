"""The LanceDB side of the index, in one place: connecting, opening and
scanning a table, its full-text index, and listing the tables of the index
directory with their versions (a deletion walks every version of every table,
not only the served one). Other modules reach LanceDB through these helpers.
"""

from __future__ import annotations

import os
from pathlib import Path

import lancedb
import pyarrow as pa
from lancedb.index import FTS

from canon.index.tuning import tune_indexes


def connect(lancedb_dir: str | os.PathLike) -> lancedb.DBConnection:
    return lancedb.connect(str(lancedb_dir))


def open_table(db: lancedb.DBConnection, table: str):
    """The table, or None when it does not exist."""
    try:
        return db.open_table(table)
    except (ValueError, FileNotFoundError):
        return None


def scan(tbl, columns: list[str], where: str | None = None) -> pa.Table:
    q = tbl.search()
    if where:
        q = q.where(where)
    return q.select(columns).limit(None).to_arrow()


def build_fts(tbl) -> None:
    # Native (Lance) inverted index: versioned with the table, so a checked-out
    # revision searches exactly its own index. Positions enable phrase queries.
    tbl.create_index("text", config=FTS(with_position=True), replace=True)
    tune_indexes(tbl)   # LABEL_LIST on allowed_roles; IVF_FLAT >= 5k rows, IVF_RQ + refine >= 50k


def table_names(lancedb_dir: Path) -> list[str]:
    if not Path(lancedb_dir).exists():
        return []
    db = connect(lancedb_dir)
    names, token = [], None
    while True:
        resp = db.list_tables(page_token=token)
        names.extend(resp.tables)
        token = getattr(resp, "page_token", None)
        if not token:
            return sorted(names)


def versions(tbl) -> list[int]:
    return sorted(int(v["version"]) for v in tbl.list_versions())

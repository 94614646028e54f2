"""Rewriting the Canon DuckDB file after a deletion: DuckDB leaves deleted
strings in free blocks, so a forgotten document's text would stay on disk
(docs/design.md, "Deletion that provably propagates")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb

from canon.core.db import Connect, copy_database, opened


def compact_duckdb(connect: Connect, db_path: Path) -> dict[str, Any]:
    """Rewrite the DuckDB file so deleted strings leave its free blocks too.

    DuckDB marks deleted rows' blocks free but does not overwrite them, so the
    bytes stay in the file. COPY FROM DATABASE writes a fresh file that is
    swapped in once no connection in this process holds the old one (another
    process cannot: we hold the write lock while copying).
    """
    db_path = Path(db_path)
    tmp = db_path.with_name(db_path.name + ".compact")
    tmp.unlink(missing_ok=True)
    with opened(connect) as con:
        con.execute("CHECKPOINT")
        copy_database(con, tmp, alias="canon_compact")
    wal = db_path.with_name(db_path.name + ".wal")
    try:
        probe = duckdb.connect(str(db_path), config={"custom_user_agent": "canon-compaction-probe"})
    except duckdb.Error:
        tmp.unlink(missing_ok=True)
        return {"compacted": False, "reason": "another connection in this process still holds the file"}
    probe.close()
    if wal.exists():
        tmp.unlink(missing_ok=True)
        return {"compacted": False, "reason": "a write-ahead log is pending on the file"}
    before = db_path.stat().st_size
    os.replace(tmp, db_path)
    return {"compacted": True, "bytes_before": before, "bytes_after": db_path.stat().st_size}

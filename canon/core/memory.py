"""Giving memory back between the phases of a one-shot process.

A new `canon ask` process reads the stored catalog from DuckDB, then queries
LanceDB, then reads a few documents (canon/ask/scope.py). Each library keeps
what it read: DuckDB's buffer pool holds every block until its memory limit
(most of this machine's RAM), LanceDB's caches hold the index partitions of a
table while a handle to it is open, and memory both free stays in the C
heap. So without help the peak is the sum of the phases rather than the
largest of them. A warm server keeps all of it on purpose: its next question
reuses the caches.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

import duckdb

from canon.core.db import sql_literal

_EVICT_TO = "1MB"


def release_duckdb_cache(con: duckdb.DuckDBPyConnection) -> None:
    """Evict the blocks DuckDB caches for `con`'s database: its memory limit is lowered,
    which evicts every unpinned block, and set back. Nothing a running query needs is
    lost (pinned blocks stay; a limit DuckDB cannot meet only leaves the cache as it was).
    The limit is set back with RESET where it was the default: the setting reads back
    rounded ("2.7 GiB"), so writing the string back would lower it a little each time."""
    limit = _limit(con)
    try:
        con.execute(f"SET memory_limit = {sql_literal(_EVICT_TO)}")
    except duckdb.Error:
        pass
    finally:
        con.execute("RESET memory_limit")
        if _limit(con) != limit:
            con.execute(f"SET memory_limit = {sql_literal(limit)}")


def _limit(con: duckdb.DuckDBPyConnection) -> str:
    return con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def _libc():
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return lib if lib is not None and hasattr(lib, "malloc_trim") else None


_LIBC = _libc()


def return_free_heap() -> bool:
    """Collect Python's garbage and hand the C heap's free pages back to the system
    (glibc's malloc_trim; elsewhere only the collection). True when the heap was trimmed."""
    gc.collect()
    if _LIBC is None:
        return False
    _LIBC.malloc_trim(0)
    return True

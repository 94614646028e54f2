"""What a one-shot process lets go of between its phases (canon/core/memory.py) and the
order the read snapshot keeps documents in (canon/core/db.py, `CLUSTERED`): real DuckDB
files, real LanceDB tables. The memory these save is measured by the benchmark
(`python -m bench --only cli`, README "Performance"), not here."""

from __future__ import annotations

import datetime as dt
import platform
import random

import duckdb

from canon.core import db, memory
from canon.core.schema import ensure_registry
from canon.registry import store as registry


def _docs_in_shuffled_order(con: duckdb.DuckDBPyConnection, n_objects: int = 40, revisions: int = 5) -> list[tuple]:
    rows = [(f"doc.{o:03d}.{r}", f"metric.d{o % 3}.m{o:03d}", r) for o in range(n_objects) for r in range(revisions)]
    random.Random(3).shuffle(rows)
    now = dt.datetime(2026, 12, 1)
    for doc_id, object_id, r in rows:
        con.execute(
            "INSERT INTO documents (doc_id, doc_version, object_id, kind, title, status, authority, version, "
            "valid_from, allowed_roles, content_hash, text, source_uri, source_system, source_revision, "
            "contract_version, metadata_json, first_seen, updated_at) VALUES "
            "(?, '1', ?, 'metric_definition', ?, 'approved', 1, ?, DATE '2026-01-01', ['analyst'], ?, ?, "
            "'corpus/x.md', 'corpus', 'r', '1', '{}', ?, ?)",
            [doc_id, object_id, object_id, f"v{r}", f"h{doc_id}", f"text of {doc_id}", now, now])
    return rows


def test_the_snapshot_keeps_each_objects_revisions_together_and_everything_else_as_it_was(tmp_path):
    path = tmp_path / "canon.duckdb"
    with db.writing(path) as con:
        ensure_registry(con)
        rows = _docs_in_shuffled_order(con)
        registry.set_setting(con, "k", "v")
        stored = con.execute("SELECT object_id FROM documents").fetchall()
    assert [r[0] for r in stored] == [r[1] for r in rows]          # the live file: insertion order
    snap = duckdb.connect(str(db.snapshot_of(path)), read_only=True)
    try:
        order = [r[0] for r in snap.execute("SELECT object_id FROM documents").fetchall()]
        assert order == sorted(r[1] for r in rows)                  # the snapshot: by object, then doc_id
        ids = [r[0] for r in snap.execute("SELECT doc_id FROM documents").fetchall()]
        assert ids == [doc_id for doc_id, _, _ in sorted(rows, key=lambda r: (r[1], r[0]))]
        assert registry.get_setting(snap, "k") == "v"
        # the schema came along: the primary key and the macro
        pk = snap.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'documents' "
                          "AND constraint_type = 'PRIMARY KEY'").fetchall()[0][0]
        assert pk == 1
        assert snap.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'definitions_as_of'"
                            ).fetchall()[0][0] >= 1
        live = duckdb.connect(str(path), read_only=True)
        try:
            for (table,) in live.execute("SELECT table_name FROM duckdb_tables()").fetchall():
                a = live.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]
                assert snap.execute(f'SELECT count(*) FROM "{table}"').fetchall()[0][0] == a, table
        finally:
            live.close()
    finally:
        snap.close()


def test_releasing_duckdbs_cache_evicts_its_blocks_and_keeps_its_limit(tmp_path):
    path = tmp_path / "big.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT range AS i, repeat(md5(range::VARCHAR), 8) AS s FROM range(400000)")
    con.execute("CHECKPOINT")
    con.close()
    con = duckdb.connect(str(path), read_only=True)
    try:
        default = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        con.execute("SELECT max(s) FROM t").fetchall()

        def cached() -> int:
            return con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory() "
                               "WHERE tag = 'BASE_TABLE'").fetchall()[0][0]

        before = cached()
        assert before > 10 << 20                    # the scan's blocks stay cached
        memory.release_duckdb_cache(con)
        assert cached() < before // 10
        for _ in range(3):   # the limit comes back exactly, however often the cache is released
            memory.release_duckdb_cache(con)
        assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == default
        assert con.execute("SELECT count(*) FROM t").fetchall()[0][0] == 400000
        con.execute("SET memory_limit = '3GB'")        # a limit someone set is kept (as DuckDB reads it back)
        memory.release_duckdb_cache(con)
        kept = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        assert kept != default and kept.endswith(" GiB") and 2.5 <= float(kept.split()[0]) <= 2.8, kept
    finally:
        con.close()


def test_the_free_heap_is_trimmed_where_the_c_library_is_glibc():
    blob = [bytes(1024) for _ in range(20000)]
    del blob
    assert memory.return_free_heap() is (platform.libc_ver()[0] == "glibc")

"""What `canon.index.publish.publish` derived from each document last time, so an
unchanged document is not chunked and hashed again.

A document's rows are a pure function of the document (every field, as
projected through the policy), its source URI, the chunker and its sizes, the
embedding model id, and the code of `canon.index.chunking` and `canon.index.rows`.
`doc_key` hashes all of them; a memo entry holds, per chunk, the chunk id, the
row hash and the lineage record. The memo is only an optimization:

- an entry is used only when its key matches, and only when every one of its
  chunks is in the LanceDB table with the same row hash (otherwise the document
  is rebuilt, so a write lost by a failed publish is redone);
- a key collision aside, a stale or wrong entry cannot be used, and losing the
  table costs one full rebuild of rows, nothing else.

This takes the per-publish cost of chunking and hashing every document down
to hashing each document's JSON once.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import duckdb
import pyarrow as pa

from canon.core import schema
from canon.index import rows as index_rows
from canon.index.revisions import Txn
from canon.models.documents import Document

# chunk_id, row_hash, lineage record (the LINEAGE_FIELDS values, contract_version left None)
MemoChunk = tuple[str, str, list[Any]]


def doc_key(doc: Document, *, source_uri: str, model_id: str, chunker: str, max_chars: int, overlap: int) -> str:
    h = hashlib.sha256(index_rows.ROW_CODE.encode())
    h.update(json.dumps([source_uri, model_id, chunker, max_chars, overlap]).encode())
    # (warnings off: a document copied with `model_copy(update=...)` may hold a plain string where
    # an enum is declared; it serializes to the same JSON, which is all the key needs)
    h.update(doc.model_dump_json(warnings=False).encode("utf-8"))
    return h.hexdigest()


def load(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, tuple[str, list[MemoChunk]]]:
    schema.ensure_row_memo(con)
    rows = con.execute("SELECT doc_id, doc_key, chunks_json FROM index_row_memo WHERE lance_table = ?",
                       [table]).fetchall()
    return {doc_id: (key, [tuple(c) for c in json.loads(chunks)]) for doc_id, key, chunks in rows}


def save(con: duckdb.DuckDBPyConnection, table: str, changed: dict[str, tuple[str, list[MemoChunk]]],
         keep: set[str]) -> None:
    """Write the entries of rebuilt documents and drop those of documents not in `keep`
    (set-based statements over registered Arrow tables: 10k entries in one go)."""
    schema.ensure_row_memo(con)
    fresh = pa.table({"doc_id": list(changed), "doc_key": [k for k, _ in changed.values()],
                      "chunks_json": [json.dumps(c) for _, c in changed.values()]},
                     schema=pa.schema([("doc_id", pa.string()), ("doc_key", pa.string()),
                                       ("chunks_json", pa.string())]))
    live = pa.table({"doc_id": sorted(keep)}, schema=pa.schema([("doc_id", pa.string())]))
    con.register("_canon_memo_fresh", fresh)
    con.register("_canon_memo_live", live)
    try:
        with Txn(con):
            con.execute("DELETE FROM index_row_memo WHERE lance_table = ? AND (doc_id IN "
                        "(SELECT doc_id FROM _canon_memo_fresh) OR doc_id NOT IN (SELECT doc_id FROM _canon_memo_live))",
                        [table])
            con.execute("INSERT INTO index_row_memo SELECT ?, doc_id, doc_key, chunks_json FROM _canon_memo_fresh",
                        [table])
    finally:
        con.unregister("_canon_memo_fresh")
        con.unregister("_canon_memo_live")

"""The LanceDB row contract of the chunk index, and the hashes that decide
what a publish has to write.

- `embedding_key = ids.embedding_key(chunk_id, model_id)` names a vector;
  `embed_hash` (hash of the embedded text) guards against reusing a vector
  whose input changed while the chunk id did not (e.g. a corrected title).
- `row_hash` covers every stored attribute except the vector and the
  bookkeeping columns: a row whose hash changed but whose embedding key and
  embed hash did not is a *metadata-only* rewrite (vector reused).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa

from canon.core import ids
from canon.index import chunking
from canon.index.chunking import Chunk
from canon.models.documents import Document

# The source of the code that maps a document to its rows (chunking and this module): part of
# the index input digest (canon.index.build) and of every row memo key (canon.index.memo), so a
# Canon upgrade that changes it re-derives every row.
ROW_CODE = hashlib.sha256(Path(chunking.__file__).read_bytes() + Path(__file__).read_bytes()).hexdigest()

# Columns that do not take part in row_hash.
_UNHASHED = ("vector", "index_revision", "row_hash")


def lance_schema(dims: int) -> pa.Schema:
    return pa.schema([
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("doc_version", pa.string(), nullable=False),
        pa.field("object_id", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("title", pa.string()),
        pa.field("status", pa.string()),
        pa.field("authority", pa.int32()),
        pa.field("version", pa.string()),
        pa.field("valid_from", pa.date32()),
        pa.field("valid_to", pa.date32()),
        pa.field("allowed_roles", pa.list_(pa.string())),
        pa.field("supersedes", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("source_uri", pa.string()),
        pa.field("chunker", pa.string()),
        pa.field("span_start", pa.int32()),
        pa.field("span_end", pa.int32()),
        pa.field("embedding_key", pa.string()),
        pa.field("embed_hash", pa.string()),
        pa.field("row_hash", pa.string()),
        pa.field("header", pa.string()),
        pa.field("text", pa.string()),       # header + body: FTS and display
        pa.field("body", pa.string()),       # exact slice of the document text
        pa.field("vector", pa.list_(pa.float32(), dims)),
        pa.field("index_revision", pa.string()),  # the revision that last wrote this row
    ])


# Everything a query returns (no vector, no internal hashes).
RETURN_COLUMNS = (
    "chunk_id", "doc_id", "doc_version", "object_id", "kind", "title", "status", "authority",
    "version", "valid_from", "valid_to", "allowed_roles", "supersedes", "content_hash",
    "source_uri", "chunker", "span_start", "span_end", "embedding_key", "header", "text", "body",
    "index_revision",
)
STATE_COLUMNS = ("chunk_id", "doc_id", "row_hash", "embedding_key", "embed_hash")


def _canon(v: Any) -> Any:
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    if hasattr(v, "value"):  # enums
        return v.value
    return v


_PLAIN = (str, int, float, type(None))


def row_hash(row: dict[str, Any]) -> str:
    # Plain values pass as they are (what _canon returns for them anyway): at 17k rows the
    # generic recursion was a third of a publish's row building.
    payload = {k: (v if isinstance(v, _PLAIN) else _canon(v)) for k, v in row.items() if k not in _UNHASHED}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def build_row(doc: Document, chunk: Chunk, *, model_id: str, source_uri: str) -> dict[str, Any]:
    row = {
        "chunk_id": chunk.chunk_id,
        "doc_id": doc.doc_id,
        "doc_version": chunk.doc_version,
        "object_id": doc.object_id,
        "kind": doc.kind,
        "title": doc.title,
        "status": _canon(doc.status),
        "authority": int(doc.authority),
        "version": doc.version,
        "valid_from": doc.valid_from,
        "valid_to": doc.valid_to,
        # Sorted: role order carries no meaning and must not cause rewrites.
        "allowed_roles": sorted(set(doc.allowed_roles)),
        "supersedes": doc.supersedes,
        "content_hash": doc.content_hash,
        "source_uri": source_uri,
        "chunker": chunk.chunker,
        "span_start": chunk.span_start,
        "span_end": chunk.span_end,
        "embedding_key": ids.embedding_key(chunk.chunk_id, model_id),
        "embed_hash": text_hash(chunk.embed_text),
        "header": chunk.header,
        "text": chunk.text,
        "body": chunk.body,
    }
    row["row_hash"] = row_hash(row)
    return row


def state_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """Digest of a table state: sorted (chunk_id, row_hash)."""
    h = hashlib.sha256()
    for cid, rh in sorted(pairs):
        h.update(f"{cid}:{rh}\n".encode())
    return h.hexdigest()


def rows_to_arrow(rows: list[dict[str, Any]], vectors: np.ndarray, *, dims: int, revision_id: str) -> pa.Table:
    schema = lance_schema(dims)
    cols: dict[str, Any] = {}
    for f in schema:
        if f.name == "vector":
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
            cols["vector"] = pa.FixedSizeListArray.from_arrays(flat, dims)
        elif f.name == "index_revision":
            cols[f.name] = pa.array([revision_id] * len(rows), type=f.type)
        else:
            cols[f.name] = pa.array([r[f.name] for r in rows], type=f.type)
    return pa.table(cols, schema=schema)


SourceUriOf = Callable[[Document], str]

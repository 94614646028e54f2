"""The answer log: one row per answer, ids and versions only (never the
prompt or any evidence text), so audits and impact analysis are queries."""

import hashlib
import json
import uuid

import duckdb

from canon.core import schema
from canon.core.clock import utcnow
from canon.models.responses import Response

RESOLVER_VERSION = "canon-ask-1"



ensure_schema = schema.ensure_answer_log


def new_answer_id() -> str:
    return str(uuid.uuid4())


def record(con: duckdb.DuckDBPyConnection, resp: Response) -> None:
    """Write the row for `resp` (whose answer_id is already set). The table is created on the
    first insert that finds it missing, rather than running `ensure_schema` before every answer."""
    cited = [
        {"doc_id": e.doc_id, "content_hash": e.content_hash, "chunk_ids": e.chunk_ids, "use": e.use,
         "claims": sum(1 for c in resp.claims if c.evidence_id == e.doc_id)}
        for e in resp.evidence
    ]
    row = [resp.answer_id, utcnow(), resp.role,
           hashlib.sha256(resp.question.strip().lower().encode()).hexdigest(), resp.as_of,
           resp.index_revision, resp.policy_revision, RESOLVER_VERSION, resp.action, json.dumps(cited)]
    insert = "INSERT INTO answer_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    try:
        con.execute(insert, row)
    except duckdb.CatalogException:  # a registry that never logged an answer
        ensure_schema(con)
        con.execute(insert, row)

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


COLUMNS = ("answer_id", "asked_at", "role", "question_sha256", "as_of", "index_revision", "policy_revision",
           "resolver_version", "action", "cited_json", "principal", "transport")


def record(con: duckdb.DuckDBPyConnection, resp: Response, *, principal: str | None = None,
           transport: str | None = None) -> None:
    """Write the row for `resp` (whose answer_id is already set). The table is created (or given
    the columns added since its first release) on the first insert that finds it lacking,
    rather than running `ensure_schema` before every answer. `principal` and `transport` name
    who asked and how, when the context server (canon/serve/) asked; null from the CLI."""
    cited = [
        {"doc_id": e.doc_id, "content_hash": e.content_hash, "chunk_ids": e.chunk_ids, "use": e.use,
         "claims": sum(1 for c in resp.claims if c.evidence_id == e.doc_id)}
        for e in resp.evidence
    ]
    row = [resp.answer_id, utcnow(), resp.role,
           hashlib.sha256(resp.question.strip().lower().encode()).hexdigest(), resp.as_of,
           resp.index_revision, resp.policy_revision, RESOLVER_VERSION, resp.action, json.dumps(cited),
           principal, transport]
    insert = f"INSERT INTO answer_log ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    try:
        con.execute(insert, row)
    except (duckdb.CatalogException, duckdb.BinderException):  # no table yet, or one without the new columns
        ensure_schema(con)
        con.execute(insert, row)

"""The deletion verifier: every store is queried for the forgotten
document's chunk ids and distinctive phrases: DuckDB tables, every version of
every LanceDB table (rows, full-text and vector search) and every file under
$CANON_HOME (docs/design.md, "Deletion that provably propagates")."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import duckdb
from lancedb.query import MatchQuery, PhraseQuery

from canon.ask.answer_log import AnswerLogFile
from canon.core.config import CanonPaths
from canon.core.db import has_table, sql_list
from canon.index import lance
from canon.index import revisions as index_store
from canon.lifecycle.forget.probes import Probes, doc_filter
from canon.registry import store as registry

# Tables that may keep a forgotten document's *ids* (they never hold its text).
ID_TABLES = frozenset({"chunk_lineage", "answer_log", "deletions", "index_outbox", "index_migrations",
                       "document_versions", "documents", "quarantine"})

# Mirrors of upstream sources (dbt artifacts, the warehouse). Canon does not
# own them: text found there is reported as `source_copies`, never deleted.
SOURCE_TABLES = frozenset({"dbt_nodes", "dbt_run_results", "dbt_artifact_revisions", "lineage_edges",
                           "source_freshness"})

SOURCE_PATHS = ("dbt_target", "dbt_artifacts", "dbt_logs", "warehouse.duckdb", "raw.duckdb")

INFLIGHT_DIR = ("lifecycle", "inflight")

@dataclass
class Finding:
    store: str          # duckdb:<table> | lancedb:<table>@<version> | lancedb-fts:<table> | file:<path> | ...
    what: str           # chunk_id | doc_id | phrase | token | row
    count: int
    probe: str = ""     # "phrase#1 sha256:ab12…" — never the text itself

class StepTimer:
    """`with step("name"):` adds the seconds spent to `into[name]`."""

    def __init__(self, into: dict[str, float]):
        self.into = into

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.into[name] = round(self.into.get(name, 0.0) + time.perf_counter() - t, 3)

def _string_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
        "AND schema_name = current_schema() AND database_name = current_database()", [table]).fetchall()
    return [c for c, t in rows if "VARCHAR" in t or t.startswith(("STRUCT", "MAP", "JSON")) or t.endswith("[]")]

def _verify_duckdb(con: duckdb.DuckDBPyConnection, doc_id: str, chunk_ids: list[str],
                   probes: Probes) -> tuple[list[Finding], list[Finding], dict[str, int]]:
    findings: list[Finding] = []
    sources: list[Finding] = []
    info: dict[str, int] = {}
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = current_schema() "
        "AND database_name = current_database() ORDER BY 1").fetchall()]
    id_regex = "|".join(re.escape(c) for c in chunk_ids)
    for t in tables:
        cols = _string_columns(con, t)
        if not cols:
            continue
        target = sources if t in SOURCE_TABLES else findings
        for i, phrase in enumerate(probes.phrases):
            pred = " OR ".join(f'contains(lower(CAST("{c}" AS VARCHAR)), ?)' for c in cols)
            n = con.execute(f'SELECT count(*) FROM "{t}" WHERE {pred}', [phrase.lower()] * len(cols)).fetchall()[0][0]
            if n:
                target.append(Finding(f"duckdb:{t}", "phrase", n, probes.label(i)))
        if id_regex and t not in ID_TABLES and t not in SOURCE_TABLES:
            pred = " OR ".join(f'regexp_matches(CAST("{c}" AS VARCHAR), ?)' for c in cols)
            n = con.execute(f'SELECT count(*) FROM "{t}" WHERE {pred}', [id_regex] * len(cols)).fetchall()[0][0]
            if n:
                findings.append(Finding(f"duckdb:{t}", "chunk_id", n))
    # Structured checks of the stores that keep ids.
    checks = {
        "documents": ("SELECT count(*) FROM documents WHERE doc_id = ? AND (text <> '' OR title <> '' "
                      "OR metadata_json <> '{}' OR deleted_at IS NULL)"),
        "definitions": "SELECT count(*) FROM definitions WHERE evidence_id = ?",
        "quarantine": ("SELECT count(*) FROM quarantine WHERE doc_id = ? AND NOT coalesce(list_bool_and("
                       "list_transform(reasons, lambda r: starts_with(r, 'forgotten on '))), false)"),
        "chunk_lineage": "SELECT count(*) FROM chunk_lineage WHERE doc_id = ? AND deleted_at IS NULL",
    }
    for t, sql in checks.items():
        if t in tables:
            n = con.execute(sql, [doc_id]).fetchall()[0][0]
            if n:
                findings.append(Finding(f"duckdb:{t}", "row", n))
    if "embedding_lineage" in tables and chunk_ids:
        n = con.execute(f"SELECT count(*) FROM embedding_lineage WHERE chunk_id IN {sql_list(chunk_ids)}").fetchall()[0][0]
        if n:
            findings.append(Finding("duckdb:embedding_lineage", "chunk_id", n))
    if "answer_log" in tables:
        info["answer_log_citations_kept"] = con.execute(
            "SELECT count(*) FROM answer_log WHERE contains(cited_json, ?)", [json.dumps(doc_id)]).fetchall()[0][0]
    return findings, sources, info


def _verify_lancedb(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str, chunk_ids: list[str],
                    probes: Probes, embedder=None) -> tuple[list[Finding], dict[str, Any]]:
    findings: list[Finding] = []
    info: dict[str, Any] = {"versions_scanned": 0, "fts_queries": 0, "vector_queries": 0}
    flt = doc_filter(doc_id, chunk_ids)
    db = lance.connect(lancedb_dir) if Path(lancedb_dir).exists() else None
    for name in lance.table_names(lancedb_dir):
        tbl = db.open_table(name)
        for v in lance.versions(tbl):
            tbl.checkout(v)
            info["versions_scanned"] += 1
            n = tbl.count_rows(flt)
            if n:
                findings.append(Finding(f"lancedb:{name}@{v}", "chunk_id", n))
            if probes.phrases:
                t = tbl.search().select(["title", "header", "text", "body"]).limit(None).to_arrow()
                blob = [" ".join(str(x or "") for x in row).lower()
                        for row in zip(*(t.column(c).to_pylist() for c in t.column_names))]
                for i, p in enumerate(probes.phrases):
                    hits = sum(p.lower() in b for b in blob)
                    if hits:
                        findings.append(Finding(f"lancedb:{name}@{v}", "phrase", hits, probes.label(i)))
        tbl.checkout_latest()
        if not any(ix.index_type == "FTS" for ix in tbl.list_indices()):
            continue
        for i, p in enumerate(probes.phrases):
            info["fts_queries"] += 1
            rows = (tbl.search(PhraseQuery(p.lower(), "text"), query_type="fts")
                    .select(["doc_id", "text", "_score"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or p.lower() in (r["text"] or "").lower()]
            if hits:
                findings.append(Finding(f"lancedb-fts:{name}", "phrase", len(hits), probes.label(i)))
        for tok in probes.tokens:
            info["fts_queries"] += 1
            rows = (tbl.search(MatchQuery(tok, "text"), query_type="fts")
                    .select(["doc_id", "text", "_score"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or re.search(rf"\b{re.escape(tok)}\b", (r["text"] or "").lower())]
            if hits:
                findings.append(Finding(f"lancedb-fts:{name}", "token", len(hits),
                                        "token sha256:" + hashlib.sha256(tok.encode()).hexdigest()[:12]))
    # Vector search with the deleted rows' own vectors, in every table they came
    # from: a reachable row would come back first (distance 0).
    for name, vecs in probes.vectors.items():
        if db is None or name not in lance.table_names(lancedb_dir):
            continue
        tbl = db.open_table(name)
        for vec in vecs:
            info["vector_queries"] += 1
            rows = (tbl.search(vec, vector_column_name="vector", query_type="vector").distance_type("cosine")
                    .select(["doc_id", "chunk_id", "_distance"]).limit(20).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or r["chunk_id"] in set(chunk_ids)]
            if hits:
                findings.append(Finding(f"lancedb-vector:{name}", "chunk_id", len(hits)))
    # Optionally also the served model on the deleted phrases (loads the model).
    served = index_store.served_revision(con) if index_store.has_schema(con) else None
    if embedder is not None and served is not None and probes.phrases and db is not None \
            and embedder.identity.model_id == served["embedding_model_id"]:
        tbl = db.open_table(served["lance_table"])
        tbl.checkout(int(served["lance_version"]))
        for i, vec in enumerate(embedder.embed(probes.phrases)):
            info["vector_queries"] += 1
            rows = (tbl.search(vec, vector_column_name="vector", query_type="vector").distance_type("cosine")
                    .select(["doc_id", "chunk_id", "_distance"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or r["chunk_id"] in set(chunk_ids)]
            if hits:
                findings.append(Finding(f"lancedb-vector:{served['revision_id']}", "chunk_id", len(hits),
                                        probes.label(i)))
    return findings, info


def _scan_file(path: Path, marks: list[tuple[str, bytes]]) -> dict[str, int]:
    hits: dict[str, int] = {}
    keep = max((len(m) for _, m in marks), default=1)
    tail = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(8 << 20)
            if not block:
                break
            data = tail + block
            for label, m in marks:
                if m in data:
                    hits[label] = hits.get(label, 0) + 1
            tail = data[-keep:]
    return hits

def _verify_files(paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes,
                  source_roots: list[Path] = ()) -> tuple[list[Finding], list[Finding], int]:
    """Every file under CANON_HOME: the deleted phrases (anywhere), and under
    the LanceDB directory also the chunk ids and distinctive words. Hits in
    upstream sources (dbt artifacts, the warehouse, a corpus folder kept under
    CANON_HOME) are reported as source copies: the source owns them."""
    findings: list[Finding] = []
    sources: list[Finding] = []
    home = paths.home
    roots = [home / s for s in SOURCE_PATHS] + [Path(r).resolve() for r in source_roots]
    inflight = home.joinpath(*INFLIGHT_DIR)
    phrase_marks = [(probes.label(i), p.encode()) for i, p in enumerate(probes.phrases)]
    lance_marks = phrase_marks + [(f"chunk_id {c}", c.encode()) for c in chunk_ids] + [
        ("token sha256:" + hashlib.sha256(t.encode()).hexdigest()[:12], t.encode()) for t in probes.tokens]
    scanned = 0
    if not home.exists():
        return findings, sources, scanned
    for p in sorted(x for x in home.rglob("*") if x.is_file() and not x.is_symlink()):
        if inflight in p.parents:
            continue
        rel = p.relative_to(home)
        in_lance = paths.lancedb_dir in p.parents
        marks = lance_marks if in_lance else phrase_marks
        if not marks:
            continue
        scanned += 1
        for label, n in _scan_file(p, marks).items():
            f = Finding(f"file:{rel.as_posix()}", "chunk_id" if label.startswith("chunk_id") else "phrase", n,
                        label if not label.startswith("chunk_id") else "")
            is_source = any(p == r or r in p.parents for r in roots)
            (sources if is_source else findings).append(f)
    return findings, sources, scanned

def verify(con: duckdb.DuckDBPyConnection, paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes,
           *, embedder=None, timings: StepTimer | None = None) -> tuple[list[Finding], dict[str, Any]]:
    """Query every store for the chunk ids and the distinctive phrases.
    Returns (findings — empty when the deletion is complete, details)."""
    step = timings or StepTimer({})
    with step("verify_duckdb"):
        f_db, src_db, info_db = _verify_duckdb(con, doc_id, chunk_ids, probes)
        # answers `canon ask` logged to its own file keep their citations by id too
        info_db["answer_log_citations_kept"] = info_db.get("answer_log_citations_kept", 0) + len(
            AnswerLogFile(paths.answer_log_file).citing(doc_id))
    with step("verify_lancedb"):
        f_lance, info_lance = _verify_lancedb(con, paths.lancedb_dir, doc_id, chunk_ids, probes, embedder)
    corpus_root = registry.get_setting(con, "corpus_root") if has_table(con, "settings") else None
    with step("verify_files"):
        f_files, src_files, scanned = _verify_files(paths, doc_id, chunk_ids, probes,
                                                    [Path(corpus_root)] if corpus_root else [])
    details = {
        "probes": {"phrases": len(probes.phrases), "tokens": len(probes.tokens), "chunk_ids": len(chunk_ids)},
        "duckdb": info_db, "lancedb": info_lance, "files_scanned": scanned,
        "source_copies": [asdict(f) for f in src_db + src_files],
    }
    return f_db + f_lance + f_files, details

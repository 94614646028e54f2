"""Operational checks over the served index, as pure functions over DuckDB and
LanceDB (the Dagster asset checks in assets/index.py only call these).

- **Index freshness.** The query-time stale-index rule of
  canon/index/served.py: a registry revision may be read from the index only
  if the served index revision holds exactly that revision. The ask path and
  the freshness check both call it, so the check reports exactly the
  documents queries read live.
- **Revocation lag.** Every policy revision's first sighting is recorded in
  `policy_revisions`; its lag is the time until the first ready index revision
  that carries it (or a later one). The live policy keeps denying at query
  time regardless; this measures how long the index's copied ACL lagged.
- **Index coverage.** Every live chunk is embedded in the served revision.
- **Lineage integrity.** Every chunk the served revision holds has lineage and
  a live document.

Each check returns an `Outcome`: passed, a severity (WARN, then ERROR once a
promise is broken), one sentence a person can act on, and the details.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import duckdb

from canon.core import ids, schema
from canon.core.clock import naive_utc, utcnow
from canon.core.db import has_table
from canon.index.revisions import has_schema
from canon.index.served import indexed_versions, revision, served_table, stale_reason
from canon.models.documents import Document
from canon.registry.policy import Policy
from canon.registry.store import version_of

DEFAULT_REVOCATION_SLA_SECONDS = 300.0
DEFAULT_MAX_LAG_HOURS = 24.0
_DETAIL_LIMIT = 50



@dataclass
class Outcome:
    passed: bool
    severity: str                 # "WARN" or "ERROR" (meaningful when not passed)
    summary: str                  # one sentence a person can act on
    metadata: dict[str, Any] = field(default_factory=dict)   # numbers and short strings
    details: list[dict[str, Any]] = field(default_factory=list)
    table_md: str | None = None   # a Markdown table for the UI


def _hours(delta: dt.timedelta) -> float:
    return round(delta.total_seconds() / 3600, 3)


def _md_table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    if not rows:
        return "_none_"
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(c, "")).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(out)


def _no_index(docs_count: int) -> Outcome:
    return Outcome(passed=docs_count == 0, severity="ERROR",
                   summary="No ready index revision is served yet: materialize canon/knowledge_index.",
                   metadata={"served_index_revision": "none", "registry_revisions": docs_count})


# ------------------------------------------------------------ freshness

def index_freshness(
    con: duckdb.DuckDBPyConnection,
    docs: list[Document],
    *,
    max_lag_hours: Mapping[str, float] | float = DEFAULT_MAX_LAG_HOURS,
    lancedb_dir: str | Path | None = None,
    now: dt.datetime | None = None,
) -> Outcome:
    """Every current registry revision is in the served index revision with the
    same text (doc_version) and, when `lancedb_dir` is given, the same content
    hash. A stale revision fails the check with WARN while it is younger than
    the contract's freshness promise (`max_lag_hours`, per source system), and
    with ERROR once it is older."""
    now = now or utcnow()
    rev = revision(con, None)
    if rev is None:
        return _no_index(len(docs))
    held = indexed_versions(con, rev["revision_id"])
    lance_hashes: dict[str, set[str]] = {}
    if lancedb_dir is not None:
        t = served_table(lancedb_dir, rev, ["doc_id", "content_hash"])
        for d, c in zip(t.column("doc_id").to_pylist(), t.column("content_hash").to_pylist()):
            lance_hashes.setdefault(d, set()).add(c)
    first_seen = _version_first_seen(con)
    stale = []
    for doc in docs:
        reason = stale_reason(doc, held.get(doc.doc_id))
        if reason is None and lancedb_dir is not None and lance_hashes.get(doc.doc_id) != {doc.content_hash}:
            reason = "the served index rows carry another content hash"
        if reason is None:
            continue
        seen = first_seen.get((doc.doc_id, version_of(doc)))
        age_h = _hours(now - seen) if seen else None
        limit = max_lag_hours.get(doc.source_system, DEFAULT_MAX_LAG_HOURS) if isinstance(max_lag_hours, Mapping) \
            else float(max_lag_hours)
        stale.append({"doc_id": doc.doc_id, "source_system": doc.source_system, "reason": reason,
                      "registry_doc_version": version_of(doc), "content_hash": doc.content_hash,
                      "first_seen": seen.isoformat(timespec="seconds") + "Z" if seen else None,
                      "age_hours": age_h, "max_lag_hours": limit,
                      "overdue": age_h is not None and age_h > limit})
    stale.sort(key=lambda s: -(s["age_hours"] or 0))
    oldest = max((s["age_hours"] or 0 for s in stale), default=0.0)
    overdue = [s for s in stale if s["overdue"]]
    metadata = {
        "served_index_revision": rev["revision_id"], "registry_revisions": len(docs),
        "indexed_current": len(docs) - len(stale), "unindexed_revisions": len(stale),
        "overdue_revisions": len(overdue), "oldest_unindexed_age_hours": oldest,
        "max_lag_hours": max_lag_hours if isinstance(max_lag_hours, (int, float)) else dict(max_lag_hours),
    }
    if not stale:
        summary = f"All {len(docs)} registry revisions are in served index revision {rev['revision_id']}."
        return Outcome(True, "WARN", summary, metadata)
    head = ", ".join(s["doc_id"] for s in stale[:3]) + (" …" if len(stale) > 3 else "")
    if overdue:
        summary = (f"{len(overdue)} of {len(stale)} un-indexed registry revisions are older than the freshness "
                   f"promise (oldest {oldest:.1f} h): {head}. Re-run canon/knowledge_index; meanwhile queries "
                   f"read these live from the registry.")
    else:
        summary = (f"{len(stale)} registry revisions are not in the served index yet (oldest {oldest:.1f} h, "
                   f"within the promise): {head}. Queries read them live from the registry.")
    return Outcome(False, "ERROR" if overdue else "WARN", summary, metadata, stale[:_DETAIL_LIMIT],
                   _md_table(stale[:20], ["doc_id", "reason", "age_hours", "max_lag_hours"]))


def _version_first_seen(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dt.datetime]:
    try:
        rows = con.execute("SELECT doc_id, doc_version, first_seen FROM document_versions").fetchall()
    except duckdb.CatalogException:
        return {}
    return {(r[0], r[1]): r[2] for r in rows}


# ------------------------------------------------------------ policy revisions

ensure_schema = schema.ensure_policy_revisions


def record_policy_revision(con: duckdb.DuckDBPyConnection, revision: str, *, seen_by: str,
                           seen_at: dt.datetime | None = None) -> dt.datetime:
    """Record a sighting of a policy revision; keeps the earliest. Returns the
    stored first-seen time (naive UTC)."""
    ensure_schema(con)
    seen_at = naive_utc(seen_at or utcnow())
    con.execute(
        """INSERT INTO policy_revisions VALUES (?, ?, ?, ?)
           ON CONFLICT (policy_revision) DO UPDATE SET
             seen_by = CASE WHEN excluded.first_seen_at < policy_revisions.first_seen_at
                            THEN excluded.seen_by ELSE policy_revisions.seen_by END,
             first_seen_at = least(policy_revisions.first_seen_at, excluded.first_seen_at)""",
        [revision, seen_at, seen_by, utcnow()],
    )
    return con.execute("SELECT first_seen_at FROM policy_revisions WHERE policy_revision = ?",
                       [revision]).fetchall()[0][0]


def policy_lags(con: duckdb.DuckDBPyConnection, *, now: dt.datetime | None = None,
                sla_seconds: float = DEFAULT_REVOCATION_SLA_SECONDS) -> list[dict[str, Any]]:
    """One row per recorded policy revision, oldest first: when it was first
    seen, when a ready index revision first reflected it (itself, or a policy
    revision seen after it), and the lag against the SLA."""
    now = now or utcnow()
    if not has_table(con, "policy_revisions"):
        return []
    seen = con.execute(
        "SELECT policy_revision, first_seen_at, seen_by FROM policy_revisions ORDER BY first_seen_at").fetchall()
    ready = con.execute(
        "SELECT revision_id, policy_revision, ready_at FROM index_revisions WHERE status = 'ready' ORDER BY ready_at"
    ).fetchall() if has_schema(con) else []
    first_seen = {r[0]: r[1] for r in seen}
    out = []
    for policy_rev, t0, seen_by in seen:
        own = [r for r in ready if r[1] == policy_rev]
        later = [r for r in ready if r[1] != policy_rev and r[1] in first_seen and first_seen[r[1]] > t0]
        if own:
            hit, status = own[0], "reflected"
        elif later:
            hit, status = later[0], "superseded"
        else:
            hit, status = None, "pending"
        end = hit[2] if hit else now
        lag = max(0.0, (end - t0).total_seconds())
        out.append({
            "policy_revision": policy_rev, "first_seen": t0.isoformat(timespec="seconds") + "Z", "seen_by": seen_by,
            "status": status, "index_revision": hit[0] if hit else None,
            "reflected_at": hit[2].isoformat(timespec="seconds") + "Z" if hit else None,
            "lag_seconds": round(lag, 1), "within_sla": lag <= sla_seconds,
        })
    return out


def unreflected_revocations(lancedb_dir: str | Path, rev: Mapping[str, Any], policy: Policy) -> list[dict[str, str]]:
    """(doc_id, role) pairs the served index still lists although the live policy revokes them."""
    if not policy.revoke:
        return []
    t = served_table(lancedb_dir, rev, ["doc_id", "object_id", "allowed_roles"])
    out, done = [], set()
    for doc_id, object_id, roles in zip(t.column("doc_id").to_pylist(), t.column("object_id").to_pylist(),
                                        t.column("allowed_roles").to_pylist()):
        for role in roles or ():
            if (doc_id, role) in done:
                continue
            if any(rule.matches(role, doc_id, object_id) for rule in policy.revoke):
                done.add((doc_id, role))
                out.append({"doc_id": doc_id, "role": role})
    return sorted(out, key=lambda r: (r["doc_id"], r["role"]))


def revocation_lag(
    con: duckdb.DuckDBPyConnection,
    policy: Policy,
    lancedb_dir: str | Path,
    *,
    sla_seconds: float = DEFAULT_REVOCATION_SLA_SECONDS,
    now: dt.datetime | None = None,
    seen_by: str = "revocation_lag check",
) -> Outcome:
    """Does the served index reflect the live policy, and how long did it take?

    Passes when the served revision carries the live policy revision and lists
    no (document, role) the live policy revokes, and the live revision reached
    it within the SLA. Not yet reflected: WARN within the SLA, ERROR after it.
    Reflected late: WARN (until the next policy revision). Queries deny through
    the live policy either way; this measures the index's copy."""
    now = now or utcnow()
    record_policy_revision(con, policy.revision, seen_by=seen_by, seen_at=now)
    lags = policy_lags(con, now=now, sla_seconds=sla_seconds)
    live = next(r for r in lags if r["policy_revision"] == policy.revision)
    rev = revision(con, None)
    if rev is None:
        return _no_index(1)
    leftovers = unreflected_revocations(lancedb_dir, rev, policy)
    carried = rev["policy_revision"] == policy.revision
    if not carried or leftovers:
        # Not reflected yet, whatever policy_lags says about an older revision carrying it.
        age = max(0.0, (now - dt.datetime.fromisoformat(live["first_seen"].rstrip("Z"))).total_seconds())
        lag, status = age, "pending"
    else:
        lag, status = live["lag_seconds"], "reflected"
    metadata = {
        "live_policy_revision": policy.revision, "served_policy_revision": rev["policy_revision"],
        "served_index_revision": rev["revision_id"], "status": status, "first_seen": live["first_seen"],
        "lag_seconds": round(lag, 1), "sla_seconds": sla_seconds, "unreflected_revocations": len(leftovers),
        "max_recorded_lag_seconds": max((r["lag_seconds"] for r in lags), default=0.0),
    }
    table = _md_table(lags[-10:], ["policy_revision", "first_seen", "status", "index_revision", "lag_seconds"])
    details = [{"unreflected": leftovers[:_DETAIL_LIMIT]}, {"policy_revisions": lags[-20:]}]
    if status == "reflected" and lag <= sla_seconds:
        summary = (f"The served index carries policy revision {policy.revision}; it took {lag:.0f} s "
                   f"(SLA {sla_seconds:.0f} s).")
        return Outcome(True, "WARN", summary, metadata, details, table)
    if status == "reflected":
        summary = (f"Policy revision {policy.revision} reached the index after {lag:.0f} s, over the "
                   f"{sla_seconds:.0f} s SLA (queries denied through the live policy meanwhile).")
        return Outcome(False, "WARN", summary, metadata, details, table)
    what = (f"the served index revision {rev['revision_id']} carries policy {rev['policy_revision']!r}, "
            f"not the live {policy.revision!r}") if not carried else \
        f"the served index still lists {len(leftovers)} revoked (document, role) pair(s)"
    summary = (f"Revocation not yet reflected in the index for {lag:.0f} s (SLA {sla_seconds:.0f} s): {what}. "
               f"Queries already deny through the live policy; run canon_policy_job to re-project.")
    return Outcome(False, "ERROR" if lag > sla_seconds else "WARN", summary, metadata, details, table)


# ------------------------------------------------------------ coverage and lineage

def index_coverage(con: duckdb.DuckDBPyConnection, lancedb_dir: str | Path) -> Outcome:
    """Every live chunk (chunk_lineage, not deleted) has an embedding in the
    served revision under its model, and a row with a vector in LanceDB."""
    rev = revision(con, None)
    if rev is None:
        return _no_index(0)
    model = rev["embedding_model_id"]
    live = {r[0] for r in con.execute("SELECT chunk_id FROM chunk_lineage WHERE deleted_at IS NULL").fetchall()}
    embedded = {r[0]: r[1] for r in con.execute(
        "SELECT chunk_id, embedding_key FROM embedding_lineage WHERE index_revision = ? AND model_id = ?",
        [rev["revision_id"], model]).fetchall()}
    t = served_table(lancedb_dir, rev, ["chunk_id", "embedding_key", "vector"])
    row_keys = dict(zip(t.column("chunk_id").to_pylist(), t.column("embedding_key").to_pylist()))
    null_vectors = [c for c, isnull in zip(t.column("chunk_id").to_pylist(),
                                           t.column("vector").is_null().to_pylist()) if isnull]
    not_embedded = sorted(live - set(embedded))
    not_in_table = sorted(live - set(row_keys))
    wrong_key = sorted(c for c, k in row_keys.items() if k != ids.embedding_key(c, model))
    covered = len(live) - len(set(not_embedded) | set(not_in_table) | set(null_vectors))
    coverage = round(covered / len(live), 4) if live else 1.0
    metadata = {"served_index_revision": rev["revision_id"], "embedding_model": model, "live_chunks": len(live),
                "embedded_chunks": covered, "coverage": coverage, "not_embedded": len(not_embedded),
                "missing_from_lancedb": len(not_in_table), "null_vectors": len(null_vectors),
                "embedding_key_mismatch": len(wrong_key), "lancedb_rows": len(row_keys)}
    details = [{"problem": p, "chunk_id": c} for p, cs in (
        ("no embedding in the served revision", not_embedded), ("no LanceDB row", not_in_table),
        ("null vector", null_vectors), ("embedding_key is not h(chunk_id, model)", wrong_key)) for c in cs]
    if not details:
        return Outcome(True, "ERROR", f"All {len(live)} live chunks are embedded with {model} in "
                                      f"{rev['revision_id']}.", metadata)
    return Outcome(False, "ERROR",
                   f"Coverage {coverage:.1%}: {len(details)} chunk problem(s) in {rev['revision_id']} "
                   f"({len(not_embedded)} not embedded, {len(not_in_table)} missing from LanceDB, "
                   f"{len(null_vectors)} null vectors, {len(wrong_key)} key mismatches). Re-publish the index.",
                   metadata, details[:_DETAIL_LIMIT])


def lineage_integrity(con: duckdb.DuckDBPyConnection, lancedb_dir: str | Path, *,
                      delete_propagation_hours: float = 24.0, now: dt.datetime | None = None) -> Outcome:
    """Every chunk of the served revision has chunk_lineage and a live registry
    document. A document deleted from the registry but still served is WARN
    within the contract's delete-propagation window and ERROR after it; a
    chunk without lineage or without any document is always ERROR."""
    now = now or utcnow()
    rev = revision(con, None)
    if rev is None:
        return _no_index(0)
    t = served_table(lancedb_dir, rev, ["chunk_id"])
    served_ids = set(t.column("chunk_id").to_pylist())
    lineage = {r[0]: r[1] for r in con.execute(
        """SELECT c.chunk_id, c.doc_id FROM embedding_lineage e JOIN chunk_lineage c USING (chunk_id)
           WHERE e.index_revision = ?""", [rev["revision_id"]]).fetchall()}
    docs = {r[0]: r[1] for r in con.execute("SELECT doc_id, deleted_at FROM documents").fetchall()}
    problems = []
    for cid in sorted(served_ids - set(lineage)):
        problems.append({"chunk_id": cid, "doc_id": None, "problem": "served chunk without lineage",
                         "overdue": True})
    for cid in sorted(set(lineage) - served_ids):
        problems.append({"chunk_id": cid, "doc_id": lineage[cid],
                         "problem": "lineage names a chunk the served LanceDB version lacks", "overdue": True})
    for cid, doc_id in sorted(lineage.items()):
        if doc_id not in docs:
            problems.append({"chunk_id": cid, "doc_id": doc_id, "problem": "no such document in the registry",
                             "overdue": True})
        elif docs[doc_id] is not None:
            age = _hours(now - docs[doc_id])
            problems.append({"chunk_id": cid, "doc_id": doc_id, "age_hours": age,
                             "problem": f"document deleted {age:.1f} h ago is still served",
                             "overdue": age > delete_propagation_hours})
    dead_docs = sorted({p["doc_id"] for p in problems if p["doc_id"]})
    metadata = {"served_index_revision": rev["revision_id"], "served_chunks": len(served_ids),
                "chunks_with_lineage": len(set(lineage) & served_ids), "problems": len(problems),
                "documents_affected": len(dead_docs), "delete_propagation_hours": delete_propagation_hours}
    if not problems:
        return Outcome(True, "ERROR", f"All {len(served_ids)} served chunks have lineage and a live document.",
                       metadata)
    overdue = any(p["overdue"] for p in problems)
    summary = (f"{len(problems)} served chunk(s) fail lineage integrity across {len(dead_docs)} document(s) "
               f"({', '.join(dead_docs[:3])}{' …' if len(dead_docs) > 3 else ''}). Re-publish the index "
               f"so deleted documents leave it.")
    return Outcome(False, "ERROR" if overdue else "WARN", summary, metadata, problems[:_DETAIL_LIMIT])

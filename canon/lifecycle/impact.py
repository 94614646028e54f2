"""Impact analysis over the answer log (docs/design.md, "Lineage at two grains"): which
answers relied on a document — or on one revision of it, e.g. the wrong text
a source team has since corrected?

The answer log stores, per cited document, its `content_hash` and the chunk
ids that were cited (never text). A chunk id belongs to exactly one document
version (`chunk_lineage.doc_version`), so when chunk ids were logged the
cited revision is exact. When the evidence was read live from the registry
(no chunk ids), the revision is found through the content hash
(`document_versions` maps doc_version <-> content_hash); if two versions
share a stated hash the match is flagged `ambiguous`.

The log is read from both stores (canon/ask/answer_log.py): the registry's
`answer_log` table and the answer log file `canon ask` appends to.

Authorization (docs/contracts.md, "canon impact"): given a role, the report
holds only what that role may see under the live policy — nothing at all for
a document it may not see (the same report as for an unknown id), and only the
answers every one of whose cited documents it may see. Visibility is the rule
of canon/registry/policy.py, decided before any answer row is read.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from canon.ask import answer_log
from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.registry.policy import Policy, visible_docs


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND schema_name = current_schema() "
        "AND database_name = current_database()", [table]).fetchall()[0][0])


def versions_of(con: duckdb.DuckDBPyConnection, doc_id: str) -> list[dict[str, Any]]:
    """Every recorded version of `doc_id`, oldest first, with which is current."""
    if not _has(con, "document_versions"):
        return []
    current = None
    if _has(con, "documents"):
        rows = con.execute("SELECT doc_version, deleted_at FROM documents WHERE doc_id = ?", [doc_id]).fetchall()
        current = rows[0][0] if rows and rows[0][1] is None else None
    return [{"doc_version": v, "content_hash": h, "first_seen": fs, "current": v == current}
            for v, h, fs in con.execute(
                "SELECT doc_version, content_hash, first_seen FROM document_versions WHERE doc_id = ? "
                "ORDER BY first_seen, doc_version", [doc_id]).fetchall()]


def impact(con: duckdb.DuckDBPyConnection, doc_id: str, doc_version: str | None = None, *,
           log_file: answer_log.AnswerLogFile | None = None, role: str | None = None,
           policy: Policy | None = None) -> dict[str, Any]:
    """Every logged answer that cited `doc_id` (or, with `doc_version` — a
    doc_version id or a content hash — that revision), oldest first. With `role`
    (and the live `policy`), only what that role may see; without, the operator's
    unfiltered view for in-process audits."""
    if not doc_id or not doc_id.strip():
        raise CanonInputError("--doc-id", "a document id is required", field="doc_id")
    if role is not None and not role.strip():
        raise CanonInputError("--role", "a role is required", field="role")
    seen: set[str] | None = None
    if role is not None:
        seen = {d.doc_id for d in visible_docs(registry.load_documents(con), role, policy or Policy())}
    versions = versions_of(con, doc_id) if seen is None or doc_id in seen else []
    target: dict[str, Any] | None = None
    if doc_version is not None:
        matches = [v for v in versions if doc_version in (v["doc_version"], v["content_hash"])]
        if not matches:
            known = ", ".join(f"{v['doc_version']} ({v['content_hash']})" for v in versions) or "none recorded"
            raise CanonInputError("--doc-version", f"{doc_id} has no version {doc_version!r}; known versions: {known}",
                                  field="doc_version")
        target = matches[0]
    by_chunk: dict[str, str] = {}
    if _has(con, "chunk_lineage"):
        by_chunk = dict(con.execute("SELECT chunk_id, doc_version FROM chunk_lineage WHERE doc_id = ?",
                                    [doc_id]).fetchall())
    by_hash: dict[str, list[str]] = {}
    for v in versions:
        by_hash.setdefault(v["content_hash"], []).append(v["doc_version"])

    answers: list[dict[str, Any]] = []
    rows = [] if seen is not None and doc_id not in seen else answer_log.citing(con, log_file, doc_id)
    for aid, asked_at, asker, as_of, action, irev, prev, resolver, cited_json in rows:
        cited = json.loads(cited_json)
        if seen is not None and not {c.get("doc_id") for c in cited} <= seen:
            continue  # the answer also rests on a document this role may not see
        for c in cited:
            if c.get("doc_id") != doc_id:
                continue
            chunk_ids = list(c.get("chunk_ids") or [])
            from_chunks = sorted({by_chunk[x] for x in chunk_ids if x in by_chunk})
            if from_chunks:
                cited_versions, matched_by = from_chunks, "chunk_ids"
            else:
                cited_versions, matched_by = sorted(by_hash.get(c.get("content_hash", ""), [])), "content_hash"
            ambiguous = matched_by == "content_hash" and len(cited_versions) > 1
            if target is not None and target["doc_version"] not in cited_versions:
                continue
            answers.append({
                "answer_id": aid, "asked_at": asked_at.isoformat() + "Z", "role": asker,
                "as_of": as_of.isoformat() if as_of else None, "action": action,
                "index_revision": irev, "policy_revision": prev, "resolver_version": resolver,
                "use": c.get("use"), "claims": int(c.get("claims") or 0),
                "content_hash": c.get("content_hash"), "doc_versions": cited_versions,
                "chunk_ids": chunk_ids, "matched_by": matched_by, "ambiguous": ambiguous,
                "current": bool(cited_versions) and all(
                    v["current"] for v in versions if v["doc_version"] in cited_versions),
            })
    counts: dict[str, int] = {}
    for a in answers:
        for v in a["doc_versions"]:
            counts[v] = counts.get(v, 0) + 1
    for v in versions:
        v["answers"] = counts.get(v["doc_version"], 0)
        v["first_seen"] = v["first_seen"].isoformat() + "Z"
    return {
        "doc_id": doc_id,
        "viewer_role": role,
        "doc_version": target["doc_version"] if target else None,
        "content_hash": target["content_hash"] if target else None,
        "versions": versions,
        "answers": answers,
        "count": len(answers),
        "claims": sum(a["claims"] for a in answers),
    }


def format_text(report: dict[str, Any]) -> str:
    head = report["doc_id"] + (f" @ {report['doc_version']} ({report['content_hash']})" if report["doc_version"] else "")
    lines = [f"impact of {head}: {report['count']} answer(s), {report['claims']} claim(s)"]
    for v in report["versions"]:
        mark = "current" if v["current"] else "old"
        lines.append(f"  version {v['doc_version']} {v['content_hash']} ({mark}, first seen {v['first_seen']}): "
                     f"{v['answers']} answer(s)")
    if report["answers"]:
        lines.append("")
        lines.append(f"  {'asked_at':<27} {'role':<20} {'action':<16} {'use':<10} claims  index revision        "
                     "answer_id")
    for a in report["answers"]:
        flag = "" if a["current"] else "  ← relied on a version that is no longer current"
        lines.append(f"  {a['asked_at']:<27} {a['role']:<20} {a['action']:<16} {a['use'] or '-':<10} "
                     f"{a['claims']:>6}  {a['index_revision'] or '-':<21} {a['answer_id']}{flag}")
    return "\n".join(lines)

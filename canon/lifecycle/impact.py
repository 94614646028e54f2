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
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from canon.core.errors import CanonInputError


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


def impact(con: duckdb.DuckDBPyConnection, doc_id: str, doc_version: str | None = None) -> dict[str, Any]:
    """Every logged answer that cited `doc_id` (or, with `doc_version` — a
    doc_version id or a content hash — that revision), oldest first."""
    if not doc_id or not doc_id.strip():
        raise CanonInputError("--doc-id", "a document id is required", field="doc_id")
    versions = versions_of(con, doc_id)
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
    rows = [] if not _has(con, "answer_log") else con.execute(
        "SELECT answer_id, asked_at, role, as_of, action, index_revision, policy_revision, resolver_version, "
        "cited_json FROM answer_log WHERE contains(cited_json, ?) ORDER BY asked_at, answer_id",
        [json.dumps(doc_id)]).fetchall()
    for aid, asked_at, role, as_of, action, irev, prev, resolver, cited_json in rows:
        for c in json.loads(cited_json):
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
                "answer_id": aid, "asked_at": asked_at.isoformat() + "Z", "role": role,
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

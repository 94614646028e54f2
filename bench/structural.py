"""Section 2, structural (child side; the figures are bench/figures.py's): the deterministic
HashingEmbedder on the full corpus — cold build, no-op rebuild, one changed body, an ACL-only change,
and a policy revocation the next ask enforces without a publish."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bench import gen_corpus
from bench.pipeline import TimedEmbedder, disk_mb, pipeline, public
from bench.questions import build_retriever, governed_questions
from bench.settings import ROLE, STAGES
from bench.timing import log, now
from bench.workdir import fresh_dir
from canon.ask.pipeline import AskContext, ask
from canon.index.chunking import chunk_document
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.revisions import served_revision
from canon.registry import store as registry
from canon.registry.policy import load_policy


def _doc_files(corpus: Path, sub: str) -> list[Path]:
    return sorted((corpus / sub).rglob("*.md")) if (corpus / sub).exists() else []


def _chunks_of_doc(docs, doc_id: str) -> int:
    d = next(d for d in docs if d.doc_id == doc_id)
    return len(chunk_document(d))


def _front_matter_id(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.startswith("doc_id:"):
            return line.split(":", 1)[1].strip().strip("'")
    raise ValueError(f"{path}: no doc_id")


def case_structural(p: dict[str, Any]) -> dict[str, Any]:
    corpus, work, reps = Path(p["corpus"]), Path(p["work"]), p["reps"]
    emb = TimedEmbedder(HashingEmbedder())
    res: dict[str, Any] = {"embedder": emb.identity.model_id}
    ws = work / "index"
    if p.get("setup_only"):  # --only query: just the index the query figures read
        b = pipeline(corpus, fresh_dir(ws), emb, run_id="setup")
        log(f"structural setup for the query section: {b['docs']} docs, {b['chunks']} chunks in {b['total_s']:.0f} s")
        return {"setup": public(b), "index_dir": str(ws)}
    log("structural: warm-up build")
    pipeline(Path(p["warm_corpus"]), fresh_dir(work / "warm"), emb, run_id="warm")
    shutil.rmtree(work / "warm", ignore_errors=True)

    cold = []
    for r in range(reps):
        b = pipeline(corpus, fresh_dir(ws), emb, run_id=f"cold{r}")
        cold.append(public(b))
        log(f"structural cold {r + 1}/{reps}: {b['total_s']:.1f} s, {b['docs']} docs, {b['chunks']} chunks "
            "(" + ", ".join(f"{k[:-2]} {b[k]:.1f}" for k in STAGES) + ")")
    res["cold"] = cold

    pipeline(corpus, ws, emb, run_id="noop-warm")  # warm-up
    noop = []
    for r in range(reps):
        noop.append(public(pipeline(corpus, ws, emb, run_id=f"noop{r}")))
        log(f"structural no-op {r + 1}/{reps}: {noop[-1]['total_s']:.2f} s, embedded {noop[-1]['embedded']}")
    res["noop"] = noop

    # One changed document: a multi-section prose page (Canon's own wiki pages, else any file).
    prose = _doc_files(corpus, "analytical/wiki") or _doc_files(corpus, "synth") or _doc_files(corpus, "")
    picks = [prose[(i * 7919) % len(prose)] for i in range(reps)]
    changes = []
    for r, path in enumerate(picks):
        doc_id = _front_matter_id(path)
        gen_corpus.mutate_body(path, f"rep{r}")
        b = pipeline(corpus, ws, emb, run_id=f"change{r}", keep_docs=True)
        expected = _chunks_of_doc(b["_documents"], doc_id)
        changes.append({**public(b), "doc_id": doc_id, "expected_embedded": expected,
                        "ok": b["embedded"] == expected})
        log(f"structural one change {r + 1}/{reps}: {b['total_s']:.2f} s, embedded {b['embedded']} "
            f"(its chunks: {expected}), deleted {b['deleted']}")
    res["one_change"] = changes

    # ACL-only: allowed_roles of one document edited (text, status and dates untouched).
    acl_files = _doc_files(corpus, "analytical/metrics") or prose
    acl_picks = [acl_files[(i * 104729 + 3) % len(acl_files)] for i in range(reps)]
    acls = []
    for r, path in enumerate(acl_picks):
        doc_id = _front_matter_id(path)
        gen_corpus.mutate_roles(path, ["analyst", "auditor", f"reviewer_{r}"])
        b = pipeline(corpus, ws, emb, run_id=f"acl{r}", keep_docs=True)
        expected = _chunks_of_doc(b["_documents"], doc_id)
        acls.append({**public(b), "doc_id": doc_id, "expected_rewritten": expected,
                     "ok": b["embedded"] == 0 and b["rewritten_metadata_only"] == expected})
        log(f"structural ACL-only {r + 1}/{reps}: {b['total_s']:.2f} s, embedded {b['embedded']}, "
            f"rewritten {b['rewritten_metadata_only']} (its chunks: {expected})")
    res["acl_only"] = acls

    res["disk_after_cold_and_changes"] = disk_mb(ws)
    res["revocation"] = revocation_check(corpus, ws, emb.inner, b["_documents"])
    log(f"structural revocation: {res['revocation']}")
    res["index_dir"] = str(ws)
    return res


def revocation_check(corpus: Path, ws: Path, emb, docs) -> dict[str, Any]:
    """Ask as the analyst, revoke the object in policy.yml, ask again at once: deny, no publish."""
    policy_path = corpus / "policy.yml"
    original = policy_path.read_text(encoding="utf-8")
    con = registry.connect(ws / "canon.duckdb")
    try:
        served_before = served_revision(con)["revision_id"]
        ctx = AskContext(docs=docs, policy=load_policy(policy_path), con=con,
                         retriever=build_retriever(ws, con, emb, docs))
        chosen = None
        for q, obj, day in governed_questions(docs, 60, 1):
            if ask(ctx, q, ROLE).action == "answer":
                chosen = (q, obj)
                break
        if chosen is None:
            return {"ok": False, "reason": "no governed question answered before the revocation"}
        q, obj = chosen
        before = ask(ctx, q, ROLE).action
        t0 = now()
        gen_corpus.revoke(policy_path, ROLE, object_id=obj, revision="bench-revoked")
        ctx.policy = load_policy(policy_path)       # the live policy, read at query time
        after = ask(ctx, q, ROLE)
        seconds = now() - t0
        served_after = served_revision(con)["revision_id"]
        leaked = obj in json.dumps(after.model_dump(mode="json"))
    finally:
        policy_path.write_text(original, encoding="utf-8")
        con.close()
    return {"question": q, "object_id": obj, "action_before": before, "action_after": after.action,
            "seconds_edit_to_deny": seconds, "republished": served_before != served_after,
            "object_id_in_response": leaked,
            "ok": before != "deny" and after.action == "deny" and served_before == served_after and not leaked}

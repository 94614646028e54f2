"""Section 3, query latency (child side; the figures are bench/figures.py's): warm `ask` split into
its steps, Canon's hybrid `search` (all columns, and ids only as `ask` runs it) and LanceDB's own
hybrid query on the same pinned table, prefilter and candidate depth, interleaved query by query;
optionally the same bare query with an IVF_HNSW_SQ index."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path
from typing import Any

import lancedb

from bench.pipeline import TimedEmbedder, disk_mb, make_embedder
from bench.questions import build_retriever, governed_questions, peer_queries
from bench.settings import CANDIDATES, CONTRACT, ROLE, SEARCH_K, TODAY
from bench.timing import log, now, pct
from bench.workdir import fresh_dir
from canon.ask.answer_log import HeldAnswerLog
from canon.ask.pipeline import RETRIEVE_COLUMNS, AskContext, Timings, ask
from canon.index import publish as index
from canon.index import search as index_search
from canon.index.revisions import served_revision
from canon.index.rows import RETURN_COLUMNS
from canon.registry import store as registry
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.registry.policy import load_policy
from canon.sources.corpus.reader import read_corpus


def bare_hybrid(tbl, text: str, vec, flt: str, cols: list[str], depth: int, k: int):
    """LanceDB's own hybrid query (its RRF reranker) with the same prefilter, columns and depth."""
    return (tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns="text")
            .vector(vec).text(text).distance_type("cosine").where(flt, prefilter=True)
            .select(cols).limit(depth).to_list()[:k])


def case_query(p: dict[str, Any]) -> dict[str, Any]:
    corpus, ws, passes = Path(p["corpus"]), Path(p["ws"]), p["reps"]
    emb = make_embedder("hashing")
    res: dict[str, Any] = {"label": p["label"]}
    if p.get("build"):
        # The big table: read -> gate -> publish (no registry: ask reads the documents it is given).
        fresh_dir(ws)
        t0 = now()
        g = gate(read_corpus(corpus), load_contract(CONTRACT), today=TODAY)
        t1 = now()
        con = registry.connect(ws / "canon.duckdb")
        r = index.publish(con, ws / "lancedb", g.documents, TimedEmbedder(emb), policy_revision="bench",
                          run_id="big")
        con.close()
        t2 = now()
        docs = g.documents
        res["build"] = {"docs": len(docs), "chunks": r.chunks, "read_gate_s": t1 - t0, "publish_s": t2 - t1,
                        "total_s": t2 - t0, **disk_mb(ws)}
        log(f"query[{p['label']}]: built {r.chunks} chunks from {len(docs)} docs in {t2 - t0:.0f} s")
    con = registry.connect(ws / "canon.duckdb")
    if not p.get("build"):
        docs = registry.load_documents(con)
    policy = load_policy(corpus / "policy.yml")
    rev = served_revision(con)
    tbl = lancedb.connect(str(ws / "lancedb")).open_table(rev["lance_table"])
    tbl.checkout(int(rev["lance_version"]))
    res["chunks"] = tbl.count_rows()
    res["docs"] = len(docs)
    # Answers are logged as the context server logs them (canon/serve/state.py: one SQLite
    # connection held between answers), not into the DuckDB registry no serving path writes.
    answer_log = HeldAnswerLog(ws / "answer_log.sqlite")
    ctx = AskContext(docs=docs, policy=policy, con=con, retriever=build_retriever(ws, con, emb, docs),
                     answer_store=answer_log)
    flt = index_search.build_prefilter(ROLE)
    cols = list(RETURN_COLUMNS)

    queries = peer_queries(p["queries"])
    gov = [q for q, _, _ in governed_questions(docs, max(1, p["queries"] // 2), 2)]
    vecs = [emb.embed([q])[0] for q in queries]

    def one_pass(record_actions: bool) -> dict[str, Any]:
        lat: dict[str, list[float]] = {"ask": [], "ask_peer": [], "ask_governed": [], "search": [], "search_ids": [],
                                        "bare": [], "bare_k": []}
        lat["ask_unattributed"] = []   # ask time outside every Timings step
        steps: dict[str, list[float]] = {}
        actions: dict[str, int] = {}
        errors: dict[str, int] = {}
        error_examples: list[str] = []
        overlap = []

        def timed_ask(q: str, bucket: str):
            tm = Timings()
            t0 = now()
            try:
                resp = ask(ctx, q, ROLE, timings=tm)
            except Exception as exc:  # a Canon bug must not stop the benchmark: counted, reported, not timed
                key = f"{type(exc).__name__}: {exc}"[:160]
                errors[key] = errors.get(key, 0) + 1
                if len(error_examples) < 5:
                    error_examples.append(q)
                return
            ms = (now() - t0) * 1000
            lat["ask_unattributed"].append(ms - sum(tm.steps.values()))
            lat["ask"].append(ms)
            lat[bucket].append(ms)
            for s, v in tm.steps.items():
                steps.setdefault(s, []).append(v)
            if record_actions:
                actions[resp.action] = actions.get(resp.action, 0) + 1

        for q, v in zip(queries, vecs):   # interleaved: the three see the same machine state
            t0 = now()
            b = bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)
            lat["bare"].append((now() - t0) * 1000)
            t0 = now()
            bare_hybrid(tbl, q, v, flt, cols, SEARCH_K, SEARCH_K)
            lat["bare_k"].append((now() - t0) * 1000)
            t0 = now()
            hits = index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid")
            lat["search"].append((now() - t0) * 1000)
            t0 = now()   # the hybrid query as ask runs it: served revision pinned once, ids only
            index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid", revision=rev,
                                columns=RETRIEVE_COLUMNS)
            lat["search_ids"].append((now() - t0) * 1000)
            if record_actions:
                a, c = {r["chunk_id"] for r in b}, {h.chunk_id for h in hits}
                overlap.append(len(a & c) / max(1, len(a | c)))
            timed_ask(q, "ask_peer")
        for q in gov:
            timed_ask(q, "ask_governed")
        out = {k: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "mean_ms": statistics.mean(v) if v else None,
                   "n": len(v)} for k, v in lat.items()}
        out["steps"] = {k: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "mean_ms": statistics.mean(v), "n": len(v)}
                        for k, v in sorted(steps.items())}
        out["ask_errors"] = errors
        out["ask_error_examples"] = error_examples
        if record_actions:
            out["actions"] = dict(sorted(actions.items()))
            out["bare_vs_search_jaccard_top10"] = round(statistics.mean(overlap), 3) if overlap else None
        return out

    log(f"query[{p['label']}]: warm-up")
    for q, v in list(zip(queries, vecs))[:5]:
        bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)
        index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid")
        try:
            ask(ctx, q, ROLE)
        except Exception:
            pass  # counted in the timed passes
    runs = []
    for r in range(passes):
        runs.append(one_pass(record_actions=(r == 0)))
        log(f"query[{p['label']}] pass {r + 1}/{passes}: ask p95 {runs[-1]['ask']['p95_ms']:.1f} ms, search p95 "
            f"{runs[-1]['search']['p95_ms']:.1f} ms, bare hybrid p95 {runs[-1]['bare']['p95_ms']:.1f} ms")
    answer_log.close()
    con.close()
    res["passes"] = runs
    res["queries"] = {"peer": len(queries), "governed": len(gov), "examples": queries[:3] + gov[:2]}
    if p.get("ann"):
        res["ann"] = ann_probe(ws, rev, queries, vecs, flt, cols)
    return res


def ann_probe(ws: Path, rev: dict, queries: list[str], vecs, flt: str, cols: list[str]) -> dict[str, Any]:
    """Optional: the same bare hybrid query on a copy of the table with an IVF_HNSW_SQ vector index,
    and how many of the exact (flat) top-10 it keeps."""
    copy = ws.parent / (ws.name + "-ann")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ws / "lancedb", copy)
    tbl = lancedb.connect(str(copy)).open_table(rev["lance_table"])
    tbl.checkout(int(rev["lance_version"]))
    tbl.restore()
    flat, flat_lat = [], []
    for q, v in zip(queries, vecs):
        t0 = now()
        flat.append({r["chunk_id"] for r in bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)})
        flat_lat.append((now() - t0) * 1000)
    t0 = now()
    tbl.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ")
    build_s = now() - t0
    lat, keep = [], []
    for q, v, f in zip(queries, vecs, flat):
        t0 = now()
        got = {r["chunk_id"] for r in bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)}
        lat.append((now() - t0) * 1000)
        keep.append(len(got & f) / max(1, len(f)))
    shutil.rmtree(copy, ignore_errors=True)
    return {"index": "IVF_HNSW_SQ", "build_s": build_s, "flat_bare_hybrid_p95_ms": pct(flat_lat, 95),
            "bare_hybrid_p50_ms": pct(lat, 50),
            "bare_hybrid_p95_ms": pct(lat, 95), "top10_kept_vs_flat": round(statistics.mean(keep), 3)}


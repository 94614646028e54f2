"""What each case's raw result becomes in the report: the figures of every section, with the target
beside each (the cases themselves are bench/limit.py, structural.py, query.py, growth.py, server.py and
metadata.py; the peers' figures are bench/peers.py's). Standard library only: the parent runs it."""

from __future__ import annotations

from typing import Any

from bench.report import Figures
from bench.settings import STAGES
from bench.timing import median, pct


def figures_limit(F: Figures, r: dict[str, Any], real: bool) -> None:
    S = "1 limit"
    load, rss = r["load_before"], r["peak_rss_mb"]
    b = r["builds"]
    tot = [x["total_s"] for x in b]
    F.add("limit.build_docs_per_s", S, f"cold build docs/s ({r['docs']} docs)", [x["docs"] / x["total_s"] for x in b],
          "docs/s", load=load)
    F.add("limit.build_chunks_per_s", S, f"cold build chunks/s ({r['chunks']} chunks)",
          [x["chunks"] / x["total_s"] for x in b], "chunks/s", load=load)
    F.add("limit.model_only_chunks_per_s", S, "model alone, one sorted encode (the limit)",
          [r["texts"] / s for s in r["limit_sorted_s"]], "chunks/s", load=load)
    F.add("limit.model_only_pipeline_order_chunks_per_s", S, "model alone, publish's 64-text groups",
          [r["texts"] / s for s in r["limit_pipeline_order_s"]], "chunks/s", load=load)
    ratio = [s / t for s, t in zip(r["limit_sorted_s"], tot)]
    F.add("limit.ratio_build_over_limit", S, "build / limit throughput", ratio, "x", ">= 0.85",
          median(ratio) is not None and median(ratio) >= 0.85, load=load,
          note="" if real else "HashingEmbedder (--quick): not the real limit")
    # Load-robust form of the same ratio, for a shared machine whose load moves between the build and
    # the limit: limit/build = (limit / model-in-build) x (model-in-build / build). The first factor
    # compares the model with itself (CPU seconds: both are pure torch work on the same threads); the
    # second is measured inside one build, so both terms see the same load.
    robust = [(lc / x["model_cpu_s"]) * (x["model_s"] / x["total_s"])
              for lc, x in zip(r.get("limit_sorted_cpu_s", []), b) if x.get("model_cpu_s")]
    if robust:
        F.add("limit.ratio_build_over_limit_load_robust", S, "same, load-robust (CPU-time model factor)", robust,
              "x", ">= 0.85", median(robust) >= 0.85, load=load,
              note="(limit CPU / model CPU in build) x (model wall / build wall), per repetition")
    ratio2 = [s / t for s, t in zip(r["limit_pipeline_order_s"], tot)]  # first rep only
    F.add("limit.ratio_build_over_pipeline_order", S, "build / model in publish's groups", ratio2, "x", load=load)
    F.add("limit.model_share_of_build", S, "time inside the model during build",
          [x["model_s"] / x["total_s"] for x in b], "share", load=load)
    F.add("limit.non_model_s", S, "build time outside the model", [x["total_s"] - x["model_s"] for x in b], "s",
          load=load, note="median stages: " + ", ".join(
              f"{k[:-2]} {median([x[k] for x in b]):.1f}" for k in ("read_s", "gate_s", "registry_s", "definitions_s")) +
          f", publish w/o model {median([x['publish_s'] - x['model_s'] for x in b]):.1f} s")
    F.add("limit.model_load_s", S, "model load (not in the figures above)", r["model_load_s"], "s", load=load)
    F.add("limit.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss)
    figures_backend(F, r)


def figures_backend(F: Figures, r: dict[str, Any]) -> None:
    """The default backend (int8 ONNX) against the PyTorch model: kept only if the gold sets hold."""
    S = "1 limit"
    load, torch_s = r["load_before"], r.get("torch_sorted_s") or []
    keys = ("limit.backend.torch_chunks_per_s", "limit.backend.speedup_over_torch",
            "limit.backend.cpu_ratio_over_torch", "limit.backend.cosine_to_torch_min", "limit.backend.gold_unchanged")
    if not torch_s:
        for k in keys:
            F.skip(k, S, k.rsplit(".", 1)[1].replace("_", " "), "", "HashingEmbedder run: no backend to compare")
        return
    F.add(keys[0], S, "PyTorch model alone, sorted batches (the baseline)", [r["texts"] / s for s in torch_s],
          "chunks/s", load=load)
    speedup = [t / s for t, s in zip(torch_s, r["limit_sorted_s"])]
    F.add(keys[1], S, "default backend speed-up over PyTorch (wall)", speedup, "x", "> 1", median(speedup) > 1,
          load=load, note=r["model_id"].split(":", 1)[0] + " " + r["model_id"].rsplit(":", 1)[1].split(";")[0])
    F.add(keys[2], S, "PyTorch CPU seconds / default backend CPU seconds",
          [t / s for t, s in zip(r["torch_sorted_cpu_s"], r["limit_sorted_cpu_s"])], "x", load=load)
    cos = r["cosine_to_torch"]
    F.add(keys[3], S, "cosine to the PyTorch vectors, every chunk", cos["min"], "", load=load,
          note=f"p1 {cos['p1']:.4f}, median {cos['median']:.4f}")
    gold = r.get("gold") or {}
    same = all(g["torch"]["action_accuracy"] == g["default"]["action_accuracy"]
               and g["torch"]["recall_at_3"] == g["default"]["recall_at_3"] and not g["gate_default"]
               for g in gold.values())
    F.add(keys[4], S, "gold actions + recall@3, PyTorch vs default", None, "",
          "unchanged, gate passes", bool(gold) and same,
          value=("same" if same else "CHANGED") if gold else "no gold sets",
          note="; ".join(f"{n}: actions {g['torch']['action_accuracy']}/{g['default']['action_accuracy']}, "
                         f"recall@3 {g['torch']['recall_at_3']}/{g['default']['recall_at_3']}"
                         for n, g in gold.items()))


def figures_structural(F: Figures, r: dict[str, Any]) -> None:
    S = "2 structural"
    load, rss = r["load_before"], r["peak_rss_mb"]
    cold, noop = r["cold"], r["noop"]
    cold_s = [x["total_s"] for x in cold]
    F.add("structural.cold_s", S, f"cold build ({cold[0]['docs']} docs, {cold[0]['chunks']} chunks)", cold_s, "s",
          load=load, note="median stages: " + ", ".join(
              f"{k[:-2]} {median([x[k] for x in cold]):.1f}" for k in STAGES))
    F.add("structural.cold_docs_per_s", S, "cold docs/s", [x["docs"] / x["total_s"] for x in cold], "docs/s", load=load)
    F.add("structural.cold_chunks_per_s", S, "cold chunks/s", [x["chunks"] / x["total_s"] for x in cold], "chunks/s",
          load=load)
    noop_s = [x["total_s"] for x in noop]
    F.add("structural.noop_s", S, "no-op rebuild", noop_s, "s", load=load, note="median stages: " + ", ".join(
        f"{k[:-2]} {median([x[k] for x in noop]):.2f}" for k in STAGES))
    ratio = median(noop_s) / median(cold_s)
    F.add("structural.noop_ratio", S, "no-op / cold", ratio, "x", "<= 0.03", ratio <= 0.03, load=load)
    emb = [x["embedded"] for x in noop]
    F.add("structural.noop_embedded", S, "no-op embedded", max(emb), "", "== 0", max(emb) == 0 and all(
        x["noop"] for x in noop), load=load)
    ch = r["one_change"]
    F.add("structural.one_change_s", S, "one changed body: rebuild", [x["total_s"] for x in ch], "s", load=load)
    F.add("structural.one_change_embedded", S, "one changed body: embedded", max(x["embedded"] for x in ch), "",
          "== its chunks (" + "/".join(str(x["expected_embedded"]) for x in ch) + ")", all(x["ok"] for x in ch),
          load=load, note="embedded per rep " + "/".join(str(x["embedded"]) for x in ch))
    acl = r["acl_only"]
    acl_s = [x["total_s"] for x in acl]
    F.add("structural.acl_only_s", S, "ACL-only change: rebuild", acl_s, "s", "<= 10 s (seconds)",
          median(acl_s) <= 10, load=load)
    F.add("structural.acl_only_embedded", S, "ACL-only change: embedded", max(x["embedded"] for x in acl), "",
          "== 0", all(x["ok"] for x in acl), load=load,
          note="rows rewritten " + "/".join(str(x["rewritten_metadata_only"]) for x in acl))
    rv = r["revocation"]
    F.add("structural.revocation_s", S, "policy revocation: edit -> next ask", rv.get("seconds_edit_to_deny"), "s",
          "deny on next ask, no publish", bool(rv.get("ok")), load=load,
          note=f"{rv.get('action_before')} -> {rv.get('action_after')}, republished {rv.get('republished')}")
    d = r.get("disk_after_cold_and_changes") or {}
    F.add("structural.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss,
          note=f"disk after the runs: LanceDB {d.get('lancedb_mb')} MB (all versions), DuckDB {d.get('duckdb_mb')} MB")


def figures_query(F: Figures, r: dict[str, Any], tag: str) -> None:
    S = f"3 query @{r['docs']} docs / {r['chunks']} chunks"
    load, rss = r["load_before"], r["peak_rss_mb"]
    P = r["passes"]

    def series(name: str, q: str) -> list[float]:
        return [x[name][q] for x in P]

    ask95, bare95, search95 = series("ask", "p95_ms"), series("bare", "p95_ms"), series("search", "p95_ms")
    F.add(f"query.{tag}.ask_p50_ms", S, "warm ask p50", series("ask", "p50_ms"), "ms", load=load)
    steps = P[0]["steps"]
    F.add(f"query.{tag}.ask_p95_ms", S, "warm ask p95", ask95, "ms", "<= 50 ms", median(ask95) <= 50, load=load,
          note="p95 per step: " + ", ".join(f"{k} {median([x['steps'][k]['p95_ms'] for x in P if k in x['steps']]):.1f}"
                                            for k in steps) + f", outside steps {median(series('ask_unattributed', 'p95_ms')):.1f}; "
                                              f"actions {P[0].get('actions')}")
    errs = P[0].get("ask_errors") or {}
    if errs:
        F.add(f"query.{tag}.ask_errors", S, "asks that raised (not timed)", sum(errs.values()), "", "== 0", False,
              load=load, note="; ".join(f"{n}x {e}" for e, n in errs.items()) + " e.g. " +
                              " | ".join(P[0].get("ask_error_examples", [])[:2]))
    F.add(f"query.{tag}.search_p95_ms", S, "canon hybrid search p95 (k=10, all 23 columns)", search95, "ms",
          "<= 50 ms", median(search95) <= 50, load=load, note=f"p50 {median(series('search', 'p50_ms')):.1f} ms")
    if all("search_ids" in x for x in P):
        ids95 = series("search_ids", "p95_ms")
        F.add(f"query.{tag}.search_ids_p95_ms", S, "canon hybrid search p95 (k=10, ids only)", ids95,
              "ms", "<= 50 ms", median(ids95) <= 50, load=load,
              note=f"p50 {median(series('search_ids', 'p50_ms')):.1f} ms; the query ask runs: ids only, revision pinned once")
    F.add(f"query.{tag}.bare_hybrid_p95_ms", S, "bare LanceDB hybrid p95 (same filter, depth 40)", bare95, "ms",
          load=load, note=f"p50 {median(series('bare', 'p50_ms')):.1f} ms; at depth 10: p95 "
                          f"{median(series('bare_k', 'p95_ms')):.1f} ms; top-10 Jaccard vs canon "
                          f"{P[0].get('bare_vs_search_jaccard_top10')}")
    ra = [a / b for a, b in zip(ask95, bare95)]
    rs = [a / b for a, b in zip(search95, bare95)]
    F.add(f"query.{tag}.ratio_ask_over_bare_p95", S, "ask p95 / bare hybrid p95", ra, "x", "<= 1.7",
          median(ra) <= 1.7, load=load)
    F.add(f"query.{tag}.ratio_search_over_bare_p95", S, "search p95 / bare hybrid p95", rs, "x", "<= 1.7",
          median(rs) <= 1.7, load=load)
    if tag == "chunks":
        b = r.get("build") or {}
        F.add("query.chunks.build_s", S, f"build of the table ({b.get('docs')} docs; read+gate+publish)",
              b.get("total_s"), "s", load=load,
              note=f"read+gate {b.get('read_gate_s', 0):.0f} s, publish {b.get('publish_s', 0):.0f} s; disk: LanceDB "
                   f"{b.get('lancedb_mb')} MB, DuckDB {b.get('duckdb_mb')} MB")
        if r.get("ann"):
            a = r["ann"]
            F.add("query.chunks.ann_bare_hybrid_p95_ms", S, f"bare hybrid p95 with {a['index']}",
                  a["bare_hybrid_p95_ms"], "ms", load=load,
                  note=f"flat (same probe) {a['flat_bare_hybrid_p95_ms']:.1f} ms; index build {a['build_s']:.0f} s; "
                       f"keeps {a['top10_kept_vs_flat']:.0%} of the flat top-10 (Canon's own revision carries "
                       f"the index canon.index_tuning chooses)")
    F.add(f"query.{tag}.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss)


def figures_growth(F: Figures, runs: list[dict[str, Any]]) -> None:
    S = "6 growth"
    for r in runs:
        n = r["docs"]
        rows = r["rows"]
        F.add(f"growth.{r['n']}.cold_s", S, f"{n} docs: cold build, {r['chunks']} chunks", r["build"]["total_s"], "s",
              load=r["load_before"], rss=r["peak_rss_mb"],
              note=f"LanceDB {r['lancedb_mb']} MB (vectors {r['vectors_mb']:.0f} MB, FTS index {r['fts_index_mb']} MB), "
                   f"DuckDB {r['duckdb_mb']} MB; rows: " + ", ".join(f"{k} {v}" for k, v in rows.items() if v))


def figures_metadata(F: Figures, m: dict[str, Any], load: list[float]) -> None:
    S = "4 metadata"
    cases = {c["case"]: c for c in m["cases"]}
    syn = next(c for c in m["cases"] if c["case"].startswith("synthetic-") and c["column_lineage"])
    F.add("metadata.synthetic_s", S, f"{syn['nodes']}-node manifest -> tables ({syn['edges']} edges)",
          [syn["median_s"]], "s", "<= 10 s", syn["median_s"] <= 10, load=load,
          note=f"min {syn['min_s']} max {syn['max_s']} over {syn['reps']} reps")
    F.add("metadata.synthetic_peak_rss_mb", S, "peak RSS", syn["peak_rss_mb"], "MB", "<= 1024 MB",
          syn["peak_rss_mb"] <= 1024, load=load, rss=syn["peak_rss_mb"])
    for name, c in cases.items():
        if c is syn:
            continue
        F.add(f"metadata.{name}_s", S, f"{name} ({c['manifest_mb']} MB manifest)", [c["median_s"]], "s", "<= 10 s",
              c["ok"], load=load, rss=c["peak_rss_mb"], note=f"peak RSS {c['peak_rss_mb']:.0f} MB")



def figures_cli(F: Figures, r: dict[str, Any]) -> None:
    S = "8 cli"
    runs = r["runs"]
    walls = [x["wall_s"] for x in runs]
    rss = [x["rss_mb"] for x in runs]
    failed = [x for x in runs if x["exit"] != 0]
    actions: dict[str, int] = {}
    for x in runs:
        actions[str(x["action"])] = actions.get(str(x["action"]), 0) + 1
    n = r["documents"]
    note = f"{len(runs)} questions, actions " + ", ".join(f"{k} {v}" for k, v in sorted(actions.items()))
    if r.get("build"):
        note += f"; cold build {r['build']['total_s']:.0f} s ({r['build']['chunks']} chunks)"
    F.add("cli.ask_p95_s", S, f"`canon ask` as a new process at {n} docs: p95 wall", [pct(walls, 95)], "s",
          "< 3 s", pct(walls, 95) < 3.0, load=r["load_before"], note=f"p50 {pct(walls, 50):.2f} s, max "
                                                                   f"{max(walls):.2f} s; {note}")
    F.add("cli.ask_peak_rss_mb", S, "peak RSS of one `canon ask` (max over the questions)", [max(rss)], "MB",
          "< 300 MB", max(rss) < 300, load=r["load_before"], rss=max(rss))
    F.add("cli.ask_errors", S, "asks that did not exit 0", [len(failed)], "runs", "0", not failed,
          load=r["load_before"], note="; ".join(x["stderr"] for x in failed[:2]))


def figures_server(F: Figures, r: dict[str, Any]) -> None:
    """Section 7: the context server over HTTP against in-process ask, same questions, same run."""
    S = f"7 server @{r['docs']} docs / {r['chunks']} chunks"
    load = r["load_before"]
    B = r["blocks"]
    emb = r["embedder"].split(":", 1)[0]
    q = r["questions"]
    F.add("server.in_process_p50_ms", S, "in-process ask p50 (canon ask's context)", [b["in_process_p50_ms"] for b in B],
          "ms", load=load, note=f"{q['n']} governed questions x {len(B)} blocks, role {r['role']}, embedder {emb} "
                                f"(the server's too: the revision's); actions {q['actions']}")
    F.add("server.in_process_p95_ms", S, "in-process ask p95", [b["in_process_p95_ms"] for b in B], "ms", load=load)
    ratio = [b["one_client_p95_ms"] / b["in_process_p95_ms"] for b in B
             if b["one_client_p95_ms"] is not None and b["in_process_p95_ms"]]
    clients = r["clients"]
    for c in sorted(clients, key=int):
        g = clients[c]
        one = c == "1"
        cpu = (f"; CPU per call: server {1000 * g['server_cpu_s'] / max(1, g['answered']):.1f} ms, "
               f"client {1000 * g['client_cpu_s'] / max(1, g['answered']):.1f} ms") if g.get("server_cpu_s") else ""
        F.add(f"server.clients_{c}.answers_per_s", S, f"{c} HTTP client{'s' if not one else ''}: answers/s",
              [b["one_client_answers_per_s"] for b in B] if one else g["answers_per_s"], "answers/s", load=load,
              note=f"{g['answered']}/{g['calls']} answered in {g['wall_s']:.1f} s{cpu}")
        F.add(f"server.clients_{c}.p50_ms", S, f"{c} client{'s' if not one else ''}: p50",
              [b["one_client_p50_ms"] for b in B] if one else g["p50_ms"], "ms", load=load)
        F.add(f"server.clients_{c}.p95_ms", S, f"{c} client{'s' if not one else ''}: p95",
              [b["one_client_p95_ms"] for b in B] if one else g["p95_ms"], "ms", load=load,
              note=f"max {g['max_ms']:.1f} ms" if g.get("max_ms") is not None else "")
    F.add("server.ratio_p95_1_client", S, "server p95 / in-process p95 at 1 client", ratio, "x", "<= 1.5",
          bool(ratio) and median(ratio) <= 1.5, load=load, note="per block: 1-client pass right after an "
                                                                "in-process pass on the same questions")
    top = max(clients, key=int)
    g = clients[top]
    F.add("server.errors_at_max_clients", S, f"errors at {top} clients", g["errors"], "", "== 0", g["errors"] == 0,
          load=load, note="; ".join(f"{n}x {k}" for k, n in g.get("error_kinds", {}).items())
          + (" e.g. " + " | ".join(g["examples"][:2]) if g.get("examples") else ""))
    mism = sum(x["mismatches"] for x in clients.values())
    F.add("server.action_mismatches", S, "server action != in-process action (all calls)", mism, "", "== 0",
          mism == 0, load=load, note=f"{sum(x['calls'] for x in clients.values())} calls")
    F.add("server.server_peak_rss_mb", S, "peak RSS of the server process", r.get("server_peak_rss_mb"), "MB",
          load=load, rss=r.get("server_peak_rss_mb"),
          note=f"the benchmark's own process (in-process ask + clients): {r['peak_rss_mb']:.0f} MB; server start "
               f"{r['server_start_s']:.1f} s")

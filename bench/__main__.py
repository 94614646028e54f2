"""Canon's performance benchmark: `make bench` (the CLI; bench/__init__.py maps the modules).

    .venv/bin/python -m bench [--quick] [--docs 10000] [--real-docs 1000] [--chunks 100000]
                        [--reps 3] [--queries 100] [--seed 42] [--peers] [--only SECTIONS]
                        [--profile]   (`--help` lists every flag)

Sections (`--only limit,structural,...`):
  limit       the real all-MiniLM-L6-v2 (the default: int8 ONNX) on --real-docs documents: cold build
              (read -> gate -> registry -> chunks -> embeddings -> LanceDB publish) against the model
              alone on the exact same embed texts, same threads. Target build/limit >= 0.85. Beside
              it, the same texts on PyTorch (speed-up, CPU ratio, cosine) and both release gold sets
              with each backend: the int8 default holds only while actions and recall@3 are unchanged.
  structural  the deterministic HashingEmbedder on --docs documents: cold build, no-op rebuild
              (<= 3 % of cold, 0 embedded), one changed body (embeds exactly its chunks), an ACL-only
              change (0 embedded, seconds), a policy revocation enforced by the next ask (no publish).
  query       warm `ask` and hybrid search p50/p95 at --docs documents and at --chunks chunks, split
              per ask step, against LanceDB's own hybrid query on the same table, filter and depth.
              Target p95 <= 50 ms and <= 1.7x the bare query.
  metadata    python -m bench.metadata (bench/metadata.py, the 5,500-node manifest): <= 10 s, <= 1 GB.
  growth      one cold build (HashingEmbedder) at 1k / 10k / 50k documents: chunks, store sizes, rows.
  server      `canon serve http` (a subprocess on 127.0.0.1, HashingEmbedder index of --docs documents):
              answers/s and p50/p95 at 1, 8 and 32 concurrent MCP clients (--quick: 1 and 4) asking the
              governed questions, against in-process `ask` on the same questions in the same run.
              Targets: 1-client p95 <= 1.5x in-process p95; no errors (and no action that differs from
              the in-process one) at the most clients.
  cli         `canon ask` as a new process per question at --cli-docs documents (default 100000; one
              cold build with the HashingEmbedder, reused while the corpus is unchanged): p95 wall
              clock and peak RSS per process. Target < 3 s and < 300 MB (bench/cli_scale.py).
  external    artifacts mode end to end on every vendored third-party dbt artifact set
              (tests/fixtures/external): `canon build` as its own process into a fresh home, with the
              default embedder (--external-embedder hashing for a quick pass; --quick uses it): dbt nodes
              -> evidence documents -> chunks, build wall clock and the build process's peak RSS; then on
              tuva-input-layer's served index one definition, lineage and grain question, each a new
              `canon ask` process, timed (bench/external.py).
  peers       only with --peers: dbt-ml 0.8.0 and LlamaIndex via ../shared/bench/*/run_bench.sh on the
              peers' own corpus (gen_synth.py, same N and seed), against Canon on the same files
              (see bench/peers.py). Off by default so `make bench` from a fresh clone stays bounded;
              it installs the peers into their own venvs under $CANON_HOME/bench/peers.

Every case runs in its own child process (peak RSS is per case: the child's ru_maxrss) with a
warm-up before its timed repetitions; figures are medians with min-max spread, and the machine's
load average is recorded beside each case. `--quick` (CI smoke): HashingEmbedder everywhere, 300
documents, 1 repetition, no real model. Writes $CANON_HOME/bench/results.json (CANON_HOME defaults
to <repo>/var) and prints a table with the target beside each figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from bench import cli_asks, external, figures, peers
from bench.child import child_main, run_child
from bench.report import Figures, complete, git_state, print_table
from bench.settings import CHUNKS_PER_DOC, REPO, TODAY, canon_home
from bench.timing import loadavg, log
from bench.workdir import corpus_dir, working_copy

SECTIONS = ("limit", "structural", "query", "metadata", "growth", "server", "cli", "external", "peers")


def parse_args(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    ap = argparse.ArgumentParser(prog="python -m bench", description="Canon performance benchmark (make bench)")
    ap.add_argument("--quick", action="store_true", help="CI smoke: HashingEmbedder only, 300 docs, 1 rep")
    ap.add_argument("--docs", type=int, help="documents for the structural and query figures (default 10000)")
    ap.add_argument("--real-docs", type=int, help="documents for the real-model figures (default 1000)")
    ap.add_argument("--chunks", type=int, help="chunks of the large query table (default 100000)")
    ap.add_argument("--reps", type=int, help="timed repetitions per figure after the warm-up (default 3)")
    ap.add_argument("--queries", type=int, help="peer-style queries per pass (default 100)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--synth-share", type=float, default=0.5, help="share of gen_synth.py documents in the corpus")
    ap.add_argument("--peers", action="store_true", help="also run dbt-ml and LlamaIndex (installs them in their "
                                                         "own venvs under $CANON_HOME/bench/peers)")
    ap.add_argument("--peer-docs-dbtml", type=int, default=5000)
    ap.add_argument("--peer-docs-llamaindex", type=int, default=1000)
    ap.add_argument("--peer-reps", type=int, default=1)
    ap.add_argument("--peers-which", default="llamaindex,dbtml", help="comma-separated: llamaindex,dbtml")
    ap.add_argument("--cli-docs", type=int, help="documents for the cli section (default 100000)")
    ap.add_argument("--ann", action="store_true", help="also probe an IVF_HNSW_SQ vector index on the large table")
    ap.add_argument("--server-calls", type=int, help="ask calls per client at each concurrency above 1 "
                                                     "(default: the number of governed questions)")
    ap.add_argument("--external-embedder", choices=("default", "hashing"),
                    help="embedder of the external section (default: the real model; --quick: hashing)")
    ap.add_argument("--external-sets", help="comma-separated vendored sets for the external section (default: all)")
    ap.add_argument("--only", help="comma-separated sections: limit,structural,query,metadata,growth,server,cli,"
                                   "external,peers")
    ap.add_argument("--profile", action="store_true", help="run the cases under cProfile (slower; profiles go "
                                                           "to $CANON_HOME/bench/profiles/)")
    ap.add_argument("--out", help="results JSON (default $CANON_HOME/bench/results.json)")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    return ap, ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    ap, a = parse_args(argv)
    if a.case:
        return child_main(a.case, json.loads(a.params))

    q = a.quick
    docs = a.docs or (300 if q else 10000)
    real_docs = a.real_docs or (300 if q else 1000)
    chunks = a.chunks or (1000 if q else 100000)
    reps = a.reps or (1 if q else 3)
    nq = a.queries or (20 if q else 100)
    sections = set((a.only or ",".join(SECTIONS)).split(","))
    unknown = sections - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s) in --only: {', '.join(sorted(unknown))}")
    if a.profile:
        os.environ["CANON_BENCH_PROFILE"] = "1"
    home = canon_home()
    work = home / "bench" / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = loadavg()
    git_start = git_state()
    log(f"canon bench: docs {docs}, real-model docs {real_docs} ({'HashingEmbedder' if q else 'all-MiniLM-L6-v2'}), "
        f"large table {chunks} chunks, reps {reps}, queries {nq}, seed {a.seed}; sections {','.join(sorted(sections))}")
    F = Figures()
    raw: dict[str, Any] = {}
    errors: dict[str, str] = {}
    warm = corpus_dir(work, 100 if not q else 30, a.seed + 1, a.synth_share)

    def guarded(name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # one failing section must not hide the others
            errors[name] = f"{type(exc).__name__}: {exc}"
            log(f"section {name} FAILED: {errors[name]}")

    if "limit" in sections:
        def s_limit():
            c = working_copy(corpus_dir(work, real_docs, a.seed, a.synth_share), work / "limit-corpus")
            r = run_child("limit", {"corpus": str(c), "warm_corpus": str(warm), "work": str(work / "limit"),
                                    "reps": reps, "embedder": "hashing" if q else "st"})
            raw["limit"] = r
            figures.figures_limit(F, r, real=not q)
        guarded("limit", s_limit)

    struct_corpus = work / "structural-corpus"
    if "structural" in sections or "query" in sections:
        def s_struct():
            c = working_copy(corpus_dir(work, docs, a.seed, a.synth_share), struct_corpus)
            r = run_child("structural", {"corpus": str(c), "warm_corpus": str(warm), "work": str(work / "structural"),
                                         "reps": reps, "setup_only": "structural" not in sections})
            raw["structural"] = r
            if "structural" in sections:
                figures.figures_structural(F, r)
        guarded("structural", s_struct)

    if "query" in sections:
        def s_query():
            r = run_child("query", {"corpus": str(struct_corpus), "ws": str(work / "structural" / "index"),
                                    "reps": reps, "queries": nq, "label": "docs"})
            raw["query_docs"] = r
            figures.figures_query(F, r, "docs")
            n_big = max(docs, math.ceil(chunks / CHUNKS_PER_DOC))
            c = corpus_dir(work, n_big, a.seed, a.synth_share)
            r = run_child("query", {"corpus": str(c), "ws": str(work / "big" / "index"), "reps": reps,
                                    "queries": nq, "label": "chunks", "build": True, "ann": a.ann})
            raw["query_chunks"] = r
            figures.figures_query(F, r, "chunks")
            if r["chunks"] < chunks:
                log(f"note: the large table holds {r['chunks']} chunks, fewer than the {chunks} asked for")
        guarded("query", s_query)

    if "metadata" in sections:
        def s_meta():
            cmd = [sys.executable, "-m", "bench.metadata", "--reps", str(reps)]
            if q:
                cmd += ["--nodes", "500", "--skip-real"]
            ld = loadavg()
            log("metadata: " + " ".join(cmd[1:]))
            subprocess.run(cmd, check=False, cwd=str(REPO), stdout=sys.stderr)
            m = json.loads((home / "bench" / "metadata.json").read_text())
            raw["metadata"] = m
            figures.figures_metadata(F, m, ld)
        guarded("metadata", s_meta)

    if "growth" in sections:
        def s_growth():
            runs = []
            for n in ((100, 300, 1000) if q else (1000, 10000, 50000)):
                c = corpus_dir(work, n, a.seed, a.synth_share)
                r = run_child("growth", {"corpus": str(c), "ws": str(work / "growth")})
                runs.append({**r, "n": n})
                log(f"growth {n}: {r['chunks']} chunks in {r['build']['total_s']:.1f} s, LanceDB {r['lancedb_mb']} MB, "
                    f"DuckDB {r['duckdb_mb']} MB, peak RSS {r['peak_rss_mb']:.0f} MB")
            raw["growth"] = runs
            figures.figures_growth(F, runs)
        guarded("growth", s_growth)

    if "server" in sections:
        def s_server():
            c = corpus_dir(work, docs, a.seed, a.synth_share)
            n_questions = max(1, nq // 2)
            r = run_child("server", {"corpus": str(c), "home": str(work / "server" / c.name), "reps": reps,
                                     "questions": n_questions, "concurrency": [1, 4] if q else [1, 8, 32],
                                     "calls": a.server_calls or n_questions})
            raw["server"] = r
            figures.figures_server(F, r)
        guarded("server", s_server)

    if "cli" in sections:
        def s_cli():
            n = a.cli_docs or (docs if q else 100000)
            c = corpus_dir(work, n, a.seed, a.synth_share)
            r = run_child("cli", {"corpus": str(c), "ws": str(work / f"cli-{n}"), "questions": 6 if q else 20,
                                  "seed": a.seed})
            r["runs"] = cli_asks.run(r["questions"], str(work / f"cli-{n}"), str(c))
            raw["cli"] = r
            figures.figures_cli(F, r)
        guarded("cli", s_cli)

    if "external" in sections:
        guarded("external", lambda: external.run(
            F, raw, work=work / "external", embedder=a.external_embedder or ("hashing" if q else "default"),
            only=tuple(filter(None, (a.external_sets or "").split(",")))))

    if "peers" in sections and a.peers:
        guarded("peers", lambda: peers.run(F, raw, run_child=run_child, work=work, home=home, seed=a.seed,
                                           n_dbtml=a.peer_docs_dbtml if not q else 300,
                                           n_llama=a.peer_docs_llamaindex if not q else 100,
                                           reps=a.peer_reps, queries=nq, quick=q,
                                           which=tuple(a.peers_which.split(","))))
    else:
        why = ("not requested: peers run only with --peers (they install dbt-ml and LlamaIndex into their own venvs, "
               "~3 GB, and take ~15 min); `make bench` stays bounded from a fresh clone")
        if "peers" in sections:
            log("peers: skipped — " + why)
        peers.skip_all(F, why)

    complete(F, errors)   # failed sections, and the keys of sections not run (status "not run")
    print_table(F)
    load_end = loadavg()
    git_end = git_state()
    print(f"\nload average (1/5/15 min): start {load_start}, end {load_end}; {os.cpu_count()} CPUs")
    print(f"commit {git_start['head'] or '?'}" + (" + uncommitted changes in canon/assets/contracts"
                                                 if git_start["dirty"] else "")
          + ("" if git_end == git_start else f"; CHANGED during the run to {git_end['head']}"
             + (" (dirty)" if git_end["dirty"] else "") + ": figures mix versions"))
    out = {
        "benchmark": "canon", "started_at": started, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.executable).name, "-m", "bench", *(argv if argv is not None else sys.argv[1:])]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_start": load_start, "load_end": load_end},
        "git": {"start": git_start, "end": git_end},
        "params": {"quick": q, "docs": docs, "real_docs": real_docs, "chunks": chunks, "reps": reps, "queries": nq,
                   "seed": a.seed, "synth_share": a.synth_share, "today": TODAY.isoformat(), "peers": a.peers,
                   "sections": sorted(sections)},
        "figures": {r["key"]: r for r in F.rows},
        "missed": [r["key"] for r in F.rows if r["status"] == "MISSED"],
        "errors": errors,
        "cases": raw,
    }
    dest = Path(a.out) if a.out else home / "bench" / "results.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"wrote {dest}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Optional peer runs (`python -m bench --peers`): dbt-ml 0.8.0 and a LlamaIndex
IngestionPipeline, each through its own script in ../shared/bench/<peer>/run_bench.sh, on the
peers' own corpus (dbt-ml's tools/gen_synth.py, same N and seed) and changed by the same tool
(tools/mutate_doc.py) — and Canon on exactly those files, step for step, in the same run.

Like for like: the peers time every step as a new process under /usr/bin/time -v, so Canon's
steps are new processes too, timed by wall clock from here (imports, model load and exit
included); the in-process time of each Canon step is kept beside it. Each Canon step is the case
`peer_step` (bench/pipeline.py), run through the `run_child` the caller passes in (bench/child.py).

  LlamaIndex (default 1,000 docs): Canon with the real all-MiniLM-L6-v2 — cold <= 1.0x, no-op <= 0.5x.
  dbt-ml     (default 5,000 docs): Canon with its deterministic HashingEmbedder (dbt-ml uses its own
             meaningless deterministic vectors) — cold <= 0.25x, no-op and one changed body <= 0.1x;
             Canon's warm `ask` p95 <= 0.5x dbt-ml's hybrid search p95 on the same 100 query strings.

The peers install themselves into their own venvs under $CANON_HOME/bench/peers (PEER_BENCH_HOME),
never into Canon's .venv. dbt-ml needs Python >= 3.12 (found on PATH or through pyenv). When a
peer cannot be installed or run, its figures are reported as skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from bench import gen_corpus
from bench.timing import loadavg, median

SECTION = "5 peers"
PEER_FIGURES = [
    ("peers.llamaindex.ratio_cold", "Canon cold / LlamaIndex cold (real model)", "<= 1.0"),
    ("peers.llamaindex.ratio_noop", "Canon no-op / LlamaIndex no-op", "<= 0.5"),
    ("peers.dbtml.ratio_cold", "Canon (hashing) cold / dbt-ml cold", "<= 0.25"),
    ("peers.dbtml.ratio_noop", "Canon no-op / dbt-ml no-op", "<= 0.1"),
    ("peers.dbtml.ratio_one_change", "Canon one body change / dbt-ml", "<= 0.1"),
    ("peers.dbtml.ratio_ask_p95", "Canon ask p95 / dbt-ml hybrid search p95", "<= 0.5"),
]
BODY_DOC, META_DOC = "doc_00017.md", "doc_00042.md"   # the docs both peers' scripts change


class PeerSkipped(Exception):
    """The peer could not be installed or run here; the message says why."""


def skip_all(F, why: str, prefix: str = "") -> None:
    for key, label, target in PEER_FIGURES:
        if key.startswith(prefix):
            F.skip(key, SECTION, label, target, why)


# ------------------------------------------------------------------ parsing /usr/bin/time -v

def _wall(text: str) -> float:
    m = re.search(r"Elapsed \(wall clock\) time .*: (\S+)", text).group(1).split(":")
    return sum(float(x) * 60 ** i for i, x in enumerate(reversed(m)))


def _rss_mb(text: str) -> float:
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024


def _load(p: Path) -> dict:
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def _steps(out: Path, steps: list[str]) -> dict[str, list[dict[str, Any]]]:
    res: dict[str, list[dict[str, Any]]] = {s: [] for s in steps}
    for tf in sorted(out.glob("rep*_*.time"), key=lambda p: p.name):
        rep, step = tf.stem.split("_", 1)
        if step in res:
            t = tf.read_text()
            res[step].append({"rep": rep, "wall_s": _wall(t), "peak_rss_mb": _rss_mb(t),
                              "stats": _load(out / f"{tf.stem}.json")})
    return res


def _run_script(script: Path, args: list[str], env: dict[str, str], timeout: float) -> str:
    if not script.exists():
        raise PeerSkipped(f"{script} not found (set CANON_SHARED or place ../shared beside the repo)")
    if shutil.which("bash") is None or not Path("/usr/bin/time").exists():
        raise PeerSkipped("the peer scripts need bash and /usr/bin/time (GNU time)")
    print(f"  $ {script} {' '.join(args)}", file=sys.stderr, flush=True)
    try:
        p = subprocess.run(["bash", str(script), *args], env=env, text=True, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired:
        raise PeerSkipped(f"{script.parent.name}: no result within {timeout:.0f} s") from None
    sys.stderr.write(p.stdout[-4000:])
    if p.returncode != 0:
        tail = " | ".join(p.stdout.strip().splitlines()[-3:])
        raise PeerSkipped(f"{script.parent.name}/run_bench.sh exited {p.returncode}: {tail[:300]}")
    return p.stdout


def _python312() -> str | None:
    for cand in ("python3.12", "python3.13"):
        exe = shutil.which(cand)
        if exe and subprocess.run([exe, "-c", "import sys"], capture_output=True).returncode == 0:
            return exe
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for v in sorted(root.glob("3.1[2-9]*"), reverse=True):
        if (v / "bin" / "python3").exists():
            return str(v / "bin" / "python3")
    return None


def _env(peer_home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PEER_BENCH_HOME"] = str(peer_home)
    py = _python312()
    if py:  # dbt-ml's script looks for python3.12 on PATH first
        env["PATH"] = str(Path(py).parent) + os.pathsep + env.get("PATH", "")
    return env


# ------------------------------------------------------------------ Canon on the peers' corpus

def canon_steps(run_child: Callable, work: Path, n: int, seed: int, reps: int, embedder: str,
                ask_queries: int = 0) -> dict[str, Any]:
    """Canon's (a) cold, (b) no-op, (c) one body, (d) one metadata change on gen_synth N SEED, each a new
    process timed by wall clock, optionally followed by the warm ask pass on the result."""
    mutate = gen_corpus.mutate_doc_script()
    out: dict[str, Any] = {s: [] for s in ("a_cold", "b_nochange", "c_body1", "d_meta1")}
    for rep in range(1, reps + 1):
        w = work / f"rep{rep}"
        shutil.rmtree(w, ignore_errors=True)
        docs = gen_corpus.generate_synth_only(w / "docs", n, seed)
        ws = w / "ws"
        ws.mkdir(parents=True)

        def step(label: str) -> None:
            t0 = time.perf_counter()
            r = run_child("peer_step", {"corpus": str(docs), "ws": str(ws), "embedder": embedder,
                                        "run_id": f"{label}-{rep}"})
            r["wall_s"] = time.perf_counter() - t0
            out[label].append(r)
            print(f"  canon {label} rep{rep}: wall {r['wall_s']:.1f} s (in process {r['in_process_s']:.1f} s), "
                  f"embedded {r['embedded']}, RSS {r['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)

        step("a_cold")
        step("b_nochange")
        subprocess.run([sys.executable, str(mutate), str(docs / BODY_DOC), "body", f"rep{rep}"], check=True)
        step("c_body1")
        subprocess.run([sys.executable, str(mutate), str(docs / META_DOC), "meta", f"rep{rep}"], check=True)
        step("d_meta1")
        if ask_queries:
            out.setdefault("ask", []).append(run_child("query", {
                "corpus": str(docs), "ws": str(ws), "reps": 1, "queries": ask_queries, "label": f"peer-dbtml-{rep}"}))
    return out


def _walls(steps: dict[str, list[dict[str, Any]]], s: str) -> list[float]:
    return [x["wall_s"] for x in steps.get(s, [])]


# ------------------------------------------------------------------ the two peers

def run_llamaindex(F, raw: dict, run_child: Callable, work: Path, peer_home: Path, seed: int, n: int, reps: int,
                   queries: int, quick: bool, load: list[float]) -> None:
    script = gen_corpus.shared_dir() / "bench" / "llamaindex" / "run_bench.sh"
    out = peer_home / "llamaindex" / "results" / f"canon-{time.strftime('%Y%m%d-%H%M%S')}"
    _run_script(script, ["-n", str(n), "-r", str(reps), "-s", str(seed), "-q", str(queries), "-o", str(out)],
                _env(peer_home), timeout=3 * 3600)
    peer = _steps(out, ["a_cold", "b_nochange", "c_body1", "d_meta1", "limit", "query"])
    if not peer["a_cold"] or peer["a_cold"][0]["stats"].get("error"):
        raise PeerSkipped(f"LlamaIndex cold run failed: {peer['a_cold'][0]['stats'].get('error') if peer['a_cold'] else 'no output'}")
    canon = canon_steps(run_child, work / "canon-llamaindex", n, seed, reps, "hashing" if quick else "st")
    raw["peers_llamaindex"] = {"peer": peer, "canon": canon, "results_dir": str(out)}
    li_cold, li_noop = median(_walls(peer, "a_cold")), median(_walls(peer, "b_nochange"))
    c_cold, c_noop = median(_walls(canon, "a_cold")), median(_walls(canon, "b_nochange"))
    chunks = peer["a_cold"][0]["stats"].get("chunks_out")
    F.add("peers.llamaindex.cold_s", SECTION, f"LlamaIndex cold, {n} docs ({chunks} chunks)", _walls(peer, "a_cold"),
          "s", load=load, rss=peer["a_cold"][0]["peak_rss_mb"],
          note=f"run() {peer['a_cold'][0]['stats'].get('run_s')} s; peak RSS {peer['a_cold'][0]['peak_rss_mb']:.0f} MB")
    F.add("peers.llamaindex.canon_cold_s", SECTION, f"Canon cold, same files ({canon['a_cold'][0]['chunks']} chunks)",
          _walls(canon, "a_cold"), "s", load=load, rss=canon["a_cold"][0]["peak_rss_mb"],
          note=f"in process {median([x['in_process_s'] for x in canon['a_cold']]):.1f} s; "
               f"peak RSS {canon['a_cold'][0]['peak_rss_mb']:.0f} MB")
    F.add("peers.llamaindex.ratio_cold", SECTION, "Canon cold / LlamaIndex cold (real model)", c_cold / li_cold, "x",
          "<= 1.0", c_cold / li_cold <= 1.0, load=load,
          note="" if not quick else "--quick: Canon used the HashingEmbedder")
    F.add("peers.llamaindex.noop_s", SECTION, "LlamaIndex no-op", _walls(peer, "b_nochange"), "s", load=load)
    F.add("peers.llamaindex.canon_noop_s", SECTION, "Canon no-op", _walls(canon, "b_nochange"), "s", load=load)
    F.add("peers.llamaindex.ratio_noop", SECTION, "Canon no-op / LlamaIndex no-op", c_noop / li_noop, "x", "<= 0.5",
          c_noop / li_noop <= 0.5, load=load)
    for s, label in (("c_body1", "one body change"), ("d_meta1", "status+roles change")):
        pe = peer[s][0]["stats"].get("embedded_texts") if peer[s] else None
        F.add(f"peers.llamaindex.ratio_{s}", SECTION, f"Canon / LlamaIndex, {label}",
              median(_walls(canon, s)) / median(_walls(peer, s)), "x", load=load,
              note=f"LlamaIndex {median(_walls(peer, s)):.1f} s, {pe} embedded; Canon {median(_walls(canon, s)):.1f} s, "
                   f"{canon[s][0]['embedded']} embedded")
    if peer["limit"]:
        lim = peer["limit"][0]["stats"]
        F.add("peers.llamaindex.limit_ratio", SECTION, "LlamaIndex: model alone / run() (its own limit)",
              lim.get("sorted_s", 0) / max(1e-9, peer["a_cold"][0]["stats"].get("run_s", 1)), "x", load=load)
    if peer["query"]:
        qq = peer["query"][0]["stats"].get("hybrid", {})
        F.add("peers.llamaindex.hybrid_p95_ms", SECTION, "LlamaIndex retriever hybrid p95 (top 3)", qq.get("p95_ms"),
              "ms", load=load)


def run_dbtml(F, raw: dict, run_child: Callable, work: Path, peer_home: Path, seed: int, n: int, reps: int,
              queries: int, load: list[float]) -> None:
    script = gen_corpus.shared_dir() / "bench" / "dbt-ml" / "run_bench.sh"
    if _python312() is None:
        raise PeerSkipped("dbt-ml 0.8.0 needs Python >= 3.12 and none was found (PATH or pyenv)")
    out = peer_home / "dbt-ml" / "results" / f"canon-{time.strftime('%Y%m%d-%H%M%S')}"
    _run_script(script, ["-n", str(n), "-r", str(reps), "-s", str(seed), "-q", str(queries), "-o", str(out)],
                _env(peer_home), timeout=3 * 3600)
    peer = _steps(out, ["a_cold", "b_nochange", "c_body1", "d_meta1"])
    search = [_load(p) for p in sorted(out.glob("rep*_search.json"))]
    if not peer["a_cold"]:
        raise PeerSkipped("dbt-ml produced no timing files")
    chunks = [int((out / f"rep{i}_chunks.txt").read_text().strip()) for i in range(1, reps + 1)
              if (out / f"rep{i}_chunks.txt").exists()]
    canon = canon_steps(run_child, work / "canon-dbtml", n, seed, reps, "hashing", ask_queries=queries)
    raw["peers_dbtml"] = {"peer": peer, "search": search, "canon": canon, "results_dir": str(out)}
    d_cold, c_cold = median(_walls(peer, "a_cold")), median(_walls(canon, "a_cold"))
    F.add("peers.dbtml.cold_s", SECTION, f"dbt-ml cold, {n} docs ({chunks[0] if chunks else '?'} chunks)",
          _walls(peer, "a_cold"), "s", load=load, rss=peer["a_cold"][0]["peak_rss_mb"],
          note=f"peak RSS {peer['a_cold'][0]['peak_rss_mb']:.0f} MB")
    F.add("peers.dbtml.canon_cold_s", SECTION, f"Canon cold, same files ({canon['a_cold'][0]['chunks']} chunks)",
          _walls(canon, "a_cold"), "s", load=load, rss=canon["a_cold"][0]["peak_rss_mb"],
          note=f"in process {median([x['in_process_s'] for x in canon['a_cold']]):.1f} s; "
               f"peak RSS {canon['a_cold'][0]['peak_rss_mb']:.0f} MB")
    F.add("peers.dbtml.ratio_cold", SECTION, "Canon (hashing) cold / dbt-ml cold", c_cold / d_cold, "x", "<= 0.25",
          c_cold / d_cold <= 0.25, load=load)
    for s, key, label, target in (("b_nochange", "ratio_noop", "no-op", 0.1),
                                  ("c_body1", "ratio_one_change", "one body change", 0.1),
                                  ("d_meta1", "ratio_meta_change", "status+roles change", None)):
        pv, cv = median(_walls(peer, s)), median(_walls(canon, s))
        F.add(f"peers.dbtml.{key}", SECTION, f"Canon / dbt-ml, {label}", cv / pv, "x",
              f"<= {target}" if target else "", (cv / pv <= target) if target else None, load=load,
              note=f"dbt-ml {pv:.1f} s, Canon {cv:.1f} s (embedded {canon[s][0]['embedded']})")
    d95 = median([s.get("hybrid", {}).get("p95_ms") for s in search])
    c95 = median([r["passes"][0]["ask_peer"]["p95_ms"] for r in canon.get("ask", [])])
    if d95 and c95:
        F.add("peers.dbtml.ratio_ask_p95", SECTION, "Canon ask p95 / dbt-ml hybrid search p95", c95 / d95, "x",
              "<= 0.5", c95 / d95 <= 0.5, load=load,
              note=f"dbt-ml hybrid p95 {d95:.1f} ms (limit 10); Canon ask p95 {c95:.1f} ms on the same {queries} strings")
    else:
        F.skip("peers.dbtml.ratio_ask_p95", SECTION, "Canon ask p95 / dbt-ml hybrid search p95", "<= 0.5",
               "no search latencies from dbt-ml")


def run(F, raw: dict, *, run_child: Callable, work: Path, home: Path, seed: int, n_dbtml: int, n_llama: int,
        reps: int, queries: int, quick: bool, which: tuple[str, ...] = ("llamaindex", "dbtml")) -> None:
    peer_home = Path(os.environ.get("PEER_BENCH_HOME") or home / "bench" / "peers")
    peer_home.mkdir(parents=True, exist_ok=True)
    if gen_corpus.gen_synth_script() is None or gen_corpus.mutate_doc_script() is None:
        skip_all(F, "the peers' corpus tools (../shared/bench/dbt-ml/tools) are not here")
        return
    for name, fn in (("llamaindex", lambda ld: run_llamaindex(F, raw, run_child, work / "peers", peer_home, seed,
                                                                n_llama, reps, queries, quick, ld)),
                     ("dbtml", lambda ld: run_dbtml(F, raw, run_child, work / "peers", peer_home, seed, n_dbtml,
                                                    reps, queries, ld))):
        if name not in which:
            skip_all(F, "not requested (--peers-which)", prefix=f"peers.{name}.")
            continue
        print(f"peers: {name} ...", file=sys.stderr, flush=True)
        try:
            fn(loadavg())
        except PeerSkipped as exc:
            print(f"peers: {name} skipped: {exc}", file=sys.stderr, flush=True)
            skip_all(F, f"skipped: {exc}", prefix=f"peers.{name}.")
            raw[f"peers_{name}"] = {"skipped": str(exc)}

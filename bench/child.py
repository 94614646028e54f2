"""Every case runs in a fresh interpreter (`python -m bench --case NAME --params JSON`), so the peak
RSS a figure reports is that case's own `ru_maxrss`; progress goes to stderr, the result is the last
line of stdout, as JSON.

The parent imports none of Canon: Linux carries a process's peak RSS across `exec`, so whatever the
parent holds would show up in every child's figure. A child imports only its own case's module
(CASE_MODULES, by name), so its peak RSS, and the wall clock of a peer step, carry no other section's
imports."""

from __future__ import annotations

import cProfile
import importlib
import io
import json
import os
import pstats
import subprocess
import sys
from typing import Any

from bench.settings import REPO, canon_home
from bench.timing import loadavg, log, now, peak_rss_mb

# case name -> the module whose `case_<name>(params)` runs it
CASE_MODULES = {"limit": "bench.limit", "structural": "bench.structural", "query": "bench.query",
                "growth": "bench.growth", "server": "bench.server", "peer_step": "bench.pipeline",
                "cli": "bench.cli_scale"}


def child_main(case: str, params: dict[str, Any]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # LanceDB's own hybrid query logs a deprecation warning per sub-query; keep the progress readable.
    os.environ.setdefault("LANCEDB_LOG", "error")
    fn = getattr(importlib.import_module(CASE_MODULES[case]), f"case_{case}")
    load_before = loadavg()
    t0 = now()
    prof = None
    if os.environ.get("CANON_BENCH_PROFILE"):
        prof = cProfile.Profile()
        prof.enable()
    out = fn(params)
    if prof is not None:
        prof.disable()
        dest = canon_home() / "bench" / "profiles" / f"{params.get('label', case)}.txt"
        dest.parent.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("cumulative").print_stats(45)
        st.sort_stats("tottime").print_stats(30)
        dest.write_text(buf.getvalue())
        log(f"profile written to {dest}")
    out.update(case=case, case_wall_s=now() - t0, peak_rss_mb=peak_rss_mb(), load_before=load_before,
               load_after=loadavg())
    print(json.dumps(out, default=str))
    return 0


def run_child(case: str, params: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
    """Run one case in a fresh interpreter; stderr (progress) passes through, stdout's last line is JSON."""
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    cmd = [sys.executable, "-m", "bench", "--case", case, "--params", json.dumps(params)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=str(REPO), env=env, timeout=timeout)
    lines = [x for x in proc.stdout.strip().splitlines() if x.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"case {case} failed (exit {proc.returncode}); see its output above")
    return json.loads(lines[-1])

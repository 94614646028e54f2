"""Benchmark: load dbt artifacts and insert nodes + edges into a DuckDB file.

    .venv/bin/python -m bench.metadata [--nodes 5500] [--reps 5] [--seed 7] [--skip-real]

Cases (each measured in its own child process, bench/metadata_load.py, so peak RSS is per case):
  synthetic-N        bench/gen_manifest.py target dir (manifest v12 + run_results + sources.json),
                     column lineage on (the default)
  synthetic-N-nocol  the same, column lineage off (what the SQL parsing costs)
  tuva-input-layer   the largest real manifest (11.7 MB) with its catalog and run_results

One timed iteration = read_artifacts(...) + CREATE TABLE dbt_nodes / lineage_edges
from the Arrow tables in a fresh DuckDB file. One warm-up iteration is not
counted. Targets: median <= 10 s, peak RSS <= 1 GB. Prints a table and writes
JSON to $CANON_HOME/bench/metadata.json (CANON_HOME defaults to <repo>/var).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import gen_manifest
from bench.settings import REPO, canon_home

TARGET_SECONDS = 10.0
TARGET_RSS_MB = 1024.0


def _shared_external() -> Path:
    env = os.environ.get("CANON_SHARED")
    return (Path(env) if env else REPO.parent / "shared") / "external"


def _summarise(name: str, target: Path, size_mb: float, child: dict, column_lineage: bool) -> dict:
    runs = child["runs"]
    totals = [r["total_s"] for r in runs]
    reads = [r["read_s"] for r in runs]
    inserts = [r["insert_s"] for r in runs]
    med = statistics.median(totals)
    return {
        "case": name, "target_dir": str(target), "manifest_mb": round(size_mb, 2), "column_lineage": column_lineage,
        "reps": len(runs), "median_s": round(med, 3), "min_s": round(min(totals), 3), "max_s": round(max(totals), 3),
        "stdev_s": round(statistics.pstdev(totals), 3),
        "median_read_s": round(statistics.median(reads), 3), "median_insert_s": round(statistics.median(inserts), 3),
        "peak_rss_mb": round(child["peak_rss_mb"], 1),
        "nodes": runs[0]["nodes"], "edges": runs[0]["edges"], "column_edges": runs[0]["column_edges"],
        "governed": runs[0]["governed"], "freshness": runs[0]["freshness"], "run_results": runs[0]["run_results"],
        "target_s": TARGET_SECONDS, "target_rss_mb": TARGET_RSS_MB,
        "ok": med <= TARGET_SECONDS and child["peak_rss_mb"] <= TARGET_RSS_MB,
    }


def _run_child(target: Path, reps: int, column_lineage: bool) -> dict:
    cmd = [sys.executable, "-m", "bench.metadata_load", str(target), "--reps", str(reps)]
    if not column_lineage:
        cmd.append("--no-column-lineage")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=str(REPO))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Canon metadata load benchmark")
    ap.add_argument("--nodes", type=int, default=5500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-real", action="store_true", help="skip the tuva-input-layer case")
    args = ap.parse_args(argv)

    home = canon_home()
    results = []
    with tempfile.TemporaryDirectory(prefix="canon-bench-") as tmp:
        t0 = time.perf_counter()
        paths = gen_manifest.write_target(Path(tmp), args.nodes, args.seed)
        gen_s = time.perf_counter() - t0
        size = paths["manifest"].stat().st_size / 1e6
        print(f"generated synthetic target: {args.nodes} nodes, manifest {size:.1f} MB in {gen_s:.1f} s", flush=True)
        for col in (True, False):
            name = f"synthetic-{args.nodes}" + ("" if col else "-nocol")
            results.append(_summarise(name, Path(tmp), size, _run_child(Path(tmp), args.reps, col), col))
            print(f"  measured {name}", flush=True)
    real = _shared_external() / "tuva-input-layer"
    if not args.skip_real and (real / "manifest.json").exists():
        size = (real / "manifest.json").stat().st_size / 1e6
        results.append(_summarise("tuva-input-layer", real, size, _run_child(real, args.reps, True), True))
        print("  measured tuva-input-layer", flush=True)

    header = (f"{'case':24s} {'MB':>5s} {'nodes':>6s} {'edges':>7s} {'col':>6s} {'median s':>9s} {'min':>6s} "
              f"{'max':>6s} {'read':>6s} {'insert':>6s} {'RSS MB':>7s}  target ≤{TARGET_SECONDS:.0f}s ≤{TARGET_RSS_MB/1024:.0f}GB")
    print()
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r['case']:24s} {r['manifest_mb']:5.1f} {r['nodes']:6d} {r['edges']:7d} {r['column_edges']:6d} "
              f"{r['median_s']:9.2f} {r['min_s']:6.2f} {r['max_s']:6.2f} {r['median_read_s']:6.2f} "
              f"{r['median_insert_s']:6.2f} {r['peak_rss_mb']:7.0f}  {'ok' if r['ok'] else 'MISSED'}")
    out = {
        "benchmark": "metadata", "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "nodes": args.nodes, "seed": args.seed, "reps": args.reps, "warmup": 1, "generate_s": round(gen_s, 2),
        "targets": {"seconds": TARGET_SECONDS, "peak_rss_mb": TARGET_RSS_MB}, "cases": results,
        "ok": all(r["ok"] for r in results),
    }
    dest = home / "bench" / "metadata.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {dest}")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

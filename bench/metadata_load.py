"""One measured case of bench/metadata.py, in a process of its own so its peak RSS is its own:
read_artifacts(...) on a dbt target directory, then CREATE TABLE dbt_nodes / lineage_edges from the
Arrow tables in a fresh DuckDB file; one warm-up iteration, then `--reps` timed ones. Prints one
JSON line.

    .venv/bin/python -m bench.metadata_load TARGET_DIR [--reps 5] [--no-column-lineage]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import duckdb

from canon.sources.dbt.artifacts import read_artifacts


def measure(target: str, reps: int, column_lineage: bool) -> dict:
    """Warm-up + `reps` timed iterations; returns timings and peak RSS."""
    def once(db_path: Path) -> dict:
        t0 = time.perf_counter()
        bundle = read_artifacts(target, column_lineage=column_lineage)
        t1 = time.perf_counter()
        con = duckdb.connect(str(db_path))
        nodes, edges = bundle.nodes, bundle.edges  # noqa: F841 - DuckDB scans the Arrow tables by name
        con.execute("CREATE TABLE dbt_nodes AS SELECT * FROM nodes")
        con.execute("CREATE TABLE lineage_edges AS SELECT * FROM edges")
        n_nodes = con.execute("SELECT count(*) FROM dbt_nodes").fetchall()[0][0]
        n_edges = con.execute("SELECT count(*) FROM lineage_edges").fetchall()[0][0]
        n_col = con.execute("SELECT count(*) FROM lineage_edges WHERE edge_type = 'column'").fetchall()[0][0]
        con.close()
        t2 = time.perf_counter()
        return {"read_s": t1 - t0, "insert_s": t2 - t1, "total_s": t2 - t0, "nodes": n_nodes, "edges": n_edges,
                "column_edges": n_col, "governed": len(bundle.governed), "freshness": len(bundle.freshness),
                "run_results": bundle.run_results.num_rows}

    runs = []
    with tempfile.TemporaryDirectory(prefix="canon-bench-db-") as tmp:
        for i in range(reps + 1):
            r = once(Path(tmp) / f"run{i}.duckdb")
            if i:
                runs.append(r)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"runs": runs, "peak_rss_mb": peak_kb / 1024.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="one measured metadata load (run by bench/metadata.py)")
    ap.add_argument("target", help="a dbt target directory (manifest.json, run_results.json, ...)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-column-lineage", action="store_true")
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.target, args.reps, not args.no_column_lineage)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

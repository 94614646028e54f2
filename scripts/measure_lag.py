"""Measure Canon's revocation lag and index freshness lag end to end.

Works on a temporary copy of $CANON_HOME (run `make run` first) and of the
corpus, so the demo state is never touched:

  1. policy: write a new policy.yml revision with a revoke → evaluate the
     policy sensor (one RunRequest) → run canon_policy_job in process → the
     revocation_lag check is green; prints the lag from the sensor's first
     sighting to the ready index revision that carries the new revision;
  2. documents: edit a knowledge/ document → evaluate the documents sensor →
     run canon_documents_job in process → index_revision_fresh is green;
     prints the lag from the edit to the ready index revision that holds it.

The sensors are evaluated directly (no daemon), so the figures are the
pipeline's own latency; under `make ui` add up to one sensor interval (15 s
for policy, 30 s for documents) and the run launch (a few seconds).

Usage: .venv/bin/python scripts/measure_lag.py [--home DIR] [--corpus DIR] [--keep] [--json]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from canon.core.clock import utcnow  # the repository root is on sys.path from here on


def _copy_workspace(home: Path, corpus: Path, into: Path) -> tuple[Path, Path]:
    if not (home / "canon.duckdb").exists():
        raise SystemExit(f"measure_lag: {home}/canon.duckdb does not exist; run `make run` first "
                         f"(or pass --home to a populated CANON_HOME)")
    new_home, new_corpus = into / "home", into / "corpus"
    # dbt_target is re-creatable and large; the Dagster instance is copied so the sensors' baselines hold.
    shutil.copytree(home, new_home, ignore=shutil.ignore_patterns("dbt_target", "dbt_logs", "*.lock"))
    shutil.copytree(corpus, new_corpus)
    return new_home, new_corpus


def _tick(sensor, instance, cursor):
    import dagster as dg

    data = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, cursor=cursor))
    return list(data.run_requests or []), data.cursor if data.cursor is not None else cursor


def _check(result, name: str):
    for e in result.get_asset_check_evaluations():
        if e.check_name == name:
            return e
    raise SystemExit(f"measure_lag: the run did not evaluate {name}")


def _served(home: Path) -> dict:
    from canon.index.revisions import served_revision
    from canon.registry import store as registry

    con = registry.connect(home / "canon.duckdb", read_only=True)
    try:
        return served_revision(con)
    finally:
        con.close()


def measure(home: Path, corpus: Path) -> dict:
    import dagster as dg

    from definitions import build_definitions

    os.environ.update({"CANON_HOME": str(home), "CANON_CORPUS": str(corpus), "DAGSTER_HOME": str(home / "dagster")})
    from canon_run import ensure_dagster_yaml

    ensure_dagster_yaml(home / "dagster")
    defs = build_definitions()
    policy_sensor = defs.resolve_sensor_def("canon_policy_sensor")
    documents_sensor = defs.resolve_sensor_def("canon_documents_sensor")
    out: dict = {"home": str(home)}
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    with dg.DagsterInstance.get() as instance:
        p_cursor = _tick(policy_sensor, instance, None)[1]
        d_cursor = _tick(documents_sensor, instance, None)[1]

        # 1. policy edit -> sensor -> fast path -> revocation_lag green
        revision = "measure-" + utcnow().strftime("%Y%m%dT%H%M%SZ")
        (corpus / "policy.yml").write_text(
            f'revision: "{revision}"\nrevoke:\n  - role: contractor\n    object_id: "memo.finance.*"\n'
            f'  - role: finance_controller\n    object_id: "memo.finance.*"\n')
        edited = utcnow()
        reqs, p_cursor = _tick(policy_sensor, instance, p_cursor)
        assert len(reqs) == 1, f"policy sensor asked for {len(reqs)} runs"
        assert _tick(policy_sensor, instance, p_cursor)[0] == [], "a second tick asked for another run"
        started = time.monotonic()
        result = defs.resolve_job_def("canon_policy_job").execute_in_process(
            instance=instance, tags=reqs[0].tags, run_config=quiet, raise_on_error=False)
        run_s = time.monotonic() - started
        lag = _check(result, "revocation_lag")
        served = _served(home)
        out["policy"] = {
            "revision": revision, "run_key": reqs[0].run_key, "run_success": result.success,
            "run_seconds": round(run_s, 1), "check_passed": lag.passed,
            "revocation_lag_seconds": lag.metadata["lag_seconds"].value,
            "sla_seconds": lag.metadata["sla_seconds"].value,
            "edit_to_ready_seconds": round((served["ready_at"] - edited).total_seconds(), 1),
            "index_revision": served["revision_id"], "embedded": served["embedded_count"],
        }

        # 2. document edit -> sensor -> documents job -> index_revision_fresh green
        doc = corpus / "runbooks" / "month_end_revenue_close.md"
        doc.write_text(doc.read_text() + f"\nMeasured at {utcnow().isoformat(timespec='seconds')}Z: "
                                         f"re-run the close checklist after any late credit note.\n")
        edited = utcnow()
        reqs, d_cursor = _tick(documents_sensor, instance, d_cursor)
        assert len(reqs) == 1, f"documents sensor asked for {len(reqs)} runs"
        started = time.monotonic()
        result = defs.resolve_job_def("canon_documents_job").execute_in_process(
            instance=instance, tags=reqs[0].tags, run_config=quiet, raise_on_error=False)
        run_s = time.monotonic() - started
        fresh = _check(result, "index_revision_fresh")
        served = _served(home)
        out["documents"] = {
            "run_key": reqs[0].run_key, "run_success": result.success, "run_seconds": round(run_s, 1),
            "check_passed": fresh.passed, "unindexed_after": fresh.metadata["unindexed_revisions"].value,
            "index_freshness_lag_seconds": round((served["ready_at"] - edited).total_seconds(), 1),
            "index_revision": served["revision_id"], "embedded": served["embedded_count"],
            "reused": served["reused_count"],
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", default=os.environ.get("CANON_HOME", str(ROOT / "var")))
    ap.add_argument("--corpus", default=os.environ.get("CANON_CORPUS", str(ROOT / "knowledge")))
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="canon-lag-"))
    try:
        home, corpus = _copy_workspace(Path(args.home).resolve(), Path(args.corpus).resolve(), tmp)
        out = measure(home, corpus)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        p, d = out["policy"], out["documents"]
        print(f"revocation lag        {p['revocation_lag_seconds']:.1f} s  (SLA {p['sla_seconds']:.0f} s; policy "
              f"sensor sighting → ready index revision {p['index_revision']}, {p['embedded']} chunks re-embedded; "
              f"run {p['run_seconds']:.1f} s; check {'green' if p['check_passed'] else 'RED'})")
        print(f"index freshness lag   {d['index_freshness_lag_seconds']:.1f} s  (document edit → ready index "
              f"revision {d['index_revision']}, {d['embedded']} chunk(s) embedded, {d['reused']} reused; "
              f"run {d['run_seconds']:.1f} s; check {'green' if d['check_passed'] else 'RED'})")
        print("(sensors evaluated in process; under the daemon add up to one sensor interval and the run launch)")
        if args.keep:
            print(f"workspace copy        {tmp}")
    ok = out["policy"]["check_passed"] and out["documents"]["check_passed"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

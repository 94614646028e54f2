"""Sensors that turn a change into exactly one run.

Each sensor keeps the content digest of what it watches in its cursor and
asks for a run only when the digest changes; the run key is derived from the
cursor (a change counter plus the digest, or the policy revision), so a tick
that is retried, or evaluated twice, asks for the same run and Dagster starts
it once. While any Canon run is queued or running, a sensor waits (its cursor
does not move) and asks on the first tick after: changes are serialized, and
DuckDB never sees two writer processes.

On its very first tick a sensor has nothing to compare with: it asks for a run
only if the watched files are newer than the last materialization of the
asset they feed (so `make run` followed by `make ui` starts nothing).
"""

from pathlib import Path
from typing import Callable

import dagster as dg

from assets.index import POLICY_FIRST_SEEN_TAG, POLICY_REVISION_TAG
from assets.keys import DBT_TABLE_KEYS, INDEX_KEY, REGISTRY_KEY
from canon.registry.policy import load_policy
from resources.dbt import DBT_PROJECT_DIR
from resources.paths import paths_from_env
from sensors import watch
from sensors.common import (
    TRIGGER_TAG,
    last_materialization,
    read_cursor,
    run_in_progress,
    utc_iso,
    write_cursor,
)

DOCUMENTS_SENSOR = "canon_documents_sensor"
POLICY_SENSOR = "canon_policy_sensor"
DBT_PROJECT_SENSOR = "canon_dbt_project_sensor"
DBT_ARTIFACTS_SENSOR = "canon_dbt_artifacts_sensor"
_MAX_CURSOR_FILES = 5000   # beyond this the cursor keeps only the digest
_KEEP_FIRST_SEEN = 50


def _files_for_cursor(state: watch.TreeState) -> dict[str, str]:
    return {k: v[:16] for k, v in state.files.items()} if state.count <= _MAX_CURSOR_FILES else {}


def _tree_sensor(*, name: str, job, description: str, state_of: Callable[[], watch.TreeState],
                 baseline_key: dg.AssetKey, what: str, interval: int):
    """A sensor over a file tree: one run per new content digest."""

    @dg.sensor(name=name, job=job, minimum_interval_seconds=interval, description=description,
               default_status=dg.DefaultSensorStatus.RUNNING)
    def _sensor(context: dg.SensorEvaluationContext):
        state = state_of()
        cur = read_cursor(context)
        if cur is not None and cur.get("digest") == state.digest:
            return dg.SkipReason(f"no {what} changed ({state.count} files, digest {state.digest[:12]})")
        busy = run_in_progress(context.instance)
        if busy:
            return dg.SkipReason(f"{what} changed; waiting for {busy} to finish")
        if cur is None:
            ts, _ = last_materialization(context.instance, baseline_key)
            if ts is not None and state.newest_mtime <= ts:
                write_cursor(context, {"digest": state.digest, "seq": 0, "files": _files_for_cursor(state)})
                return dg.SkipReason(f"first tick: {state.count} {what} files are older than the last "
                                     f"{baseline_key.to_user_string()} materialization; baseline recorded")
        seq = int((cur or {}).get("seq", 0)) + 1
        change = watch.describe(watch.diff((cur or {}).get("files", {}), _files_for_cursor(state)))
        write_cursor(context, {"digest": state.digest, "seq": seq, "files": _files_for_cursor(state)})
        context.log.info(f"{what} change #{seq}: {change}")
        return dg.RunRequest(
            run_key=f"{what.replace(' ', '-')}-{seq}-{state.digest[:16]}",
            tags={TRIGGER_TAG: name, "canon/digest": state.digest[:16], "canon/change": change[:200]},
        )

    return _sensor


def _document_sources() -> list[Path]:
    return [d.path for d in paths_from_env().documents]


def _policy_file() -> Path:
    return paths_from_env().policy_file


def _dbt_artifacts_dir() -> Path:
    return paths_from_env().canon.dbt_artifacts_dir


def build_documents_sensor(job, *, corpus: Callable[[], Path] | None = None,
                           sources: Callable[[], list[Path]] = _document_sources) -> dg.SensorDefinition:
    """`corpus`: one folder to watch instead of the configured documents sources (tests)."""
    state_of = (lambda: watch.corpus_state(corpus())) if corpus is not None else (
        lambda: watch.documents_state(sources()))
    return _tree_sensor(
        name=DOCUMENTS_SENSOR, job=job, what="documents", interval=30, baseline_key=REGISTRY_KEY,
        state_of=state_of,
        description="Content hashes of the documents of every configured source (`documents`, or $CANON_CORPUS; "
                    "default knowledge/; *.md, *.jsonl, *.json, not policy.yml). A change starts "
                    "canon_documents_job once.",
    )


def build_dbt_project_sensor(job, *, project_dir: Path = DBT_PROJECT_DIR) -> dg.SensorDefinition:
    """`project_dir`: the configured dbt project (dbt.project_dir; the demo's dbt_project/)."""
    return _tree_sensor(
        name=DBT_PROJECT_SENSOR, job=job, what="dbt project", interval=60,
        baseline_key=DBT_TABLE_KEYS["dbt_nodes"],
        state_of=lambda: watch.dbt_project_state(project_dir),
        description=f"Content hashes of the dbt project in {project_dir} (models, YAML, seeds, macros). A model "
                    "change starts canon_dbt_job once: dbt build and everything downstream up to the index.",
    )


def build_dbt_artifacts_sensor(job, *, artifacts_dir: Callable[[], Path] = _dbt_artifacts_dir,
                               where: str = "$CANON_HOME/dbt_artifacts") -> dg.SensorDefinition:
    """New manifest.json / semantic_manifest.json that Canon has not ingested yet (written by a
    dbt run outside Canon): in <home>/dbt_artifacts, or in artifacts mode the configured
    dbt.artifacts_dir (`where` names it in the description)."""
    key = DBT_TABLE_KEYS["dbt_nodes"]

    @dg.sensor(name=DBT_ARTIFACTS_SENSOR, job=job, minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description=f"A new dbt artifact set (manifest.json, semantic_manifest.json) in {where} that is "
                           "newer than canon/dbt_nodes starts canon_artifacts_job once. Artifacts Canon's own "
                           "dbt build wrote are already ingested by the same run and start nothing.")
    def canon_dbt_artifacts_sensor(context: dg.SensorEvaluationContext):
        state = watch.artifacts_state(artifacts_dir())
        cur = read_cursor(context)
        if not state.files:
            return dg.SkipReason("no dbt artifacts published yet")
        if cur is not None and cur.get("digest") == state.digest:
            return dg.SkipReason(f"artifact set unchanged ({state.digest[:12]})")
        busy = run_in_progress(context.instance)
        if busy:
            return dg.SkipReason(f"artifact set changed; waiting for {busy} to finish")
        ts, _ = last_materialization(context.instance, key)
        write_cursor(context, {"digest": state.digest})
        if ts is not None and state.newest_mtime <= ts:
            return dg.SkipReason(f"artifact set {state.digest[:12]} already ingested by "
                                 f"{key.to_user_string()}")
        return dg.RunRequest(run_key=f"dbt-artifacts-{state.digest[:16]}",
                             tags={TRIGGER_TAG: DBT_ARTIFACTS_SENSOR, "canon/digest": state.digest[:16]})

    return canon_dbt_artifacts_sensor


def build_policy_sensor(job, *, policy_file: Callable[[], Path] = _policy_file) -> dg.SensorDefinition:
    @dg.sensor(name=POLICY_SENSOR, job=job, minimum_interval_seconds=15,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="A new policy.yml revision starts canon_policy_job once (the fast path: ACL "
                           "attributes re-projected into the index, nothing re-embedded). The first sighting "
                           "of each revision is the start of its revocation lag.")
    def canon_policy_sensor(context: dg.SensorEvaluationContext):
        path = policy_file()
        sha = watch.file_sha(path) if path.is_file() else "absent"
        cur = read_cursor(context) or {}
        if cur.get("sha") == sha:
            return dg.SkipReason(f"policy.yml unchanged (revision {cur.get('revision')})")
        # A broken policy.yml fails the tick with the file, field and reason: queries fail on it too.
        policy = load_policy(path)
        first_seen = dict(cur.get("first_seen", {}))
        first_seen.setdefault(policy.revision, utc_iso())
        first_seen = dict(sorted(first_seen.items(), key=lambda kv: kv[1])[-_KEEP_FIRST_SEEN:])
        if not cur:
            ts, meta = last_materialization(context.instance, INDEX_KEY)
            if ts is not None and meta.get("policy_revision") == policy.revision:
                write_cursor(context, {"sha": sha, "revision": policy.revision, "first_seen": first_seen})
                return dg.SkipReason(f"first tick: the index already carries policy revision {policy.revision}")
        busy = run_in_progress(context.instance)
        if busy:
            # Remember when the revision was first seen; ask for the run on a later tick.
            write_cursor(context, {**cur, "first_seen": first_seen})
            return dg.SkipReason(f"policy revision {policy.revision} seen; waiting for {busy} to finish")
        write_cursor(context, {"sha": sha, "revision": policy.revision, "first_seen": first_seen})
        return dg.RunRequest(
            run_key=f"policy-{policy.revision}-{sha[:12]}",
            tags={TRIGGER_TAG: POLICY_SENSOR, POLICY_REVISION_TAG: policy.revision,
                  POLICY_FIRST_SEEN_TAG: first_seen[policy.revision]},
        )

    return canon_policy_sensor

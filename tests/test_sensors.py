"""The change sensors, with Dagster's sensor test utilities: a change yields
exactly one RunRequest with a stable run key, no change yields none, and a
sensor waits (cursor unchanged) while a Canon run is in progress."""

import json
import os
import shutil
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest

from assets.keys import DBT_TABLE_KEYS, INDEX_KEY, REGISTRY_KEY
from sensors import watch
from sensors.data_sensors import (
    build_dbt_artifacts_sensor,
    build_dbt_project_sensor,
    build_documents_sensor,
    build_policy_sensor,
)

ROOT = Path(__file__).resolve().parents[1]
JOB = dg.define_asset_job("test_job", selection=[INDEX_KEY])


@pytest.fixture()
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def tick(sensor, instance, cursor=None):
    data = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, cursor=cursor))
    return data.run_requests or [], data.cursor if data.cursor is not None else cursor, data.skip_message


def materialize(instance, key, **metadata):
    instance.report_runless_asset_event(dg.AssetMaterialization(key, metadata=metadata))


def backdate(folder: Path, seconds: float = 3600):
    past = time.time() - seconds
    for p in [folder, *folder.rglob("*")]:
        os.utime(p, (past, past))


@pytest.fixture()
def corpus(tmp_path):
    dst = tmp_path / "corpus"
    shutil.copytree(ROOT / "knowledge", dst)
    return dst


# ------------------------------------------------------------ documents

def test_documents_sensor_one_run_per_content_change(corpus, instance):
    sensor = build_documents_sensor(JOB, corpus=lambda: corpus)
    # First tick, nothing ingested yet: one run.
    reqs, cursor, _ = tick(sensor, instance)
    assert len(reqs) == 1 and reqs[0].run_key.startswith("documents-1-")
    # No change: nothing, and the cursor stays.
    reqs2, cursor2, skip = tick(sensor, instance, cursor)
    assert reqs2 == [] and cursor2 == cursor and "no documents changed" in skip

    # A touch (new mtime, same bytes) is not a change: content hashes decide.
    wiki = corpus / "wiki" / "net_revenue_legacy.md"
    os.utime(wiki, None)
    assert tick(sensor, instance, cursor)[0] == []
    # Neither is a policy edit (that is the policy sensor's).
    (corpus / "policy.yml").write_text('revision: "x"\n')
    assert tick(sensor, instance, cursor)[0] == []

    wiki.write_text(wiki.read_text() + "\nOne more sentence.\n")
    reqs3, cursor3, _ = tick(sensor, instance, cursor)
    assert len(reqs3) == 1
    key = reqs3[0].run_key
    assert key.startswith("documents-2-") and key != reqs[0].run_key
    assert reqs3[0].tags["canon/trigger"] == "canon_documents_sensor"
    assert "wiki/net_revenue_legacy.md" in reqs3[0].tags["canon/change"]
    # Stable: the same tick evaluated again (a retried tick) asks for the same run.
    assert [r.run_key for r in tick(sensor, instance, cursor)[0]] == [key]
    # After it, nothing more.
    assert tick(sensor, instance, cursor3)[0] == []

    # Reverting the edit is a change too, with a new key (the counter moves on).
    wiki.write_text(wiki.read_text().replace("\nOne more sentence.\n", ""))
    reqs4, _, _ = tick(sensor, instance, cursor3)
    assert len(reqs4) == 1 and reqs4[0].run_key.startswith("documents-3-")
    # Added and removed files count.
    (corpus / "wiki" / "new_page.md").write_text("---\ndoc_id: x\n---\nbody\n")
    assert len(tick(sensor, instance, cursor3)[0]) == 1


def test_documents_sensor_first_tick_baseline_after_make_run(corpus, instance):
    backdate(corpus)
    materialize(instance, REGISTRY_KEY)            # `make run` ingested these files
    sensor = build_documents_sensor(JOB, corpus=lambda: corpus)
    reqs, cursor, skip = tick(sensor, instance)
    assert reqs == [] and cursor and "baseline" in skip
    (corpus / "runbooks" / "month_end_revenue_close.md").write_text("changed\n")
    assert len(tick(sensor, instance, cursor)[0]) == 1


def test_sensors_wait_while_a_canon_run_is_in_progress(corpus, instance):
    sensor = build_documents_sensor(JOB, corpus=lambda: corpus)
    _, cursor, _ = tick(sensor, instance)
    (corpus / "wiki" / "net_revenue_legacy.md").write_text("edited\n")
    run = dg.DagsterRun(job_name="canon_main", run_id=str(uuid.uuid4()), status=dg.DagsterRunStatus.STARTED)
    instance.add_run(run)
    reqs, cursor_busy, skip = tick(sensor, instance, cursor)
    assert reqs == [] and cursor_busy == cursor and "waiting for run" in skip
    instance.delete_run(run.run_id)
    assert len(tick(sensor, instance, cursor)[0]) == 1


# ------------------------------------------------------------ policy

def test_policy_sensor_one_run_per_revision(corpus, instance):
    policy = corpus / "policy.yml"
    sensor = build_policy_sensor(JOB, policy_file=lambda: policy)
    # The index already carries the live revision: the first tick only records a baseline.
    materialize(instance, INDEX_KEY, policy_revision="2026-11-20T10:00:00Z")
    reqs, cursor, skip = tick(sensor, instance)
    assert reqs == [] and "already carries" in skip
    assert tick(sensor, instance, cursor)[0] == []

    policy.write_text('revision: "2026-12-01T09:00:00Z"\nrevoke:\n  - role: finance_controller\n'
                      '    object_id: "memo.finance.*"\n')
    reqs, cursor2, _ = tick(sensor, instance, cursor)
    assert len(reqs) == 1
    req = reqs[0]
    assert req.run_key.startswith("policy-2026-12-01T09:00:00Z-")
    assert req.tags["canon/policy_revision"] == "2026-12-01T09:00:00Z"
    assert req.tags["canon/policy_first_seen"].endswith("Z")
    assert [r.run_key for r in tick(sensor, instance, cursor)[0]] == [req.run_key]   # stable
    assert tick(sensor, instance, cursor2)[0] == []                                   # exactly one


def test_policy_sensor_remembers_first_sighting_while_waiting(corpus, instance):
    policy = corpus / "policy.yml"
    sensor = build_policy_sensor(JOB, policy_file=lambda: policy)
    _, cursor, _ = tick(sensor, instance)
    policy.write_text('revision: "r9"\n')
    run = dg.DagsterRun(job_name="canon_documents_job", run_id=str(uuid.uuid4()),
                        status=dg.DagsterRunStatus.STARTING)
    instance.add_run(run)
    reqs, cursor_wait, skip = tick(sensor, instance, cursor)
    assert reqs == [] and "r9 seen; waiting" in skip
    time.sleep(1.1)
    instance.delete_run(run.run_id)
    reqs, _, _ = tick(sensor, instance, cursor_wait)
    assert len(reqs) == 1
    # The lag starts at the first sighting, not at the tick that could start the run.
    assert reqs[0].tags["canon/policy_first_seen"] == json.loads(cursor_wait)["first_seen"]["r9"]


def test_policy_sensor_fails_the_tick_on_a_broken_policy(corpus, instance):
    policy = corpus / "policy.yml"
    policy.write_text("revision: [unclosed\n")
    sensor = build_policy_sensor(JOB, policy_file=lambda: policy)
    with pytest.raises(Exception, match="policy.yml"):
        tick(sensor, instance)


# ------------------------------------------------------------ dbt

def test_dbt_project_sensor_one_run_per_model_change(tmp_path, instance):
    project = tmp_path / "dbt_project"
    shutil.copytree(ROOT / "dbt_project", project, ignore=shutil.ignore_patterns("target", "logs"))
    sensor = build_dbt_project_sensor(JOB, project_dir=project)
    _, cursor, _ = tick(sensor, instance)
    assert tick(sensor, instance, cursor)[0] == []
    # dbt's own output folders are not the project.
    (project / "target").mkdir()
    (project / "target" / "manifest.json").write_text("{}")
    assert tick(sensor, instance, cursor)[0] == []
    model = project / "models" / "marts" / "fct_revenue_v2.sql"
    model.write_text(model.read_text() + "\n-- a comment is a change of the model file\n")
    reqs, cursor2, _ = tick(sensor, instance, cursor)
    assert len(reqs) == 1 and reqs[0].run_key.startswith("dbt-project-")
    assert "models/marts/fct_revenue_v2.sql" in reqs[0].tags["canon/change"]
    assert tick(sensor, instance, cursor2)[0] == []


def _write_artifacts(folder: Path, invocation: str):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text('{"metadata": {"invocation_id": "%s"}, "nodes": {}}' % invocation)
    (folder / "semantic_manifest.json").write_text('{"semantic_models": [], "metrics": []}')


def test_dbt_artifacts_sensor_ingests_new_sets_once(tmp_path, instance):
    store = tmp_path / "dbt_artifacts"
    sensor = build_dbt_artifacts_sensor(JOB, artifacts_dir=lambda: store)
    assert "no dbt artifacts" in tick(sensor, instance)[2]
    _write_artifacts(store, "inv-1")
    reqs, cursor, _ = tick(sensor, instance)
    assert len(reqs) == 1 and reqs[0].run_key.startswith("dbt-artifacts-")
    assert tick(sensor, instance, cursor)[0] == []

    # A set that Canon's own run already ingested (canon/dbt_nodes materialized after it) starts nothing.
    _write_artifacts(store, "inv-2")
    backdate(store, 60)
    materialize(instance, DBT_TABLE_KEYS["dbt_nodes"])
    reqs, cursor2, skip = tick(sensor, instance, cursor)
    assert reqs == [] and "already ingested" in skip

    # A set published later by a dbt run outside Canon: one run.
    _write_artifacts(store, "inv-3")
    reqs, cursor3, _ = tick(sensor, instance, cursor2)
    assert [r.run_key for r in reqs] == ["dbt-artifacts-" + watch.artifacts_state(store).digest[:16]]
    assert tick(sensor, instance, cursor3)[0] == []


def test_tree_digest_is_content_based(tmp_path):
    (tmp_path / "a.md").write_text("x")
    (tmp_path / ".hidden.md").write_text("ignored")
    (tmp_path / "b.txt").write_text("ignored")
    s1 = watch.corpus_state(tmp_path)
    assert list(s1.files) == ["a.md"]
    os.utime(tmp_path / "a.md", (1, 1))
    assert watch.corpus_state(tmp_path).digest == s1.digest
    (tmp_path / "a.md").write_text("y")
    assert watch.corpus_state(tmp_path).digest != s1.digest
    assert watch.corpus_state(tmp_path / "missing").files == {}

"""`canon init`, `canon doctor` and `canon build` as a team calls them
(canon/cli/setup.py, docs/contracts.md "Configuration"): init writes a commented
canon.yml the loader reads, doctor says what it resolves to and names every
problem's file and key (exit 2), and build runs the configured main job
headless, here in artifacts mode on a vendored third-party artifact set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from canon.core.settings import ENV_CONFIG, ENV_KEYS

ROOT = Path(__file__).resolve().parents[1]
CANON = str(Path(sys.executable).with_name("canon"))


def canon(*args, cwd: Path, config: Path | None = None, timeout: int = 900, **env):
    clean = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    clean.update({ENV_CONFIG: str(config)} if config else {})
    clean.update(env)
    return subprocess.run([CANON, *args], capture_output=True, text=True, env=clean, cwd=cwd, timeout=timeout)


@pytest.fixture()
def project(tmp_path):
    shop = tmp_path / "shop"
    shutil.copytree(ROOT / "dbt_project", shop, ignore=shutil.ignore_patterns("target", "logs"))
    return shop


@pytest.fixture()
def artifacts(external_dir, tmp_path):
    target = tmp_path / "ci" / "target"
    shutil.copytree(external_dir / "jaffle-shop-duckdb", target)
    return target


def test_init_writes_a_configuration_the_loader_reads(project, tmp_path):
    out = canon("init", "--dbt-project", str(project), "--out", "conf/canon.yml", "--default-roles", "analyst,finance",
                cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    written = tmp_path / "conf" / "canon.yml"
    text = written.read_text()
    assert text.startswith("# Canon's configuration") and "# documents:" in text   # commented, for people
    assert yaml.safe_load(text) == {"home": "var", "dbt": {"project_dir": "../shop"},
                                    "default_roles": ["analyst", "finance"]}
    doctor = canon("doctor", cwd=tmp_path / "conf", config=written)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    lines = doctor.stdout
    assert "mode           project" in lines and f"home           {tmp_path / 'conf' / 'var'}" in lines
    assert f"dbt project    {project} (profiles {project}, target the profile default" in lines
    assert "dbt manifest   none parsed yet" in lines and "default roles  analyst, finance" in lines
    assert "release gate   none configured" in lines and "problems       none" in lines
    again = canon("init", "--dbt-project", str(project), "--out", "conf/canon.yml", cwd=tmp_path)
    assert again.returncode == 2 and "already exists; pass --force" in again.stderr


def test_init_refuses_what_is_not_dbt(tmp_path):
    out = canon("init", "--dbt-project", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and f"{tmp_path} [--dbt-project]: no dbt_project.yml here" in out.stderr
    out = canon("init", "--dbt-artifacts", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and "no manifest.json here" in out.stderr
    out = canon("init", cwd=tmp_path)
    assert out.returncode == 2 and "one of the arguments --dbt-project --dbt-artifacts is required" in out.stderr


def test_doctor_on_a_vendored_artifact_set(artifacts, tmp_path):
    assert canon("init", "--dbt-artifacts", str(artifacts), "--documents", str(ROOT / "knowledge"),
                 cwd=tmp_path).returncode == 0
    config = tmp_path / "canon.yml"
    out = canon("doctor", cwd=tmp_path, config=config)
    # No default_roles yet: init leaves the choice to the team, and doctor names the key.
    assert out.returncode == 2 and "canon: error: 1 problem(s) in the configuration" in out.stderr
    assert f"  ✗ {config} [default_roles]: missing" in out.stdout
    assert "mode           artifacts" in out.stdout
    assert f"dbt manifest   {artifacts / 'manifest.json'}: dbt 1.11.16, manifest schema v12" in out.stdout
    assert ("dbt nodes      0 metric, 0 semantic_model, 0 saved_query, 5 model, 3 seed, 0 snapshot, 0 source, "
            "0 exposure; 0 with meta.canon") in out.stdout
    assert "(absent: sources.json)" in out.stdout
    assert f"documents      {ROOT / 'knowledge'} (documents[0]; contract knowledge@1.0.0" in out.stdout
    assert f"policy         {ROOT / 'knowledge' / 'policy.yml'} (revision " in out.stdout
    config.write_text(config.read_text().replace("# default_roles: [analyst]", "default_roles: [analyst]"))
    out = canon("doctor", "--json", cwd=tmp_path, config=config)
    assert out.returncode == 0, out.stdout
    report = json.loads(out.stdout)
    assert report["mode"] == "artifacts" and report["problems"] == [] and report["default_roles"] == ["analyst"]
    assert report["dbt"]["counts"]["model"] == 5 and report["dbt"]["artifacts"]["catalog.json"] is True


def test_doctor_names_every_problem_with_its_file_and_key(artifacts, tmp_path):
    manifest = json.loads((artifacts / "manifest.json").read_text())
    manifest["metadata"]["dbt_schema_version"] = "https://schemas.getdbt.com/dbt/manifest/v99.json"
    (artifacts / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "policy.yml").write_text("revokes: []\n")
    config = tmp_path / "canon.yml"
    config.write_text(f"dbt: {{artifacts_dir: {artifacts}}}\ndocuments: [missing]\npolicy: policy.yml\n"
                      "release_gate: {gold: [nope.json]}\n")
    out = canon("doctor", cwd=tmp_path, config=config)
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr
    problems = [line for line in out.stdout.splitlines() if line.startswith("  ✗ ")]
    assert problems == [
        f"  ✗ {config} [default_roles]: missing: a team's dbt evidence needs the roles that may read nodes "
        "without meta.canon.allowed_roles (there is no default), e.g. `default_roles: [analyst]`",
        f"  ✗ {config} [release_gate.gold[0].file]: gold file {tmp_path / 'nope.json'} does not exist",
        f"  ✗ {artifacts / 'manifest.json'} [metadata.dbt_schema_version]: unsupported manifest schema version v99 "
        "(https://schemas.getdbt.com/dbt/manifest/v99.json); Canon reads v5..v12",
        f"  ✗ {config} [documents[0].path]: {tmp_path / 'missing'} does not exist",
        f"  ✗ {tmp_path / 'policy.yml'} [revokes]: unknown key: a policy has only 'revision' and 'revoke', a "
        "revoke rule only 'role', 'doc_id' and 'object_id'",
    ]


def test_a_bad_configuration_stops_every_command_with_the_key(tmp_path):
    config = tmp_path / "canon.yml"
    config.write_text("dbt: {projekt_dir: shop}\n")
    for args in (("build",), ("resolve", "metric.x", "--role", "analyst")):
        out = canon(*args, cwd=tmp_path, config=config)
        assert out.returncode == 2, args
        assert out.stderr.strip().startswith(f"canon: error: {config} [dbt.projekt_dir]: unknown key"), out.stderr


def test_build_in_artifacts_mode_on_a_vendored_set(artifacts, tmp_path):
    """`canon build` end to end (about 30 s), then `canon ask`: the progress, the event log, the summary,
    the tables, and an answer from the team's own artifacts."""
    config = tmp_path / "canon.yml"
    config.write_text(f"home: state\ndbt: {{artifacts_dir: {artifacts}}}\ndefault_roles: [analyst]\n")
    out = canon("build", cwd=tmp_path, config=config, CANON_EMBEDDER="hashing")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"Canon artifacts configuration from {config}, home {tmp_path / 'state'}"
    step = next(line for line in lines if "dbt_artifact_tables" in line)
    assert step.startswith("  ✓ dbt_artifact_tables") and " s  canon/dbt_nodes 28 rows, canon/lineage_edges" in step
    assert any(line.startswith("  ✓ canon__knowledge_index ") for line in lines)
    assert not any("dbt_models" in line or "raw_loaders" in line for line in lines)   # dbt never ran here
    assert any(line.startswith("Canon main job succeeded in ") for line in lines)
    assert "dbt nodes      5 model, 3 seed, 20 test; 60 lineage edges" in lines
    assert any(line.startswith("release gate   none configured") for line in lines)
    [log] = (tmp_path / "state" / "logs").glob("canon_main-*.log")
    assert f"event log      {log}" in lines and "RUN_START" in log.read_text()
    con = duckdb.connect(str(tmp_path / "state" / "canon.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM dbt_nodes").fetchone()[0] == 28
    finally:
        con.close()
    assert not (tmp_path / "state" / "dbt_target" / "manifest.json").exists()   # nothing parsed
    # The team's nodes are evidence for default_roles, and every command reads the same configuration.
    assert "registry       8 documents (8 model_schema)" in lines
    ask = canon("ask", "What is the grain of the customers model?", "--role", "analyst", "--json", cwd=tmp_path,
                config=config, CANON_EMBEDDER="hashing")
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer["action"] == "answer" and "Grain: one row per customer_id" in answer["answer"]
    assert [e["doc_id"] for e in answer["evidence"] if e["use"] == "primary"] == ["model.jaffle_shop.customers"]


def test_build_in_project_mode_runs_the_teams_dbt_outside_its_folder(tmp_path):
    """`canon build` on a small dbt project of its own (a seed and a model, dbt-duckdb; about 1.5 min):
    dagster-dbt builds it, and dbt's target, logs and everything it prints stay under the home."""
    shop = tmp_path / "shop"
    (shop / "seeds").mkdir(parents=True)
    (shop / "models").mkdir()
    (shop / "dbt_project.yml").write_text('name: shop\nversion: "1.0.0"\nprofile: shop\n')
    (shop / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: \"{{ env_var('SHOP_WAREHOUSE') }}\"}\n")
    (shop / "seeds" / "raw_customers.csv").write_text("id,name\n1,Ada\n2,Grace\n")
    (shop / "models" / "customers.sql").write_text("select id as customer_id, name from {{ ref('raw_customers') }}\n")
    (shop / "models" / "schema.yml").write_text(
        "version: 2\nmodels:\n  - name: customers\n    columns:\n      - name: customer_id\n"
        "        tests: [unique, not_null]\n")
    before = sorted(p.relative_to(shop) for p in shop.rglob("*"))
    config = tmp_path / "canon.yml"
    config.write_text("home: state\ndbt: {project_dir: shop}\ndefault_roles: [analyst]\n")
    out = canon("build", cwd=tmp_path, config=config, CANON_EMBEDDER="hashing",
                SHOP_WAREHOUSE=str(tmp_path / "warehouse.duckdb"))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"Canon project configuration from {config}, home {tmp_path / 'state'}"
    assert any(line.startswith("  ✓ dbt_models ") for line in lines)
    assert "dbt nodes      1 model, 1 seed, 2 test; 5 lineage edges" in lines
    assert not any("Running with dbt" in line for line in lines)   # dbt's own output went to the log
    [log] = (tmp_path / "state" / "logs").glob("canon_main-*.log")
    assert "Running with dbt" in log.read_text()
    assert sorted(p.relative_to(shop) for p in shop.rglob("*")) == before   # no target/, no logs/ in the project
    assert (tmp_path / "state" / "dbt_artifacts" / "manifest.json").is_file()
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM customers").fetchone()[0] == 2
    finally:
        con.close()


def test_a_reader_that_closes_the_pipe_gets_no_traceback(artifacts, tmp_path):
    """`canon doctor | head -1`: the reader goes away before Canon has written; Canon stops quietly."""
    assert canon("init", "--dbt-artifacts", str(artifacts), "--default-roles", "analyst",
                 cwd=tmp_path).returncode == 0
    clean = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    proc = subprocess.Popen([CANON, "doctor"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**clean, ENV_CONFIG: str(tmp_path / "canon.yml")})
    proc.stdout.close()   # before the first line: every write of Canon's meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err

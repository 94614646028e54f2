"""A team's documents without dbt (canon/core/settings.py, documents mode): a configuration
file with `documents` and no `dbt` keys is neither the demo (no raw loaders, no demo dbt
project, no demo gate) nor a dbt mode (no artifact tables, no default_roles needed). Several
plain folders under one contract build as one source; `release_gate.gold` is the gate, and
without it the summary says there is none. `canon build` runs headless, as tests/test_cli_setup.py
runs it in artifacts mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import definitions
from canon.core.settings import ENV_CONFIG, ENV_KEYS, load_settings

ROOT = Path(__file__).resolve().parents[1]
CANON = str(Path(sys.executable).with_name("canon"))
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
BODY = "How the finance team closes the month: reconcile refunds, then credit notes, then sign off."


def _page(path: Path, doc_id: str, title: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndoc_id: {doc_id}\nobject_id: wiki.team.{doc_id}\nkind: wiki\ntitle: {title}\n"
                    "status: approved\nauthority: 50\nversion: '1'\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n"
                    f"---\n{BODY} ({title})\n")


@pytest.fixture()
def team(tmp_path):
    """Two teams' folders, the same file name in both: the handbook plain Markdown without front
    matter, the runbooks Canon's format; one team contract whose `defaults` say what plain pages are."""
    (tmp_path / "handbook").mkdir()
    (tmp_path / "handbook" / "index.md").write_text(f"# Finance handbook\n\n{BODY}\n")
    _page(tmp_path / "ops" / "runbooks" / "index.md", "wiki.runbooks", "Finance runbooks")
    _page(tmp_path / "ops" / "runbooks" / "close.md", "runbook.close", "Month-end close")
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "team.yml").write_text(
        (ROOT / "contracts" / "knowledge.yml").read_text().replace("contract: knowledge", "contract: team")
        .replace("system: corpus", "system: team")
        + "defaults: {kind: wiki, status: approved, authority: 40, version: '1', valid_from: 2026-01-01, "
          "allowed_roles: [analyst], id_prefix: handbook.}\n")
    return tmp_path


TEAM_DOCUMENTS = ("[{path: handbook, contract: contracts/team.yml}, "
                  "{path: ops/runbooks, contract: contracts/team.yml}]")


def _canon(*args: str, cwd: Path, config: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    env.update({ENV_CONFIG: str(config), "CANON_EMBEDDER": "hashing"})
    return subprocess.run([CANON, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)


def _defs(monkeypatch, config: Path):
    for var in (ENV_CONFIG, *ENV_KEYS):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(ENV_CONFIG, str(config))
    return definitions.build_definitions()


def test_documents_alone_is_its_own_mode(team, monkeypatch):
    config = team / "canon.yml"
    config.write_text("documents: [handbook, ops/runbooks]\n")   # no dbt keys, no default_roles
    s = load_settings({ENV_CONFIG: str(config)})
    assert s.mode == "documents" and not s.runs_dbt and not s.has_dbt and s.dbt_project_dir is None
    assert [d.path for d in s.documents] == [team / "handbook", team / "ops" / "runbooks"]
    assert s.release_gate == ()   # the demo's gold sets are the demo's
    defs = _defs(monkeypatch, config)
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert keys == {"canon/evidence_registry", "canon/definitions", "canon/knowledge_index"}
    assert set(repo.job_names) - {"__ASSET_JOB"} == {"canon_main", "canon_documents_job", "canon_policy_job",
                                                     "canon_forget", "canon_migrate", "canon_rollback"}
    assert "canon_dbt_artifacts_sensor" not in {s.name for s in repo.sensor_defs}
    assert "dbt" not in repo.get_top_level_resources() and "raw_db" not in repo.get_top_level_resources()


def test_build_with_a_release_gate_and_two_folders_under_one_contract(team):
    """`canon build` (about 30 s): both folders are one source under the team's contract, each page
    under its folder's label, the plain page with the contract's defaults; the team's gold set is
    the gate and it runs."""
    config = team / "canon.yml"
    config.write_text(f"home: state\ndocuments: {TEAM_DOCUMENTS}\n"
                      f"release_gate: {{gold: [{{file: {DOSSIER / 'gold.json'}, corpus: {DOSSIER / 'corpus.jsonl'}, "
                      "name: dossier}]}\n")
    out = _canon("build", cwd=team, config=config)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0] == f"Canon documents configuration from {config}, home {team / 'state'}"
    assert not any("dbt_artifact_tables" in line or "dbt_models" in line or "raw" in line.split()[:2]
                   for line in lines)
    assert any(line.startswith("  ✓ canon__eval_report ") for line in lines)
    assert "dbt            none configured (no dbt keys: the documents alone)" in lines
    assert "registry       3 documents (3 wiki)" in lines and "quarantine     0 document(s) held back" in lines
    assert "release gate   dossier 11/11 passed, recall@3 1.0, leaks 0" in lines
    for object_id, doc_id in (("wiki.team.runbook.close", "runbook.close"), ("handbook.handbook/index", None)):
        resolved = _canon("resolve", object_id, "--role", "analyst", "--json", cwd=team, config=config)
        assert resolved.returncode == 0, resolved.stderr
        assert '"action": "answer"' in resolved.stdout and f'"doc_id": "{doc_id or object_id}"' in resolved.stdout


def test_build_without_a_gate_says_there_is_none(team):
    config = team / "canon.yml"
    config.write_text("home: state\ndocuments: [ops/runbooks]\n")
    out = _canon("build", cwd=team, config=config)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert not any(line.startswith("  ✓ canon__eval_report") for line in lines)
    assert "release gate   none configured (release_gate.gold in the configuration): no eval_report asset" in lines


def test_a_bad_documents_entry_stops_build_and_doctor_with_the_key(team):
    config = team / "canon.yml"
    config.write_text("home: state\ndocuments: [handbook, missing]\n")
    out = _canon("build", cwd=team, config=config)
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr
    assert out.stderr.strip() == f"canon: error: {config} [documents[1].path]: {team / 'missing'} does not exist"
    doctor = _canon("doctor", cwd=team, config=config)
    assert doctor.returncode == 2 and f"  ✗ {config} [documents[1].path]: {team / 'missing'} does not exist" in \
        doctor.stdout.splitlines()
    config.write_text("home: state\ndocuments: [ops, ops/runbooks]\n")
    out = _canon("build", cwd=team, config=config)
    assert out.returncode == 2 and f"{config} [documents[1].path]: {team / 'ops' / 'runbooks'} (documents[1]) is " \
        f"inside {team / 'ops'} (documents[0])" in out.stderr

"""The configuration (canon/core/settings.py, docs/contracts.md "Configuration"):
the file named by CANON_CONFIG, every key, paths relative to the file,
environment variables over it, and every error a CanonInputError naming the
file and the dotted key. With neither file nor variables the configuration is
the demo, exactly the paths Canon used before there was a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from canon.core import config
from canon.core.errors import CanonInputError
from canon.core.settings import (
    DEFAULT_CONTRACT,
    ENV_KEYS,
    inspect_settings,
    load_settings,
    missing_documents,
)

ROOT = Path(__file__).resolve().parents[1]
VARS = ("CANON_CONFIG", *ENV_KEYS)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture()
def team(tmp_path):
    """A team's folder: a dbt project with profiles.yml, artifacts, documents, a contract, gold."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    (tmp_path / "proj" / "profiles.yml").write_text("shop: {target: dev, outputs: {dev: {type: duckdb}}}\n")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "profiles.yml").write_text("shop: {target: prod, outputs: {prod: {type: duckdb}}}\n")
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "manifest.json").write_text("{}")
    (tmp_path / "docs").mkdir()
    (tmp_path / "notes.jsonl").write_text("")
    (tmp_path / "contracts").mkdir()
    shutil.copy(DEFAULT_CONTRACT, tmp_path / "contracts" / "notes.yml")
    (tmp_path / "gold.json").write_text("[]")
    return tmp_path


def write(folder: Path, text: str, name: str = "canon.yml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def use(monkeypatch, path: Path) -> None:
    monkeypatch.setenv("CANON_CONFIG", str(path))


def error() -> CanonInputError:
    with pytest.raises(CanonInputError) as exc:
        load_settings()
    return exc.value


def test_no_configuration_is_the_demo_exactly_as_before():
    s = load_settings()
    assert s.mode == "demo" and s.config_file is None
    assert s.home == ROOT / "var"
    assert s.dbt_project_dir == s.dbt_profiles_dir == ROOT / "dbt_project" and s.dbt_target is None
    assert s.dbt_artifacts_dir is None
    assert [(d.path, d.contract) for d in s.documents] == [(ROOT / "knowledge", DEFAULT_CONTRACT)]
    assert s.policy == ROOT / "knowledge" / "policy.yml"
    assert [g.name for g in s.release_gate] == ["dossier", "hard"]
    assert s.default_roles == ()
    # The old API reads the same configuration.
    assert config.CanonPaths.from_env().home == ROOT / "var"
    assert config.CanonPaths.from_env().dbt_artifacts_dir == ROOT / "var" / "dbt_artifacts"
    assert config.corpus_dir() == ROOT / "knowledge" and config.policy_path() == ROOT / "knowledge" / "policy.yml"


def test_the_variables_of_today_keep_their_meaning(monkeypatch, tmp_path):
    monkeypatch.setenv("CANON_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("CANON_CORPUS", str(tmp_path))
    assert config.CanonPaths.from_env().home == tmp_path / "h"
    assert config.corpus_dir() == tmp_path and config.policy_path() == tmp_path / "policy.yml"
    monkeypatch.setenv("CANON_POLICY", str(tmp_path / "elsewhere.yml"))
    assert config.policy_path() == tmp_path / "elsewhere.yml"
    assert load_settings().mode == "demo"


def test_every_key_relative_to_the_file(monkeypatch, team, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(cwd)   # relative paths follow the file, not the working directory
    use(monkeypatch, write(team, """
home: state
dbt:
  project_dir: proj
  profiles_dir: profiles
  target: prod
documents:
  - docs
  - {path: notes.jsonl, contract: contracts/notes.yml}
policy: docs/policy.yml
default_roles: [analyst, finance]
release_gate:
  gold:
    - gold.json
    - {file: gold.json, corpus: notes.jsonl, name: notes}
"""))
    s = load_settings()
    assert s.mode == "project" and s.config_file == team / "canon.yml"
    assert s.home == team / "state"
    assert (s.dbt_project_dir, s.dbt_profiles_dir, s.dbt_target) == (team / "proj", team / "profiles", "prod")
    assert [(d.path, d.contract, d.key) for d in s.documents] == [
        (team / "docs", DEFAULT_CONTRACT, "documents[0]"),
        (team / "notes.jsonl", team / "contracts" / "notes.yml", "documents[1]")]
    assert s.policy == team / "docs" / "policy.yml"
    assert s.default_roles == ("analyst", "finance")
    assert [(g.name, g.corpus, g.gold, g.contract) for g in s.release_gate] == [
        ("gold", team / "docs", team / "gold.json", DEFAULT_CONTRACT),
        ("notes", team / "notes.jsonl", team / "gold.json", team / "contracts" / "notes.yml")]
    assert config.CanonPaths.from_env().home == team / "state"


def test_defaults_of_a_team_file(monkeypatch, team):
    use(monkeypatch, write(team, "dbt: {artifacts_dir: target}\ndefault_roles: analyst\n"))
    s = load_settings()
    assert s.mode == "artifacts" and s.dbt_artifacts_dir == team / "target"
    assert s.home == team / "var"                  # beside the file, never the demo's home
    assert s.documents == () and s.release_gate == ()   # no demo documents, no demo gold gate
    assert s.policy == team / "policy.yml"
    assert s.default_roles == ("analyst",)
    assert config.CanonPaths.from_env().dbt_artifacts_dir == team / "target"   # read in place
    assert not s.runs_dbt and s.dbt_project_dir is None


def test_the_profiles_default_to_the_project(monkeypatch, team):
    use(monkeypatch, write(team, "dbt: {project_dir: proj}\ndefault_roles: [analyst]\n"))
    s = load_settings()
    assert s.dbt_profiles_dir == team / "proj" and s.dbt_target is None


def test_variables_override_the_file(monkeypatch, team, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "dbt_project.yml").write_text("name: other\n")
    (other / "profiles.yml").write_text("other: {}\n")
    use(monkeypatch, write(team, """
home: state
dbt: {project_dir: proj, target: dev}
documents: [docs]
policy: docs/policy.yml
default_roles: [analyst]
"""))
    monkeypatch.chdir(other)   # variables are relative to the working directory
    monkeypatch.setenv("CANON_HOME", "h")
    monkeypatch.setenv("CANON_CORPUS", str(team / "notes.jsonl"))
    monkeypatch.setenv("CANON_POLICY", "p.yml")
    monkeypatch.setenv("CANON_DBT_PROJECT_DIR", ".")
    monkeypatch.setenv("CANON_DBT_PROFILES_DIR", str(team / "profiles"))
    monkeypatch.setenv("CANON_DBT_TARGET", "prod")
    s = load_settings()
    assert s.home == other / "h" and s.policy == other / "p.yml"
    assert [(d.path, d.key) for d in s.documents] == [(team / "notes.jsonl", "CANON_CORPUS")]
    assert (s.dbt_project_dir, s.dbt_profiles_dir, s.dbt_target) == (other, team / "profiles", "prod")
    assert dict(s.origins)["home"] == "CANON_HOME" and dict(s.origins)["dbt.target"] == "CANON_DBT_TARGET"


def test_an_artifacts_variable_beside_a_project_file_is_both_modes(monkeypatch, team):
    use(monkeypatch, write(team, "dbt: {project_dir: proj}\ndefault_roles: [analyst]\n"))
    monkeypatch.setenv("CANON_DBT_ARTIFACTS_DIR", str(team / "target"))
    err = error()
    assert err.field == "dbt.project_dir, CANON_DBT_ARTIFACTS_DIR" and "both are set" in err.reason


def test_both_modes_in_the_file(monkeypatch, team):
    use(monkeypatch, write(team, "dbt: {project_dir: proj, artifacts_dir: target}\ndefault_roles: [a]\n"))
    err = error()
    assert err.path == str(team / "canon.yml") and err.field == "dbt.project_dir, dbt.artifacts_dir"
    assert str(err).startswith(f"{team / 'canon.yml'} [dbt.project_dir, dbt.artifacts_dir]: both are set")


@pytest.mark.parametrize("text, key, reason", [
    ("dbt: {artifacts_dir: target}\n", "default_roles", "missing: a team's dbt evidence needs the roles"),
    ("dbt: {project_dir: proj}\n", "default_roles", "missing"),
    ("dbt: {project_dir: proj}\ndefault_roles: []\n", "default_roles", "is empty"),
    ("dbt: {project_dir: proj}\ndefault_roles: [' analyst']\n", "default_roles", "whitespace"),
    ("dbt: {projekt_dir: proj}\n", "dbt.projekt_dir", "unknown key"),
    ("homes: var\n", "homes", "unknown key"),
    ("documents: [{path: docs, contracts: x.yml}]\n", "documents[0].contracts", "unknown key"),
    ("dbt: {project_dir: docs}\ndefault_roles: [a]\n", "dbt.project_dir", "holds no dbt_project.yml"),
    ("dbt: {project_dir: nowhere}\ndefault_roles: [a]\n", "dbt.project_dir", "is not a folder"),
    ("dbt: {artifacts_dir: docs}\ndefault_roles: [a]\n", "dbt.artifacts_dir", "holds no manifest.json"),
    ("dbt: {project_dir: proj, profiles_dir: docs}\ndefault_roles: [a]\n", "dbt.profiles_dir", "no profiles.yml"),
    ("dbt: {project_dir: proj, target: ''}\ndefault_roles: [a]\n", "dbt.target", "is empty"),
    ("dbt: {target: dev}\n", "dbt.target", "applies only with dbt.project_dir"),
    ("dbt: {project_dir: proj, target: 3}\ndefault_roles: [a]\n", "dbt.target", "valid string"),
    ("documents: [{path: docs, contract: missing.yml}]\n", "documents[0].contract", "does not exist"),
    ("documents: [docs, docs]\n", "documents[1].path", "is listed twice (also documents[0])"),
    ("documents: [.]\nhome: state\n", "documents[0].path", "holds the home"),
    ("documents: [docs, docs/inner]\n", "documents[1].path", "is inside"),
    ("documents: [docs/inner, docs]\n", "documents[1].path", "its files would be read twice"),
    ("documents: [canon.yml]\n", "documents[0].path", "must be .jsonl, .json or .md"),
    ("documents: docs\n", "documents", "valid list"),
    ("policy: docs\n", "policy", "is a folder"),
    ("home: canon.yml\n", "home", "is a file"),
    ("release_gate: {gold: [absent.json]}\n", "release_gate.gold[0].file", "does not exist"),
    ("release_gate: {gold: [gold.json]}\ndbt: {artifacts_dir: target}\ndefault_roles: [a]\n",
     "release_gate.gold[0].corpus", "no corpus"),
    ("release_gate: {gold: []}\n", "release_gate.gold", "is empty"),
    ("release_gate: {gold: [gold.json, gold.json]}\n", "release_gate.gold[1].name", "configured twice"),
    ("calendar: {fiscal_year_start: 13}\n", "calendar.fiscal_year_start", "13 is no month"),
    ("calendar: {fiscal_year_start: Smarch}\n", "calendar.fiscal_year_start", "'Smarch' is no month"),
    ("calendar: {fiscal_year_start: ju}\n", "calendar.fiscal_year_start", "is no month"),
    ("calendar: {fiscal_year_start: 7, fiscal_year_named_by: middle}\n", "calendar.fiscal_year_named_by",
     "write end (FY2027 ends in 2027) or start"),
    ("calendar: {fiscal_year_named_by: end}\n", "calendar.fiscal_year_start", "Field required"),
    ("calendar: {fiscal_year_start: 7, fiscal_year_begins: 1}\n", "calendar.fiscal_year_begins", "unknown key"),
])
def test_each_problem_names_the_file_and_the_key(monkeypatch, team, text, key, reason):
    use(monkeypatch, write(team, text))
    err = error()
    assert err.path == str(team / "canon.yml") and err.field == key, str(err)
    assert reason in err.reason


def test_the_profiles_of_a_project_without_profiles_yml(monkeypatch, team):
    (team / "proj" / "profiles.yml").unlink()
    use(monkeypatch, write(team, "dbt: {project_dir: proj}\ndefault_roles: [a]\n"))
    err = error()
    assert err.field == "dbt.profiles_dir" and "holds no profiles.yml" in err.reason


@pytest.mark.parametrize("text, reason", [
    ("dbt: [unclosed\n", "invalid YAML: line 2"),
    ("home: a\nhome: b\n", "duplicate key 'home'"),
    ("- a\n- b\n", "a configuration is a YAML mapping of keys, got list"),
    ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n"
                                                  for p, c in zip("abcdefgh", "bcdefghi")),
     "aliases expand to more than 100000"),
    ("x: " + "[" * 100 + "]" * 100 + "\n", "nested more than 64 levels deep"),
])
def test_bad_yaml_is_an_error_naming_the_file(monkeypatch, team, text, reason):
    use(monkeypatch, write(team, text))
    err = error()
    assert err.path == str(team / "canon.yml") and reason in err.reason, str(err)


def test_a_missing_or_unreadable_file(monkeypatch, team):
    use(monkeypatch, team / "absent.yml")
    assert "configuration file does not exist" in error().reason
    (team / "bad.yml").write_bytes(b"home: \xff\n")
    use(monkeypatch, team / "bad.yml")
    assert "not UTF-8" in error().reason


def test_every_problem_is_reported_at_once(monkeypatch, team):
    use(monkeypatch, write(team, "dbt: {project_dir: proj, artifacts_dir: target}\npolicy: docs\n"))
    _, problems = inspect_settings()
    assert {p.key for p in problems} == {"dbt.project_dir, dbt.artifacts_dir", "policy", "default_roles"}
    err = error()
    assert "(also: " in err.reason and "[policy]" in err.reason


def test_a_documents_folder_that_does_not_exist_yet(monkeypatch, team):
    use(monkeypatch, write(team, "documents: [later]\n"))
    s = load_settings()   # not a configuration error: the build reports it, doctor lists it
    assert [(p.key, p.reason) for p in missing_documents(s)] == [
        ("documents[0].path", f"{team / 'later'} does not exist")]


def test_a_changed_file_is_read_again(monkeypatch, team):
    use(monkeypatch, write(team, "home: one\n"))
    assert load_settings().home == team / "one"
    write(team, "home: two-two\n")
    st = (team / "canon.yml").stat()
    os.utime(team / "canon.yml", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert load_settings().home == team / "two-two"


@pytest.mark.parametrize("text, month, named_by", [
    ("calendar: {fiscal_year_start: 7}\n", 7, "end"),
    ("calendar: {fiscal_year_start: February, fiscal_year_named_by: start}\n", 2, "start"),
    ("calendar: {fiscal_year_start: oct}\n", 10, "end"),
])
def test_the_fiscal_calendar_of_a_file(monkeypatch, team, text, month, named_by):
    use(monkeypatch, write(team, "documents: [docs]\n" + text))
    s = load_settings()
    assert (s.calendar.start_month, s.calendar.named_by) == (month, named_by)
    assert dict(s.origins)["calendar"] == str(team / "canon.yml")


def test_no_calendar_key_is_no_fiscal_calendar(monkeypatch, team):
    use(monkeypatch, write(team, "documents: [docs]\n"))
    assert load_settings().calendar is None

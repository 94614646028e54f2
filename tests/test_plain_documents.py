"""Plain folders of Markdown without Canon's front matter (canon/registry/defaults.py): a source
contract's `defaults` says what their pages are, so several such folders under one contract become
evidence with ids from their paths and titles from their headings; what a page states wins. Under a
contract without `defaults` such a page is quarantined, as before."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import check_upgrade, contract_from_dict, load_contract

ROOT = Path(__file__).resolve().parents[1]
KNOWLEDGE = ROOT / "contracts" / "knowledge.yml"
TODAY = dt.date(2026, 11, 30)
DEFAULTS = {"kind": "wiki", "status": "approved", "authority": 40, "version": 1, "valid_from": dt.date(2026, 1, 1),
            "allowed_roles": "analyst", "id_prefix": "wiki."}


def team_contract(**defaults):
    data = yaml.safe_load(KNOWLEDGE.read_text())
    data.update(contract="team_docs", source={**data["source"], "system": "team_docs"},
                defaults={**DEFAULTS, **defaults})
    return contract_from_dict(data, path="team_docs.yml")


def _plain(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture()
def folders(tmp_path):
    handbook, runbooks = tmp_path / "handbook", tmp_path / "ops" / "runbooks"
    _plain(handbook / "Onboarding guide.md", "# Onboarding for analysts\n\nNew analysts get access to the finance "
                                             "marts after the data-handling course.\n")
    _plain(handbook / "index.md", "Welcome to the finance handbook: how the team works, who owns which model.\n")
    _plain(runbooks / "index.md", "# Runbooks\n\nEvery runbook of the finance team, one page per recurring task.\n")
    _plain(runbooks / "close.md", "---\ndoc_id: runbook.close\nstatus: draft\ntitle: Month-end close\n---\n"
                                  "Reconcile refunds, then credit notes, then sign the close off with the controller.\n")
    return handbook, runbooks


def _live(con) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in con.execute(
        "SELECT doc_id, object_id, title, kind, status, authority, version, valid_from, allowed_roles, source_uri "
        "FROM documents WHERE deleted_at IS NULL ORDER BY doc_id").fetchall()}


def test_plain_folders_under_one_contract_become_evidence(folders, tmp_path):
    handbook, runbooks = folders
    contract = team_contract()
    con = registry.connect(tmp_path / "canon.duckdb")
    build = build_registry(con, documents=[(handbook, contract), (runbooks, contract)], run_id="r1", today=TODAY)
    assert [(q.source_uri, q.reasons) for q in build.quarantined] == []
    live = _live(con)
    assert set(live) == {"wiki.handbook/Onboarding-guide", "wiki.handbook/index", "wiki.runbooks/index",
                         "runbook.close"}
    onboarding = live["wiki.handbook/Onboarding-guide"]
    assert onboarding[:8] == ("wiki.handbook/Onboarding-guide", "Onboarding for analysts", "wiki", "approved", 40, "1",
                              dt.date(2026, 1, 1), ["analyst"])
    assert onboarding[8] == "handbook/Onboarding guide.md"
    assert live["wiki.handbook/index"][1] == "index"             # no heading: the file's name
    assert live["wiki.runbooks/index"][1] == "Runbooks"
    # what a page states wins over the contract's defaults
    close = live["runbook.close"]
    assert close[:4] == ("runbook.close", "Month-end close", "wiki", "draft")
    assert build_registry(con, documents=[(handbook, contract), (runbooks, contract)], run_id="r2",
                          today=TODAY).diffs["team_docs"].new == []
    con.close()


def test_without_defaults_a_page_without_front_matter_is_quarantined(folders, tmp_path):
    handbook, _ = folders
    con = registry.connect(tmp_path / "canon.duckdb")
    build = build_registry(con, documents=[(handbook, load_contract(KNOWLEDGE))], run_id="r1", today=TODAY)
    assert sorted((q.source_uri, q.reasons) for q in build.quarantined) == [
        ("Onboarding guide.md", ["no YAML front matter (the file must start with a '---' line)"]),
        ("index.md", ["no YAML front matter (the file must start with a '---' line)"])]
    assert _live(con) == {}
    con.close()


def test_defaults_still_pass_the_gate(tmp_path):
    """The defaults fill keys; the contract's rules still judge the result."""
    _plain(tmp_path / "docs" / "short.md", "Too short.\n")
    _plain(tmp_path / "docs" / "mail.md", "Questions about the close go to jane.doe@example.com every month.\n")
    con = registry.connect(tmp_path / "canon.duckdb")
    build = build_registry(con, documents=[(tmp_path / "docs", team_contract(status="final"))], run_id="r1",
                           today=TODAY)
    reasons = {q.source_uri: " ".join(q.reasons) for q in build.quarantined}
    assert "shorter than min_body_chars" in reasons["short.md"] and "field status" in reasons["short.md"]
    assert "PII found" in reasons["mail.md"]
    con.close()


@pytest.mark.parametrize("defaults, field", [({"kindd": "wiki"}, "defaults.kindd"),
                                             ({"authority": 200}, "defaults.authority")])
def test_a_bad_defaults_key_names_its_field(defaults, field):
    data = yaml.safe_load(KNOWLEDGE.read_text())
    data["defaults"] = defaults
    with pytest.raises(CanonInputError) as exc:
        contract_from_dict(data, path="team_docs.yml")
    assert exc.value.field == field


def test_loosening_who_reads_the_defaults_is_a_major_change():
    old = team_contract()
    data = old.model_dump(mode="json", by_alias=True)
    data["version"] = "1.1.0"
    data["defaults"]["allowed_roles"] = ["analyst", "contractor"]
    refusals = check_upgrade(old, contract_from_dict(data))
    assert any("defaults.allowed_roles loosened (added contractor)" in r for r in refusals)

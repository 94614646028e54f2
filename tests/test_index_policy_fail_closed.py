"""The knowledge index never projects a vanished or broken policy as "no revocations".

Queries deny while the live policy is unavailable (tests/test_policy_fail_closed.py);
the index build must not publish a revision whose copied ACL dropped the revocations
either: the `knowledge_index` asset fails with the file and the reason, and the
revision served before keeps serving.
"""

from __future__ import annotations

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from assets.index import knowledge_index
from canon.ask.context import make_embedder
from canon.index import revisions as index_revisions
from canon.ops import checks as ops_checks
from canon.registry import store as registry
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.paths import paths_from_env
from tests.test_ops_checks import REVOKE_MEMO, Workspace


def _materialize(ws: Workspace, monkeypatch) -> dg.ExecuteInProcessResult:
    monkeypatch.setenv("CANON_HOME", str(ws.paths.home))
    monkeypatch.setenv("CANON_CORPUS", str(ws.corpus))
    monkeypatch.setenv("CANON_OPENLINEAGE_TRANSPORT", "none")
    ws.con.close()   # dagster-duckdb opens the file with its own config
    try:
        return dg.materialize(
            [knowledge_index],
            resources={"canon_db": DuckDBResource(database=str(ws.paths.canon_db)),
                       "embedder": EmbedderResource(provider="hashing"),
                       "lineage": OpenLineageResource(), "paths": paths_from_env()},
            raise_on_error=False,
        )
    finally:
        ws.con = registry.connect(ws.paths.canon_db)


@pytest.fixture()
def ws(tmp_path):
    w = Workspace(tmp_path)
    w.embedder = make_embedder("hashing")   # what EmbedderResource(provider="hashing") gives the asset
    w.build_registry()
    (w.corpus / "policy.yml").write_text(REVOKE_MEMO)
    w.publish()
    ops_checks.record_policy_revision(w.con, "rev-revoke", seen_by="knowledge_index")
    yield w
    w.close()


@pytest.mark.parametrize("damage", ["deleted", "typo", "empty"])
def test_index_build_refuses_an_unavailable_policy(ws, monkeypatch, damage):
    served = index_revisions.served_revision(ws.con)["revision_id"]
    policy = ws.corpus / "policy.yml"
    if damage == "deleted":
        policy.unlink()
    elif damage == "typo":
        policy.write_text(REVOKE_MEMO.replace("revoke:", "revokes:"))
    else:
        policy.write_text("")
    result = _materialize(ws, monkeypatch)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    error = failure.event_specific_data.error.cause   # the CanonInputError under Dagster's wrapper
    assert error.cls_name == "CanonInputError"
    assert "policy unavailable, the index is not published" in error.message and str(policy) in error.message
    # Nothing was published: the revision with the revocation in its ACL copy still serves.
    assert index_revisions.served_revision(ws.con)["revision_id"] == served


def test_index_build_publishes_again_once_the_policy_is_valid(ws, monkeypatch):
    (ws.corpus / "policy.yml").unlink()
    assert not _materialize(ws, monkeypatch).success
    (ws.corpus / "policy.yml").write_text(REVOKE_MEMO)
    result = _materialize(ws, monkeypatch)
    assert result.success
    meta = result.asset_materializations_for_node("canon__knowledge_index")[0].metadata
    assert meta["policy_revision"].value == "rev-revoke"

"""Issue 15, "Effective time from artifact history": a dbt metric without meta.canon.valid_from is
valid from when Canon first recorded it; a later manifest that changes it closes that revision at the
new manifest's generated_at and opens a new one (canon.registry.publication), so a question about an
earlier date gets the earlier definition and says the time was inferred from publication. Real
vendored artifacts (jaffle-shop-semantic-v12), the real registry build, a LanceDB index with the
HashingEmbedder and canon.ask.pipeline.ask. Also: a Markdown document claiming a dbt-rendered doc_id,
or a later revision's, is quarantined naming dbt and fails the identity_takeovers check."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from external_artifacts import artifact_names

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.ask.resolve import lineage
from canon.index.build import build_index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import checks
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import Policy
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_bundle
from canon.sources.dbt.tables import store_bundle

ROOT = Path(__file__).resolve().parents[1]
ROLE = "analyst"
SET = "jaffle-shop-semantic-v12"          # manifest generated_at 2026-03-12
METRIC = "metric.jaffle_shop.large_orders"
MODEL = "model.jaffle_shop.order_items"      # the model behind median_revenue (not behind large_orders)
B_GENERATED = "2026-09-01T08:00:00Z"
TODAY = dt.date(2026, 12, 1)


def _manifest_b(external_dir: Path, dest: Path) -> Path:
    """Artifact set A with large_orders redefined in its manifest (over 50, not over 20) and the order_items
    model's SQL changed (its dbt checksum; the text Canon renders stays the same), published later."""
    shutil.copytree(external_dir / SET, dest)
    path = dest / artifact_names(dest)["manifest"]
    m = json.loads(path.read_text())
    m["metadata"].update(generated_at=B_GENERATED, invocation_id="b0000000-0000-0000-0000-000000000002")
    metric = m["metrics"][METRIC]
    assert "over 20" in metric["description"]
    metric["description"] = metric["description"].replace("over 20", "over 50")
    m["nodes"][MODEL]["checksum"]["checksum"] = "0" * 64
    path.write_text(json.dumps(m))
    return dest


def _bundle(folder: Path):
    names = artifact_names(folder)
    return read_artifacts(folder, column_lineage=False, **names)


def _build(con, bundle, run_id: str, corpus: Path | None = None):
    store_bundle(con, bundle)
    documents = [(corpus, load_contract(ROOT / "contracts/knowledge.yml"))] if corpus else []
    return build_registry(con, documents=documents, dbt_documents=documents_from_bundle(bundle, default_roles=(ROLE,)),
                          dbt_contract=load_contract(ROOT / "contracts/dbt_artifacts.yml"), run_id=run_id, today=TODAY)


@pytest.fixture
def published_twice(external_dir, tmp_path):
    """The registry built from manifest A, then from manifest B: (connection, ask context)."""
    con = registry.connect(tmp_path / "canon.duckdb")
    first = _build(con, _bundle(external_dir / SET), "a")
    assert first.quarantined == []
    second = _build(con, _bundle(_manifest_b(external_dir, tmp_path / "b")), "b")
    assert second.quarantined == []
    emb = HashingEmbedder()
    build_index(con, tmp_path / "lancedb", emb, Policy(), run_id="b")
    return con, ask_context(con, tmp_path / "lancedb", registry.load_documents(con), Policy(), embedder=emb,
                            log_answers=False)


def test_a_changed_metric_closes_its_revision_at_the_new_manifests_publication(published_twice):
    con, _ = published_twice
    a, b = registry.load_documents(con, doc_ids=[METRIC, f"{METRIC}.rev2"])
    assert (a.valid_from, a.valid_to) == (dt.date(2026, 3, 12), dt.date(2026, 9, 1))
    assert (b.valid_from, b.valid_to, b.supersedes) == (dt.date(2026, 9, 1), None, METRIC)
    assert "over 20" in a.text and "over 50" in b.text and a.object_id == b.object_id == METRIC
    assert {a.metadata["effective_time_source"], b.metadata["effective_time_source"]} == {"inferred_from_publication"}
    assert b.metadata["published_at"] == B_GENERATED and b.metadata["revision_of"] == METRIC
    # an unchanged node keeps its first revision, valid from manifest A's publication
    (stg,) = registry.load_documents(con, doc_ids=["model.jaffle_shop.stg_orders"])
    assert stg.valid_from == dt.date(2026, 3, 12) and stg.valid_to is None
    assert not registry.load_documents(con, doc_ids=["model.jaffle_shop.stg_orders.rev2"])
    # dbt's checksum changed with the same rendered text: a new revision all the same
    old_model, new_model = registry.load_documents(con, doc_ids=[MODEL, f"{MODEL}.rev2"])
    assert old_model.text == new_model.text and old_model.valid_to == new_model.valid_from == dt.date(2026, 9, 1)
    # links: this render's revisions name the model's current revision; the closed one keeps its own
    (median,) = registry.load_documents(con, doc_ids=["metric.jaffle_shop.median_revenue"])
    assert median.metadata["model_doc_id"] == f"{MODEL}.rev2" and median.valid_to is None
    assert a.metadata["model_doc_id"] == b.metadata["model_doc_id"] == "model.jaffle_shop.orders"
    assert checks.approved_overlaps(registry.load_documents(con)) == []


def test_an_unchanged_republication_writes_no_new_revision(external_dir, published_twice, tmp_path):
    con, _ = published_twice
    again = _build(con, _bundle(tmp_path / "b"), "b-again")
    assert again.diffs["dbt"].new_versions == 0 and again.diffs["dbt"].removed == []
    a, b = registry.load_documents(con, doc_ids=[METRIC, f"{METRIC}.rev2"])
    assert a.valid_to == b.valid_from == dt.date(2026, 9, 1) and b.valid_to is None


def test_a_question_about_an_earlier_date_gets_the_earlier_definition(published_twice):
    _, ctx = published_twice
    before = ask(ctx, "What is the definition of large orders for 2026-06-30?", ROLE)
    assert before.action == "answer" and before.evidence[0].doc_id == METRIC, before.answer
    assert "over 20" in before.answer and "over 50" not in before.answer
    assert before.evidence[0].effective_time_source == "inferred_from_publication"
    assert "inferred from dbt artifact publication" in before.answer

    after = ask(ctx, "What is the definition of large orders for 2026-10-15?", ROLE)
    assert after.action == "answer" and after.evidence[0].doc_id == f"{METRIC}.rev2", after.answer
    assert "over 50" in after.answer and "2026-09-01 <= date < open" in after.answer

    # the model behind a metric that did not change (it links the model's current revision), for a date:
    # the model revision in effect then
    for day, model in (("2026-06-30", MODEL), ("2026-10-15", f"{MODEL}.rev2")):
        r = ask(ctx, f"What is the grain of the model behind median revenue for {day}?", ROLE)
        assert r.action == "answer" and [e.doc_id for e in r.evidence[:2]] == [
            model, "metric.jaffle_shop.median_revenue"], (day, r.answer)
        assert "inferred from dbt artifact publication" in r.answer

    # canon lineage: the graph's nodes as the revisions in effect on the day
    docs = registry.load_documents(ctx.con)
    for day, model in ((dt.date(2026, 6, 30), MODEL), (dt.date(2026, 10, 15), f"{MODEL}.rev2")):
        r = lineage(ctx.con, docs, "metric.jaffle_shop.median_revenue", day, ROLE, Policy())
        assert r.action == "answer" and model in [e.doc_id for e in r.evidence], (day, r.answer)

    # before Canon first recorded it, no revision was in effect
    assert ask(ctx, "What is the definition of large orders for 2025-12-31?", ROLE).action == "abstain"


def test_corpus_claims_on_dbt_rendered_doc_ids_are_quarantined_and_fail_the_check(external_dir, tmp_path):
    con = registry.connect(tmp_path / "canon.duckdb")
    corpus = tmp_path / "knowledge"
    corpus.mkdir()
    _build(con, _bundle(external_dir / SET), "a", corpus=corpus)
    for name, doc_id in (("first.md", METRIC), ("later.md", f"{METRIC}.rev2")):
        (corpus / name).write_text(
            f"---\ndoc_id: {doc_id}\nobject_id: wiki.large_orders_copy\nkind: wiki\ntitle: Large orders\n"
            "status: draft\nauthority: 10\nversion: 1\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n---\n"
            "Large orders are any order at all; this page claims the dbt metric's evidence id.\n")
    build = _build(con, _bundle(_manifest_b(external_dir, tmp_path / "b")), "b", corpus=corpus)
    held = {q.source_uri: q.reasons for q in build.quarantined}
    assert set(held) == {"first.md", "later.md"}
    assert held["first.md"][0].startswith("duplicate doc_id") and f"dbt:{METRIC}" in held["first.md"][0]
    assert held["later.md"][0].startswith("duplicate doc_id") and f"dbt:{METRIC}" in held["later.md"][0]
    assert {d.source_system for d in registry.load_documents(con, doc_ids=[METRIC, f"{METRIC}.rev2"])} == {"dbt"}
    assert {r["source_uri"] for r in checks.identity_takeovers(con)} == {"first.md", "later.md"}

"""Every vendored third-party artifact set (tests/fixtures/external) becomes evidence without a single
meta.canon annotation, and the real ask pipeline answers a definition, a lineage and a grain question
about one of its nodes from it: registry through the contract gate, DuckDB graph tables, a LanceDB index
built by canon.index.build.build_index (HashingEmbedder), canon.ask.pipeline.ask.

The nodes are picked by a rule, not by name: the first metric by unique id (else the first model) whose
name is unambiguous among the set's metrics and models and contains none of the words Canon reads as an
intent ("total" would make a lineage question a value question)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from external_artifacts import SETS, artifact_names

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.ask.understanding.match import normalize
from canon.ask.understanding.parse import detect_intents
from canon.index.build import build_index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.graph import upstream
from canon.registry.policy import Policy
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_bundle
from canon.sources.dbt.tables import store_bundle

ROOT = Path(__file__).resolve().parents[1]
ROLE = "analyst"


def _phrase(doc) -> str:
    return normalize(doc.object_id.rsplit(".", 1)[-1].replace("_", " "))


def _askable(docs, kind: str) -> list:
    """Approved documents of `kind`, by unique id, whose name a question can use as it is."""
    names: dict[str, set[str]] = {}
    for d in docs:
        if d.kind in ("metric_definition", "model_schema"):
            names.setdefault(_phrase(d), set()).add(d.object_id)
    return sorted((d for d in docs if d.kind == kind and d.status.value == "approved"
                   and len(names[_phrase(d)]) == 1 and not detect_intents(_phrase(d))), key=lambda d: d.doc_id)


def _workspace(tmp_path, bundle, docs):
    """The artifacts' graph tables, the documents through the dbt contract gate (every one admitted), a LanceDB
    index revision, and the ask context over them: (connection, context)."""
    con = registry.connect(tmp_path / "canon.duckdb")
    store_bundle(con, bundle)
    build = build_registry(con, corpus=None, corpus_contract=load_contract(ROOT / "contracts/knowledge.yml"),
                           dbt_documents=docs, dbt_contract=load_contract(ROOT / "contracts/dbt_artifacts.yml"),
                           run_id="external", today=dt.date(2026, 12, 1))
    assert [(q.doc_id, q.reasons) for q in build.quarantined] == [] and build.documents == len(docs)
    emb = HashingEmbedder()
    published = build_index(con, tmp_path / "lancedb", emb, Policy(), run_id="external")
    assert published.chunks >= len(docs)
    return con, ask_context(con, tmp_path / "lancedb", registry.load_documents(con), Policy(), embedder=emb,
                            log_answers=False)


def _raw_inputs(con, doc) -> list[str]:
    """The sources (by relation) and seeds (by name) at the top of a node's lineage, from the graph tables."""
    graph = upstream(con, doc.metadata["dbt_unique_id"])
    return sorted(n["relation_name"] or n["id"] if n["resource_type"] == "source" else n["name"]
                  for n in graph.nodes.values()
                  if n["resource_type"] in ("source", "seed") and n["id"] != doc.metadata["dbt_unique_id"])


@pytest.mark.parametrize("folder", sorted(SETS))
def test_external_set_yields_evidence_that_answers_definition_lineage_and_grain(folder, external_dir, tmp_path):
    bundle = read_artifacts(external_dir / folder, column_lineage=False, **artifact_names(external_dir / folder))
    docs = documents_from_bundle(bundle, default_roles=(ROLE,))
    assert len([d for d in docs if d.kind != "freshness_snapshot"]) > 0
    again = documents_from_bundle(bundle, default_roles=(ROLE,))
    assert [(d.doc_id, d.content_hash) for d in again] == [(d.doc_id, d.content_hash) for d in docs]
    assert len({d.doc_id for d in docs}) == len(docs)

    con, ctx = _workspace(tmp_path, bundle, docs)
    by_id = {d.doc_id: d for d in docs}
    metrics, models = _askable(docs, "metric_definition"), _askable(docs, "model_schema")

    # definition: the first askable metric, else model, is the primary evidence
    node = (metrics or models)[0]
    r = ask(ctx, f"What is the definition of {_phrase(node)}?", ROLE)
    assert r.action == "answer" and r.evidence[0].doc_id == node.doc_id, r.answer

    # lineage: a metric's answer cites its graph-rendered lineage document and claims exactly the graph's raw
    # sources; a model's (the first with 1..40 raw inputs: sources or seeds) names every one from its own text
    if metrics:
        node = metrics[0]
        r = ask(ctx, f"Which raw sources feed {_phrase(node)}?", ROLE)
        assert r.action == "answer" and r.evidence[0].doc_id == node.doc_id, r.answer
        assert (node.metadata["lineage_doc_id"], "supporting") in [(e.doc_id, e.use) for e in r.evidence]
        graph = upstream(con, node.metadata["dbt_unique_id"])
        claimed = {c.claim.rsplit(" raw source ", 1)[1] for c in r.claims if " raw source " in c.claim}
        sources = {n["relation_name"] or n["id"] for n in graph.sources()}
        # no source upstream (dbt-core-state: a model selecting constants): the top of the rendered lineage
        assert claimed == sources if sources else claimed <= {n["name"] for n in graph.nodes.values()}, r.answer
        assert claimed, r.answer
    else:
        node = next(m for m in models if 0 < len(_raw_inputs(con, m)) <= 40)
        r = ask(ctx, f"Which raw sources feed {_phrase(node)}?", ROLE)
        assert r.action == "answer" and r.evidence[0].doc_id == node.doc_id, r.answer
        assert all(s in r.answer for s in _raw_inputs(con, node)), r.answer

    # grain: the model behind the metric (its graph-resolved model) or the first model with a declared grain
    if metrics and metrics[0].metadata.get("model_doc_id"):
        node = metrics[0]
        r = ask(ctx, f"What is the grain of the model behind {_phrase(node)}?", ROLE)
        model = by_id[node.metadata["model_doc_id"]]
        assert r.action == "answer" and [e.doc_id for e in r.evidence[:2]] == [model.doc_id, node.doc_id], r.answer
    else:
        model = next((m for m in models if m.metadata.get("grain")), models[0])
        r = ask(ctx, f"What is the grain of {_phrase(model)}?", ROLE)
        assert r.action == "answer" and r.evidence[0].doc_id == model.doc_id, r.answer
    assert "Grain: " in r.answer and (model.metadata.get("grain") or "not declared in dbt") in r.answer
    con.close()


def test_sources_semantic_models_and_saved_queries_are_concepts_a_question_can_name(external_dir, tmp_path):
    folder = external_dir / "jaffle-shop-semantic-v12"
    bundle = read_artifacts(folder, column_lineage=False, **artifact_names(folder))
    con, ctx = _workspace(tmp_path, bundle, documents_from_bundle(bundle, default_roles=(ROLE,)))
    for question, doc_id in [
        ("What is the ecom raw orders source?", "source.jaffle_shop.ecom.raw_orders"),
        ("What does the customer order metrics saved query return?", "saved_query.jaffle_shop.customer_order_metrics"),
        ("Which entities does the order item semantic model have?", "semantic_model.jaffle_shop.order_item"),
    ]:
        r = ask(ctx, question, ROLE)
        assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.answer)
    # a metric or a model of the same name still wins: "orders" is the metric, its grain the model's
    assert ask(ctx, "What is the definition of orders?", ROLE).evidence[0].doc_id == "metric.jaffle_shop.orders"
    assert ask(ctx, "What is the grain of orders?", ROLE).evidence[0].doc_id == "model.jaffle_shop.orders"
    con.close()


def _observed_sets(external_dir) -> list[str]:
    return [f for f in sorted(SETS) if any(
        d.kind == "freshness_snapshot" and "max_loaded_at" in d.text for d in documents_from_bundle(
            read_artifacts(external_dir / f, column_lineage=False, **artifact_names(external_dir / f)),
            default_roles=(ROLE,)))]


def test_a_source_and_the_models_built_on_it_answer_freshness_from_dbt_source_freshness(external_dir, tmp_path):
    """`dbt source freshness` reports a source by its relation (sources.json); a question names the source by
    its dbt name, or names a model downstream of it. Both are answered from the reading of that relation
    alone, and a model's upstream sources without a reading are named as such."""
    folders = _observed_sets(external_dir)
    assert folders, "no vendored set carries a sources.json reading"
    for folder in folders:
        bundle = read_artifacts(external_dir / folder, column_lineage=False, **artifact_names(external_dir / folder))
        docs = documents_from_bundle(bundle, default_roles=(ROLE,))
        con, ctx = _workspace(tmp_path / folder, bundle, docs)
        snapshot = next(d for d in docs if d.kind == "freshness_snapshot")
        sources = [d for d in docs if d.kind == "source_table" and d.metadata.get("relation_name")]
        observed = [d for d in sources if f"{d.metadata['relation_name']} max_loaded_at" in snapshot.text]
        assert observed, folder
        for src in observed:
            relation = src.metadata["relation_name"]
            for question in (f"Is {src.object_id.rsplit('.', 1)[1]} fresh?", f"Is {relation} fresh?"):
                r = ask(ctx, question, ROLE)
                assert r.action == "calculate", (question, r.answer)
                assert [f.source for f in r.freshness] == [relation], (question, r.answer)
                assert r.evidence[0].doc_id == snapshot.doc_id
        # The models whose upstream sources include an observed one, by unique id; the first askable one.
        relations = {d.metadata["relation_name"] for d in observed}
        models = [m for m in _askable(docs, "model_schema")
                  if relations & {n["relation_name"] for n in upstream(con, m.metadata["dbt_unique_id"]).sources()}]
        assert models, folder
        model = models[0]
        upstream_sources = {n["relation_name"] for n in upstream(con, model.metadata["dbt_unique_id"]).sources()}
        r = ask(ctx, f"Is {_phrase(model)} fresh?", ROLE)
        assert r.action == "calculate", r.answer
        assert {f.source for f in r.freshness} == upstream_sources & relations, r.answer
        for unread in sorted(upstream_sources - relations):
            assert unread in r.answer.rsplit("No freshness reading for", 1)[1], r.answer
        con.close()

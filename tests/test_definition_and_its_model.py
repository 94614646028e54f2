"""A definition and the model that supports it asked in one question ("Which brewhouse efficiency
definition applies for 2026-09-30, and which model supports it?"), in a domain no gold set uses: a
brewery.

The definition is what is asked first; the model stands beside it as supporting evidence. Asked
for the model's grain, key or columns, the model itself is the primary evidence, as before
(canon/ask/pipeline.py, the model intent beside `asks_definition`; parse.asks_model_detail)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import metric_revision, model_revision, module_context

from canon.ask.pipeline import ask

revision = functools.partial(metric_revision, "brewery.brewhouse_efficiency", "metric.brewery.brewhouse_efficiency",
                             "brewhouse efficiency")


_model = functools.partial(model_revision, "brewery", "fct_brews")


DOCS = [
    revision("1", "2025-01-01", "2026-07-01", "Extract in the fermenter divided by the malt's potential extract. "
                                              "Supporting model is model.brewery.fct_brews.v1."),
    revision("2", "2026-07-01", None, "Extract in the fermenter divided by the malt's laboratory extract, dry basis. "
                                      "Supporting model is model.brewery.fct_brews.v2."),
    _model("1", "2025-01-01", "2026-07-01", "one row per brew. Primary key: brew_id."),
    _model("2", "2026-07-01", None, "one row per brew. Primary key: brew_id."),
]

ctx = module_context("brewery", DOCS)


@pytest.mark.parametrize("question", [
    "Which brewhouse efficiency definition applies for 2026-09-30, and which model supports it?",
    "Give me the brewhouse efficiency definition for 30 September 2026 and the model that supports it.",
    "How is brewhouse efficiency defined on 2026-09-30, and which dbt model is it built on?",
])
def test_the_definition_first_the_model_beside_it(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer", (question, r.action, r.reason)
    assert [(e.doc_id, e.use) for e in r.evidence][:2] == [
        ("brewery.brewhouse_efficiency.v2", "primary"), ("model.fct_brews.v2", "supporting")]


@pytest.mark.parametrize("question", [
    "Which model supports brewhouse efficiency on 2026-09-30?",
    "What is the grain of the model behind the brewhouse efficiency definition for 2026-09-30?",
])
def test_the_model_itself_is_primary(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == "model.fct_brews.v2", (question, r.action, r.evidence)

"""Words that place a question in time or set its scene are no words of a description. A
metric named without its head noun ("turbine availability" for the turbine availability rate) is
found by its description, which must use the question's content words: "back" of "back in Q1
2026", "then", "originally", and "come" of "where does it come from" counted as such words, and
so did a scene the question sets in a sentence before it asks ("We're rebuilding the ops
dashboard for October 2026."). Each abstained no_matching_object where the same question without
them was answered (canon/ask/understanding/coverage.py `BOUNDARY`, `asking_part`).

A wind-energy domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. The availability rate changed on 2026-04-01."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import asking_part

V1, V2 = "metric.turbine_availability_rate.v1", "metric.turbine_availability_rate.v2"


def revision(version: str, valid_from: str, valid_to: str | None, text: str) -> dict:
    d = governed_doc(f"metric.turbine_availability_rate.v{version}", "metric.wind.turbine_availability_rate",
                     f"Turbine availability rate governed definition v{version}",
                     f"Governed metric turbine availability rate version {version}. {text} Supporting model is "
                     f"model.wind.fct_turbine_hours.v1.")
    d.update(version=version, valid_from=valid_from, valid_to=valid_to)
    return d


DOCS = [
    revision("1", "2025-01-01", "2026-04-01", "The turbine availability rate is the share of hours in the month in "
             "which a turbine could generate, over all hours of the month."),
    revision("2", "2026-04-01", None, "The turbine availability rate is the share of hours in the month in which a "
             "turbine could generate, over all hours of the month; hours lost to grid curtailment count as available."),
    governed_doc("model.fct_turbine_hours.v1", "model.wind.fct_turbine_hours", "dbt model schema fct_turbine_hours v1",
                 "dbt model model.wind.fct_turbine_hours.v1. Grain: one row per turbine per hour. This model supports "
                 "metric.wind.turbine_availability_rate.", kind="model_schema", authority=90),
    governed_doc("lineage.turbine_availability_rate.v1", "lineage.wind.turbine_availability_rate",
                 "Lineage for turbine availability rate v1",
                 "Lineage for metric.wind.turbine_availability_rate: raw.scada.turbine_status -> "
                 "stg.scada.turbine_status. These staging models feed model.wind.fct_turbine_hours.v1, which supports "
                 "metric.wind.turbine_availability_rate.", kind="lineage", authority=95),
]

ctx = module_context("wind", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("How was turbine availability defined back in Q1 2026?", V1),
    ("What did turbine availability mean back then, in Q1 2026?", V1),
    ("How was turbine availability originally defined, in 2025?", V1),
    ("How is turbine availability defined for October 2026, and where does it come from?", V2),
    ("We're rebuilding the ops dashboard for October 2026. Which turbine availability definition should we use?", V2),
    ("I'm reconciling last year's numbers with finance. How was turbine availability measured in 2025?", V1),
])
def test_time_and_scene_words_are_no_description(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == doc_id, (question, [e.doc_id for e in resp.evidence])


def test_the_asking_sentence_is_the_description_when_it_has_words_of_its_own():
    q = "We're rebuilding the ops dashboard. Which turbine availability definition applies?"
    assert asking_part(q) == "Which turbine availability definition applies?"
    # "How is that defined?" has none: the scene is the description
    q = "We count hours a turbine could generate. How is that defined?"
    assert asking_part(q) == q
    assert asking_part("How is turbine availability defined?") == "How is turbine availability defined?"

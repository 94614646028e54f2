"""A number a rule sets, asked with "must" or "to count in", is the definition's. "How many minutes
must an interruption last to count in SAIDI as of 2026-10-01?" abstained no_semantic_layer and
"outage notification rate: within how many minutes must the text go out?" asked for a period (a
grid probe): "how many" read as a value of the data. An obligation after "how many / much / long"
("must", "should", "has to", "needs to") and "to count in", "to be included", "to qualify" ask
what the definition takes in (canon/ask/understanding/parse.py `_RULE_NUMBER`, `CRITERIA_WORDS`);
"can" and "may" do not ("how much revenue can we book in August" is still a value).

A pharmacy domain no gold set uses, through the real pipeline."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

FILL = "metric.same_day_fill_rate.v1"

DOCS = [
    governed_doc(FILL, "metric.pharmacy.same_day_fill_rate", "Same-day fill rate governed definition v1",
                 "Governed metric. The same-day fill rate is the share of prescriptions received before 16:00 that "
                 "are filled and ready for pickup within 4 hours, over all prescriptions received before 16:00 in "
                 "the month. Prescriptions on hold for insurance are excluded."),
]

ctx = module_context("pharmacy", DOCS)


@pytest.mark.parametrize("question", [
    "Within how many hours must a prescription be ready to count in the same-day fill rate as of 2026-10-01?",
    "same-day fill rate: how many hours does a fill have to take at most, for 2026-10-01?",
    "How long should a prescription take to be included in the same-day fill rate on 2026-10-01?",
    "what does a prescription need to qualify for the same-day fill rate on 2026-10-01?",
])
def test_a_number_a_rule_sets_asks_for_the_definition(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == FILL, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What was the same-day fill rate in October 2026?",
    "How many prescriptions did the same-day fill rate count in October 2026?",
    "How much can the same-day fill rate reach in October 2026?",
])
def test_a_value_of_the_data_is_still_a_value(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (question, resp.action, resp.reason)

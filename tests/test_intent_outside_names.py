"""Intent is read outside the matched object's own words: "total" in a metric
named "total energy delivered" names it, it does not make a value question.
Energy-domain names, a domain no gold set uses."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.understanding.match import object_catalog
from canon.ask.understanding.parse import parse_question
from canon.models.documents import Document


def _metric(object_id: str, title: str) -> Document:
    return Document(doc_id=f"{object_id}.v1", object_id=object_id, kind="metric_definition", title=title,
                    status="approved", authority=90, version="1", valid_from=dt.date(2025, 1, 1),
                    allowed_roles=("analyst",), text=f"{title} is summed from metered feeder readings.")


@pytest.fixture(scope="module")
def catalog():
    return object_catalog([
        _metric("metric.energy.total_energy_delivered", "Total energy delivered"),
        _metric("metric.energy.feeder_source_mix", "Feeder source mix"),
        _metric("metric.energy.peak_load", "Peak load"),
    ])


@pytest.mark.parametrize("question, intent", [
    ("Which sources feed total energy delivered?", "lineage"),
    ("What is upstream of total energy delivered?", "lineage"),
    ("Which raw tables does totl energy delivered come from?", "lineage"),   # misspelled name
    ("How is total energy delivered computed?", "definition"),
    ("How was total energy delivered counted for 2026-03-01?", "definition"),
    ("What was total energy delivered in October 2026?", "value"),        # the value words are outside the name
    ("How is the feeder source mix defined?", "definition"),               # "source" inside the name
    ("Which tables feed the feeder source mix?", "lineage"),
])
def test_intent_words_inside_the_matched_name_do_not_count(catalog, question, intent):
    p = parse_question(question, catalog)
    assert p.matches, question
    assert p.intent == intent, (question, p.intents)

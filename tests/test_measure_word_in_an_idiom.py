"""A measure word inside an idiom ("<every time> a customer is scanned in") names no measure, in
a domain no gold set uses: a cinema chain.

"which metric counts every time a passenger gets on a bus or light rail vehicle, transfers
included, as of 2026-09-01?" (transit / veterinary probe) was answered with on-time performance:
"time" was read as the one word of its name the question wrote, and its text, which speaks of
buses and light rail, as described by the question. A measure word alone after a quantifier
("every", "each", "any") is an idiom, not a name (canon/ask/pipeline.py, `_after_quantifier`);
the description then finds the metric that counts boardings."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

ON_TIME = "cinema.on_time_start_rate.v1"
ADMISSIONS = "cinema.admissions.v1"

DOCS = [
    governed_doc(ON_TIME, "metric.cinema.on_time_start_rate", "On-time start rate governed definition v1",
                 "Governed metric on-time start rate version 1. The share of screenings whose feature started no "
                 "more than 5 minutes after the advertised time. Standard screens and IMAX auditoria are both "
                 "measured; private hires are excluded."),
    governed_doc(ADMISSIONS, "metric.cinema.admissions", "Admissions governed definition v1",
                 "Governed metric admissions version 1. The number of times customers are scanned into a screening "
                 "at the door in the period. A customer who leaves and comes back is counted at each scan. Staff "
                 "and children under 2 are not counted."),
]

ctx = module_context("cinema", DOCS)


@pytest.mark.parametrize("question", [
    # the setting's words are the on-time start rate's ("standard screens and IMAX auditoria")
    "which metric counts every time a customer is scanned at the door into a screening in a standard screen or "
    "an IMAX auditorium?",
    "what measure counts each time customers are scanned into a screening at the door?",
])
def test_the_described_metric_is_answered(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == ADMISSIONS, (question, r.action, r.reason,
                                                                         [e.doc_id for e in r.evidence])


def test_an_idiom_names_no_measure_even_when_nothing_is_described(ctx):
    r = ask(ctx, "which metric counts every time a customer is scanned into a standard screen or an IMAX auditorium?",
            "analyst")
    assert not any(e.doc_id == ON_TIME for e in r.evidence), (r.action, r.reason, [e.doc_id for e in r.evidence])


def test_the_name_with_its_measure_word_still_names_it(ctx):
    r = ask(ctx, "How is the on-time start rate defined?", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == ON_TIME, (r.action, r.reason)

"""A grammar word glued to a name's word ("ontime", "onsite"), in a domain no gold set uses: a
home repairs service.

"ontime departure rate definition" (airport / charity probe, and "ontime performance" on the
transit / veterinary one) abstained no_matching_object: a closed compound was cut into words
only when two of its parts were name words, and "on" is a grammar word. A word that is no English
word, cut into a grammar word and a name word that some name has right before the question's
next word ("on time <arrival>"), is read as the two (canon/ask/understanding/compounds.py,
`_grammar_word_split`). An English word is never cut ("intake" beside the take-up rate)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.compounds import rewrite

ARRIVAL = "repairs.on_time_arrival_rate.v1"
ONSITE = "repairs.on_site_fix_rate.v1"
TAKE_UP = "repairs.take_up_rate.v1"

DOCS = [
    governed_doc(ARRIVAL, "metric.repairs.on_time_arrival_rate", "On-time arrival rate governed definition v1",
                 "Governed metric on-time arrival rate version 1. Visits where the engineer arrived inside the "
                 "booked two-hour window, over visits."),
    governed_doc(ONSITE, "metric.repairs.on_site_fix_rate", "On-site fix rate governed definition v1",
                 "Governed metric on-site fix rate version 1. Jobs fixed at the first visit without a part "
                 "ordered, over jobs."),
    governed_doc(TAKE_UP, "metric.repairs.take_up_rate", "Take up rate governed definition v1",
                 "Governed metric take up rate version 1. Quotes accepted within 14 days, over quotes sent."),
]

ctx = module_context("home_repairs", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("ontime arrival rate definition", ARRIVAL),
    ("how is the onsite fix rate defined?", ONSITE),
])
def test_the_glued_word_is_read_as_the_name_writes_it(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_only_before_the_names_next_word_and_never_an_english_word(ctx):
    assert rewrite("ontime arrival rate", ctx.known_name_words, ctx.names_with) == "on time arrival rate"
    # "time" is a name word, but no name has "time" before "budget".
    assert rewrite("ontime budget", ctx.known_name_words, ctx.names_with) == "ontime budget"
    # "intake" is an English word: not "in take".
    assert rewrite("intake rate", ctx.known_name_words, ctx.names_with) == "intake rate"
    # Without the names, nothing is cut.
    assert rewrite("ontime arrival rate", ctx.known_name_words) == "ontime arrival rate"

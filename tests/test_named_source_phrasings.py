"""A contradicting source named in everyday words is conflict evidence, and it is the source
that says the claim. "Someone in the ops chat said …", "per the ops chat, …", "I read in the chat
thread that …", "in the delivery ops channel someone said …", "our support site says …" were
answered with no conflict (the nouns and the shapes were not read as naming a source). "My
runbook says parcels delivered by 10:00 the next morning count" cited the approved review
runbook, which says nothing of the kind, beside the old cutoff runbook that does; "the BI
tooltip says …" cited a help-centre article the user never named. A named source is the
document of the named kind whose title carries the phrase's words, which is about the
question's object, and whose text says the claim's own words; a source named by a noun of no
kind ("tooltip", "dashboard") is cited only when a document's title or text bears it out
(canon/ask/understanding/named_sources.py `DOC_NOUNS`, `extract_named_sources`;
canon/ask/pipeline.py `_named_conflicts`).

A parcel-locker domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

DAY = dt.date(2026, 10, 15)
METRIC = "metric.locker_pickup_rate.v1"
CHAT = "note.lockers.ops_chat"
HELP = "wiki.lockers.help_site"
OLD_RUNBOOK = "runbook.lockers.expiry_2024"

DOCS = [
    governed_doc(METRIC, "metric.lockers.locker_pickup_rate", "Locker pickup rate governed definition v1",
                 "Governed metric locker pickup rate version 1. The locker pickup rate is the share of parcels placed "
                 "in a locker that the recipient collects within 72 hours of the pickup code being sent, over all "
                 "parcels placed in lockers in the month. Parcels returned by the courier are excluded."),
    governed_doc(CHAT, "note.untrusted.lockers_ops_chat", "Chat thread pasted from the locker ops channel",
                 "Pasted chat thread, untrusted. 'the pickup rate counts parcels collected within five days, and "
                 "courier returns count as collected.'", kind="untrusted_note", status="untrusted", authority=0),
    governed_doc(HELP, "wiki.lockers.help_site", "Help site article: how long parcels wait in a locker",
                 "Help site article. Your parcel waits in the locker for seven days before it goes back to the "
                 "sender.", kind="wiki", status="untrusted", authority=10),
    governed_doc(OLD_RUNBOOK, "runbook.lockers.expiry", "Locker expiry runbook (2024 edition)",
                 "Locker expiry runbook, 2024 edition. Parcels collected by 10:00 the morning after expiry still count "
                 "as collected for the pickup rate.", kind="runbook", status="superseded", authority=40),
    governed_doc("runbook.lockers.daily_review", "runbook.lockers.daily_review", "Daily locker review runbook",
                 "Daily locker review. Check the locker pickup rate dashboard each morning and open a ticket for any "
                 "locker bank below 80 percent.", kind="runbook", status="approved", authority=60),
]

ctx = module_context("lockers", DOCS)


@pytest.mark.parametrize("question, source", [
    ("Someone in the ops chat said the locker pickup rate counts parcels collected within five days. True?", CHAT),
    ("Per the ops chat, the locker pickup rate counts parcels collected within five days. Right?", CHAT),
    ("I read in the chat thread that the locker pickup rate counts courier returns as collected. Does it?", CHAT),
    ("In the locker ops channel someone said courier returns count in the locker pickup rate - true?", CHAT),
    ("Our help site says parcels wait seven days, so the locker pickup rate uses seven days. Is that right?", HELP),
    ("My runbook says parcels collected by 10:00 the morning after expiry count for the locker pickup rate. "
     "Is that still so?", OLD_RUNBOOK),
])
def test_a_source_named_in_everyday_words_is_the_conflict(ctx, question, source):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [METRIC, source], (question, [e.doc_id for e in resp.evidence])


def test_a_source_nothing_bears_out_is_not_cited_in_its_place(ctx):
    resp = ask(ctx, "The BI tooltip says the locker pickup rate allows ten days. Is that right?", "analyst",
               as_of=DAY)
    assert resp.action == "answer", (resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [METRIC]


@pytest.mark.parametrize("question, noun, claim", [
    ("I saw on the help site that parcels wait seven days.", "site", "that parcels wait seven days"),
    ("Based on the team dashboard, the rate is 91%. Right?", "dashboard", "Based on the team dashboard, the rate is 91"),
    ("A chat thread someone pasted says returns count.", "thread", "A chat thread someone pasted says returns count"),
])
def test_the_source_and_its_claim_are_read(question, noun, claim):
    found = extract_named_sources(question)
    assert [s.noun for s in found] == [noun]
    a, b = found[0].span
    assert question[a:b] == claim


def test_a_relation_name_is_no_source():
    # its dots end no sentence, and "ticket" inside it is no document noun
    assert extract_named_sources("Is raw.helpdesk.ticket_events up to date on 20 November 2026?") == []


def test_a_hyphenated_word_between_a_source_and_its_verb():
    # "from payments-risk" is a short prepositional phrase like "from 2024"
    found = extract_named_sources("A slack thread from payments-risk claims GMV includes shipping. True?")
    assert [s.noun for s in found] == ["thread"]

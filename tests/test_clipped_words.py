"""A name written with a word cut short ("util rate" for the utilization rate, "avg fare per
trip") or a standard abbreviation ("avg", "rev") abstained no_matching_object though one governed
name holds the word in full next to the same neighbour; so did a question writing "def" for
"definition" ("vehicle utilization def as of …"), which the question's own words read in full
unless a name has the word. A cut word is read in full only when it
is no English word ("pass rate" is never read as a name holding "passenger"), one name word
starts with it beside the same neighbour, and no other does (canon/ask/understanding/
clippings.py). A word ending in "ss" is no plural ("pass" is not the initialism "pa" of another
name: canon/ask/understanding/match.py `singular`).

A public-transit domain no gold set uses, through the real pipeline (the contract gate, a
LanceDB index with the HashingEmbedder, ask), both the warm context in memory and the scoped
context a new process reads from the stored catalog (`canon ask`)."""

from __future__ import annotations

import pytest
from corpus_context import corpus_context, governed_doc

from canon.ask.pipeline import ask
from canon.ask.scope import scoped_context
from canon.ask.understanding import catalog_store, clippings
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry.policy import Policy

REPAIR = "metric.time_to_repair.v1"
UTIL, FARE, COMPLAINTS, COMPLIANCE, PA = (
    "metric.vehicle_utilization_rate.v1", "metric.average_fare_per_trip.v1", "metric.complaint_rate.v1",
    "metric.compliance_rate.v1", "metric.passenger_assistance_rate.v1")
DOCS = [
    governed_doc(UTIL, "metric.transit.vehicle_utilization_rate", "Vehicle utilization rate governed definition v1",
                 "Governed metric vehicle utilization rate version 1. The vehicle utilization rate is the share of "
                 "scheduled service hours in which a bus is in revenue service."),
    governed_doc(FARE, "metric.transit.average_fare_per_trip", "Average fare per trip governed definition v1",
                 "Governed metric average fare per trip version 1. Fare revenue divided by the number of boardings; "
                 "transfers within 90 minutes are one trip."),
    governed_doc(COMPLAINTS, "metric.transit.complaint_rate", "Complaint rate governed definition v1",
                 "Governed metric complaint rate version 1. Complaints received per 100,000 boardings."),
    governed_doc(COMPLIANCE, "metric.transit.compliance_rate", "Compliance rate governed definition v1",
                 "Governed metric compliance rate version 1. The share of inspected buses that meet the accessibility "
                 "standard."),
    governed_doc(REPAIR, "metric.transit.time_to_repair", "Time to repair governed definition v1",
                 "Governed metric time to repair version 1. Hours from a bus fault report to its return to service."),
    governed_doc(PA, "metric.transit.passenger_assistance_rate", "Passenger assistance rate governed definition v1",
                 "Governed metric passenger assistance rate version 1. Requests for boarding assistance per 1,000 "
                 "boardings."),
]


@pytest.fixture(scope="module")
def contexts(tmp_path_factory):
    base = tmp_path_factory.mktemp("transit")
    with corpus_context(base, DOCS) as ctx:
        catalog_store.refresh_catalog(ctx.con)   # what the index asset stores for a new process

        def scoped(question):
            s = scoped_context(ctx.con, base / "lancedb", question, "analyst", Policy(), embedder=HashingEmbedder())
            assert s is not None, "the stored catalog is current"
            s.log_answers = False
            return s
        yield ctx, scoped


CLIPPED = [
    ("How is the util rate defined?", UTIL),
    ("veh utilization rate definition", UTIL),
    ("What is the avg fare per trip?", FARE),
    ("avg. fare per trip - are transfers one trip?", FARE),
    ("How is the vehicle util rate computed?", UTIL),
    ("vehicle utilization def as of 2026-03-01", UTIL),     # the name less its head, then "def"
    ("util rate defn", UTIL),
    ("whats the time2repair definition", REPAIR),           # a 2 for "to"
]


@pytest.mark.parametrize("question, doc_id", CLIPPED)
def test_a_word_cut_short_names_the_one_name_that_holds_it_in_full(contexts, question, doc_id):
    ctx, scoped = contexts
    for c in (ctx, scoped(question)):
        resp = ask(c, question, "analyst")
        assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What is the comp rate?",        # complaint or compliance: two names start with it beside "rate"
    "What is the pass rate?",        # an English word, not "passenger" cut short
    "How is the late rate defined?",
])
def test_no_clipping_when_it_is_an_english_word_or_two_names_hold_it(contexts, question):
    ctx, scoped = contexts
    for c in (ctx, scoped(question)):
        resp = ask(c, question, "analyst")
        assert resp.action != "answer", (question, resp.action, [e.doc_id for e in resp.evidence])


def test_a_clipping_is_rewritten_only_beside_a_neighbour_of_the_same_name():
    names = {("vehicle", "utilization", "rate"), ("complaint", "rate"), ("compliance", "rate"),
             ("utility", "bill")}
    known = {w for n in names for w in n}.intersection

    def names_with(prefixes):
        return {n for n in names if any(w.startswith(tuple(prefixes)) for w in n)}

    assert clippings.rewrite("the util rate", known, names_with) == "the utilization rate"
    assert clippings.rewrite("the util bill", known, names_with) == "the utility bill"
    assert clippings.rewrite("util", known, names_with) == "util"                  # no neighbour
    assert clippings.rewrite("the comp rate", known, names_with) == "the comp rate"  # two names
    assert clippings.rewrite("the util cost", known, names_with) == "the util cost"  # "cost" in no name


def test_the_questions_own_words_written_short_are_read_in_full():
    names = {("vehicle", "utilization", "rate"), ("calc", "engine", "uptime")}
    known = {w for n in names for w in n}.intersection

    def names_with(prefixes):
        return {n for n in names if any(w.startswith(tuple(prefixes)) for w in n)}

    assert clippings.rewrite("utilization def", known, names_with) == "utilization definition"
    assert clippings.rewrite("calc engine uptime", known, names_with) == "calc engine uptime"   # a name's word


def test_a_two_between_words_is_to_and_a_code_stays():
    names = {("door", "provider", "time")}
    known = {w for n in names for w in n}.intersection
    assert clippings.rewrite("door2provider time", known, lambda p: set()) == "door to provider time"
    assert clippings.rewrite("B2B rate", known, lambda p: set()) == "B2B rate"

"""Named sources (canon/ask/understanding/named_sources.py) and object-phrase coverage
(canon/ask/understanding/coverage.py) on domains the understanding gold set does not
hold (energy, healthcare): a source named by any noun phrase, in any sentence, is
conflict evidence beside the governed primary; words of its claim leave the intent
alone; a metric that does not exist but shares its head noun with one that does is
not answered from the look-alike."""

import datetime as dt
from pathlib import Path

import pytest
from corpus_context import corpus_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import coverage
from canon.ask.understanding.parse import detect_intents, extract_named_sources, parse_question

ROOT = Path(__file__).resolve().parents[1]
ROLES = ["analyst"]


def _doc(doc_id, object_id, kind, title, status, text, version="1", valid_from="2025-01-01", authority=100):
    return {"doc_id": doc_id, "object_id": object_id, "kind": kind, "title": title, "status": status,
            "authority": authority, "version": version, "valid_from": valid_from, "valid_to": None,
            "allowed_roles": ROLES, "supersedes": None, "content_hash": f"sha256:{doc_id}", "text": text}


CORPUS = [
    _doc("metric.outage_minutes_per_customer.v1", "metric.energy.outage_minutes_per_customer", "metric_definition",
         "Outage minutes per customer governed definition v1", "approved",
         "Governed metric outage minutes per customer version 1. The sum of customer interruption minutes over "
         "the reporting month divided by customers served. Planned outages are included; momentary interruptions "
         "under five minutes are excluded."),
    _doc("metric.readmission_rate.v1", "metric.care.readmission_rate", "metric_definition",
         "Readmission rate governed definition v1", "approved",
         "Governed metric readmission rate version 1. Unplanned admissions within 30 days of a discharge divided "
         "by discharges in the reporting month. Transfers between wards are not readmissions."),
    _doc("metric.readmission_rate.v2_proposal", "metric.care.readmission_rate", "metric_definition",
         "Readmission rate v2 proposal", "draft",
         "Draft readmission rate version 2: count transfers to another hospital as readmissions.",
         version="2", authority=10),
    _doc("runbook.energy.storm_restoration_2024", "runbook.energy.storm_restoration", "runbook",
         "Storm restoration runbook (2024 edition)", "superseded",
         "Superseded runbook. During storm restoration leave planned outages out of every outage figure.",
         version="2024", authority=40),
    _doc("runbook.energy.meter_reading", "runbook.energy.meter_reading", "runbook", "Meter reading runbook",
         "approved", "Approved runbook. Read every smart meter before 06:00 and file the exceptions.", authority=80),
    _doc("wiki.energy.portal_outages", "wiki.energy.outage_portal_help", "wiki",
         "Customer portal article: why was my power out?", "untrusted",
         "Portal article. An outage counts only after thirty minutes.", version="2026-01", authority=0),
    _doc("wiki.care.portal_visits", "wiki.care.visit_portal_help", "wiki",
         "Customer portal article: when can I book a visit?", "untrusted",
         "Portal article. A return visit within a week is a readmission.", version="2026-01", authority=0),
    _doc("note.energy.control_room_chat", "note.untrusted.energy_control_room_chat", "untrusted_note",
         "Chat thread pasted from the control room channel", "untrusted",
         "Pasted chat: outage minutes per customer leaves out planned outages.", authority=0),
]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    with corpus_context(tmp_path_factory.mktemp("named_sources"), CORPUS, today=dt.date(2026, 11, 30)) as context:
        yield context


def _used(resp):
    return [(e.doc_id, e.use) for e in resp.evidence]


# ------------------------------------------------------------------ extraction


@pytest.mark.parametrize("question,noun,words,statuses", [
    ("The old storm restoration runbook tells me to leave out planned outages. Is that right?",
     "runbook", ("old", "storm", "restoration", "runbook"), ("superseded", "deprecated")),
    ("Should transfers count as readmissions, like the v2 proposal does?", "proposal", ("v2", "proposal"), ("draft",)),
    ("How is outage minutes per customer defined? A chat thread someone pasted says planned outages are out.",
     "thread", ("chat", "thread", "someone", "pasted"), ()),
    ("According to the customer portal article, when does an outage start?", "article",
     ("customer", "portal", "article"), ()),
    ("The runbook from 2024 says planned outages are left out.", "runbook", ("runbook", "2024"), ()),
    ("Someone pasted a chat thread saying transfers are readmissions.", "thread", ("chat", "thread"), ()),
    ("Per the old grid wiki, peak load is hourly. Is that right?", "wiki", ("old", "grid", "wiki"),
     ("superseded", "deprecated")),
    # A claim put to the user's judgement: the source is the subject of "right", "correct", "wrong".
    ("Is the old grid wiki right that peak load is hourly?", "wiki", ("old", "grid", "wiki"),
     ("superseded", "deprecated")),
    ("The storm restoration runbook is correct that planned outages are left out, for 2026-08-31?", "runbook",
     ("storm", "restoration", "runbook"), ()),
    ("Was the v2 proposal wrong about transfers counting as readmissions?", "proposal", ("v2", "proposal"),
     ("draft",)),
])
def test_a_source_is_named_by_any_noun_phrase_in_any_sentence(question, noun, words, statuses):
    (ns,) = extract_named_sources(question)
    assert (ns.noun, ns.words, ns.statuses, ns.subject) == (noun, words, statuses, False)
    # A document noun without attribution names no source.
    assert extract_named_sources("Which runbook covers storm restoration?") == []
    assert extract_named_sources("Is the peak load metric correct for 2026-08-31?") == []


def test_intent_is_read_outside_the_attributed_claim():
    question = ("How is outage minutes per customer defined for 2026-08-31? The portal article says "
                "the feed is late and stale.")
    assert "freshness" in detect_intents(question)
    assert parse_question(question, {}).intent == "definition"
    # Opening a sentence, "as X puts it," attributes the statement after the comma too; a
    # question after the comma stays the user's own.
    opening = "As the portal article puts it, a late meter read is stale. How is peak load defined?"
    assert "freshness" in detect_intents(opening) and parse_question(opening, {}).intent == "definition"
    asking = "According to the meter reading runbook, which sources feed peak load?"
    assert parse_question(asking, {}).intent == "lineage"


# ------------------------------------------------------------------ resolution


def test_an_old_runbook_named_by_its_title_words_is_conflict_evidence(ctx):
    resp = ask(ctx, "The old storm restoration runbook tells me to leave planned outages out. Is that right for "
               "outage minutes per customer on 2026-08-31?", "analyst")
    assert resp.action == "answer_conflict"
    assert _used(resp) == [("metric.outage_minutes_per_customer.v1", "primary"),
                           ("runbook.energy.storm_restoration_2024", "conflict")]


def test_a_named_source_is_no_object_when_the_claim_implies_a_governed_one(ctx):
    # Only the runbook is named by name; the governed metric is found by retrieval.
    resp = ask(ctx, "The old storm restoration runbook tells me to leave planned outages out of the outage "
               "minutes per customer figure. Is that right for 2026-08-31?", "analyst")
    assert resp.action == "answer_conflict"
    assert ("runbook.energy.storm_restoration_2024", "conflict") in _used(resp)


def test_a_proposal_compared_with_like_is_conflict_evidence(ctx):
    resp = ask(ctx, "Does the readmission rate for 2026-05-31 count transfers, like the v2 proposal does?", "analyst")
    assert resp.action == "answer_conflict"
    assert _used(resp) == [("metric.readmission_rate.v1", "primary"),
                           ("metric.readmission_rate.v2_proposal", "conflict")]


def test_of_two_articles_with_the_named_title_the_one_of_the_primary_domain_is_cited(ctx):
    for question in ("The customer portal article says a return visit within a week counts. Is that right for "
                     "the readmission rate on 2026-05-31?",
                     "How is outage minutes per customer defined for 2026-08-31? The customer portal article "
                     "says an outage is late to count."):
        resp = ask(ctx, question, "analyst")
        assert resp.action == "answer_conflict", question
        primary = resp.evidence[0].doc_id
        conflict = resp.evidence[1].doc_id
        assert conflict == ("wiki.care.portal_visits" if "readmission" in primary else "wiki.energy.portal_outages")


def test_a_pasted_chat_thread_in_a_second_sentence_is_conflict_evidence(ctx):
    resp = ask(ctx, "How is outage minutes per customer defined for 2026-08-31? A chat thread someone pasted "
               "says planned outages are left out.", "analyst")
    assert resp.action == "answer_conflict"
    assert ("note.energy.control_room_chat", "conflict") in _used(resp)


# ------------------------------------------------------------------ a metric that does not exist


@pytest.mark.parametrize("question,names", [
    ("How is the discharge rate defined?", {"readmission rate"}),
    ("What is the weekly outage minutes per customer?", {"daily outage minutes per customer"}),
    ("Which governed SAIFI definition applies?", {"outage minutes per customer"}),
    # A phrase headed by a measure noun names a measure, though the candidate's name ends elsewhere.
    ("What is the average outage time?", {"outage minutes per customer"}),
])
def test_an_object_phrase_with_a_word_no_name_accounts_for_is_not_covered(question, names):
    assert not coverage(question, names).covered


@pytest.mark.parametrize("question,names", [
    ("How is the readmission rate defined for 2026-05-31?", {"readmission rate"}),
    ("What share of discharged patients come back within 30 days?", {"readmission rate"}),
    ("How is the readmision rate defined?", {"readmission rate"}),
    ("What is the OMPC definition for 2026-08-31?", {"outage minutes per customer"}),
    ("OMP definition, 31 August 2026", {"outage minutes per customer"}),
])
def test_the_named_object_or_a_plain_description_is_covered(question, names):
    assert coverage(question, names).covered


def test_a_rate_that_does_not_exist_abstains_instead_of_answering_from_a_look_alike(ctx):
    for question in ("How is the hospital discharge rate defined?", "What is our governed discharge rate for 2026-05-31?"):
        resp = ask(ctx, question, "analyst")
        assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question
    assert ask(ctx, "How is the readmission rate defined for 2026-05-31?", "analyst").action == "answer"

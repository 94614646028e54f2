"""A claim attributed to a source, with no governed object named: "The v3 proposal says gate
delays under 5 minutes are not counted. Is that the rule for Nov 2026?", "The old ramp wiki
says towing delays count as turnaround time. True for 2026-10-15?" abstained
`no_matching_object`. The source settles which governed object the claim is about:

- a revision of one ("the v3 proposal") when two objects have one, the one whose revision
  says the claim's words;
- a document that is no revision (a wiki page, a runbook) and is about one governed object of
  its domain (`_related`) whose definitions say the claim's words.

The governing revision is then the answer, the source its conflict evidence
(canon/ask/pipeline.py `_object_of_claim_source`). A source about nothing governed, or a claim
no definition speaks to, still abstains.

An airport ground operations domain no gold set uses, through the real pipeline: the contract
gate, a LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import corpus_context, governed_doc

from canon.ask.pipeline import ask

OTP, OTP3 = "metric.on_time_departure.v1", "metric.on_time_departure.v3_proposal"
TURN, TURN3 = "metric.turnaround_time.v1", "metric.turnaround_time.v3_proposal"
WIKI = "wiki.ground.ramp_handbook_old"
DOCS = [
    governed_doc(OTP, "metric.ground.on_time_departure_rate", "On-time departure rate governed definition v1",
                 "Governed metric on-time departure rate version 1. The share of departures pushed back within 15 "
                 "minutes of schedule. Every gate delay counts, however short."),
    governed_doc(OTP3, "metric.ground.on_time_departure_rate", "On-time departure rate v3 proposal",
                 "Proposal: gate delays under 5 minutes are not counted against the on-time departure rate.",
                 status="draft", version="3", valid_from="2027-01-01", valid_to=None, authority=10),
    governed_doc(TURN, "metric.ground.aircraft_turnaround_time", "Aircraft turnaround time governed definition v1",
                 "Governed metric aircraft turnaround time version 1. The median minutes from on-blocks to "
                 "off-blocks of an aircraft at the gate. Towing delays before on-blocks are not turnaround time."),
    governed_doc(TURN3, "metric.ground.aircraft_turnaround_time", "Aircraft turnaround time v3 proposal",
                 "Proposal: measure turnaround from the last passenger off to the cabin doors closing.",
                 status="draft", version="3", valid_from="2027-01-01", valid_to=None, authority=10),
    governed_doc(WIKI, "wiki.ground.ramp_turnaround_handbook", "Old ramp handbook: aircraft turnaround",
                 "Old ramp handbook page. Towing delays count as turnaround time.", kind="wiki",
                 status="superseded", valid_to=None, authority=20),
    governed_doc("wiki.ground.catering_faq", "wiki.ground.catering_faq", "Catering FAQ",
                 "Catering trolleys are loaded after cleaning.", kind="wiki", status="untrusted", valid_to=None,
                 authority=0),
]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    with corpus_context(tmp_path_factory.mktemp("ground"), DOCS, today=dt.date(2026, 11, 30)) as context:
        yield context


@pytest.mark.parametrize("question, primary, source", [
    ("The v3 proposal says gate delays under 5 minutes are not counted. Is that the rule for Nov 2026?", OTP, OTP3),
    ("the v3 proposal says turnaround runs from the last passenger off to doors closing - right for 2026-11-01?",
     TURN, TURN3),
    ("The old ramp wiki says towing delays count as turnaround time. True for 2026-10-15?", TURN, WIKI),
    ("The old ramp handbook says towing delays are counted. Is that right on 2026-10-15?", TURN, WIKI),
])
def test_the_source_settles_the_object_of_the_claim(ctx, question, primary, source):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence][:1] == [(primary, "primary")]
    assert (source, "conflict") in [(e.doc_id, e.use) for e in resp.evidence]


@pytest.mark.parametrize("question", [
    "The catering FAQ says trolleys are loaded after cleaning. Is that right?",      # about nothing governed
    "The v3 proposal says de-icing time counts. Is that the rule for Nov 2026?",      # no revision says it
])
def test_a_claim_about_nothing_governed_still_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain", (question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


def test_a_claim_compared_with_a_source_is_the_question_s_own_words(ctx):
    question = "Should gate delays under 5 minutes be left out, like the v3 proposal does, for Nov 2026?"
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(OTP, "primary"), (OTP3, "conflict")]


def test_one_word_of_the_claim_is_enough_when_the_source_is_about_one_object(ctx):
    resp = ask(ctx, "Is the old ramp handbook right that towing is counted, on 2026-10-15?", "analyst")
    assert resp.action == "answer_conflict", (resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(TURN, "primary"), (WIKI, "conflict")]

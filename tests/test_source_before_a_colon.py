"""A source named before a colon states what follows it. "From the old hotel ops wiki: ADR counts
comp rooms as sold at zero. Still true?" and "I got this from the control room chat: CAIDI is in
hours now. Correct?" (a hotel and grid probe) were plain answers without the source: only a verb
of saying, "according to", "like" or a reported clause attributed a claim. A document phrase
followed by a colon and a statement attributes it (canon/ask/understanding/named_sources.py,
`quoted`); a question after the colon is the user's own. "WhatsApp" names a chat, as "Slack"
does.

A veterinary clinic domain no gold set uses, through the real pipeline."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

METRIC = "metric.vaccination_compliance_rate.v1"
WIKI = "wiki.clinic.ops_old"
CHAT = "note.clinic.front_desk_whatsapp"

DOCS = [
    governed_doc(METRIC, "metric.clinic.vaccination_compliance_rate",
                 "Vaccination compliance rate governed definition v1",
                 "Governed metric. The vaccination compliance rate is the share of active patients whose core "
                 "vaccines are up to date on the last day of the month. Boosters given more than 30 days late "
                 "do not count as up to date. Cats and dogs are both included."),
    {**governed_doc(WIKI, "wiki.clinic.ops", "Clinic ops wiki (old)",
                    "Old clinic wiki. Vaccination compliance: boosters given late still count as compliant.",
                    kind="wiki", status="superseded", authority=20),
     "valid_to": None},
    {**governed_doc(CHAT, "note.clinic.front_desk_whatsapp", "Front desk WhatsApp group notes",
                    "Pasted from the front desk WhatsApp group: vaccination compliance leaves out cats.",
                    kind="untrusted_note", status="untrusted", authority=5),
     "valid_to": None},
]

ctx = module_context("vet_clinic", DOCS)


def ids(resp) -> list[str]:
    return [e.doc_id for e in resp.evidence]


@pytest.mark.parametrize("question, source", [
    ("From the old clinic ops wiki: boosters given late still count toward vaccination compliance. "
     "Still true for 2026-06-01?", WIKI),
    ("Old clinic ops wiki: the vaccination compliance rate counts boosters given late as compliant. "
     "Right for 2026-06-01?", WIKI),
    ("I got this from the front desk WhatsApp: the vaccination compliance rate leaves out cats. "
     "Correct for 2026-06-01?", CHAT),
    ("Forwarded from the front desk chat: vaccination compliance leaves out cats. Right as of 2026-06-01?", CHAT),
])
def test_a_claim_after_a_source_and_a_colon_is_a_conflict(ctx, question, source):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict" and ids(resp)[:1] == [METRIC] and source in ids(resp), (
        question, resp.action, resp.reason, ids(resp))


def test_a_question_after_the_colon_is_the_users_own():
    assert extract_named_sources("Quick one about the old clinic ops wiki: how is vaccination compliance "
                                 "defined for 2026-06-01?") == []
    (ns,) = extract_named_sources("From the old clinic ops wiki: boosters given late still count.")
    assert ns.noun == "wiki" and ns.statuses == ("superseded", "deprecated")

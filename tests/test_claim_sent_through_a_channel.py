"""A claim a person passed on through a channel ("the cellar manager emailed that …"), in a
domain no gold set uses: a winery.

"a reception supervisor emailed that same-day appointments now include emergency walk-ins.
true?" (transit / veterinary probe; the corpus holds an untrusted "Email thread forwarded from a
reception supervisor") was a plain answer: a source was a phrase headed by a document noun
("the email", "the chat"), and this question names none. A verb of sending through a channel
("emailed", "messaged", "texted", "slacked") names the channel as the source, its words the
sender's (canon/ask/understanding/named_sources.py, `_sent_through`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

EFFICIENCY = "winery.bottling_line_efficiency.v1"
EMAIL = "note.winery.cellar_manager_email"

DOCS = [
    governed_doc(EFFICIENCY, "metric.winery.bottling_line_efficiency", "Bottling line efficiency governed definition v1",
                 "Governed metric bottling line efficiency version 1. Bottles filled over the line's rated bottles "
                 "per hour times the scheduled hours; cleaning stops count as scheduled hours."),
    governed_doc(EMAIL, "note.winery.cellar_manager_email", "Email from the cellar manager",
                 "Forwarded email from the cellar manager, untrusted. 'Bottling line efficiency leaves cleaning stops "
                 "out of the scheduled hours now.'", kind="untrusted_note", status="untrusted", authority=0),
]

ctx = module_context("winery", DOCS)


@pytest.mark.parametrize("question", [
    "the cellar manager emailed that bottling line efficiency leaves out cleaning stops - right for 2026-09-30?",
    "Our cellar manager messaged that cleaning stops are out of bottling line efficiency. True for 2026-09-30?",
])
def test_the_channel_is_conflict_evidence(ctx, question):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (EFFICIENCY, "primary") and (EMAIL, "conflict") in uses, (
        question, r.action, r.reason, uses)


def test_only_someone_elses_message_is_a_source():
    [ns] = extract_named_sources("A cellar hand texted me that the line ran at 90 percent.")
    assert ns.noun == "message" and ns.words == ("cellar", "hand") and "untrusted_note" in ns.kinds
    assert not extract_named_sources("I emailed the team that bottling line efficiency changed.")
    assert not extract_named_sources("Who emailed the bottling report?")
    # A participle naming what was sent passes nothing on.
    assert not extract_named_sources("Are bottling reports emailed to the cellar late?")
    # A channel named after the verb is the source itself ("messaged in the cellar chat").
    assert [ns.noun for ns in extract_named_sources("The cellar hand messaged in the cellar chat that it is 90.")] == [
        "chat"]

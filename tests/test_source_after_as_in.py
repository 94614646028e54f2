"""A source compared with by "as in" / "like in" and no verb after it ("…, as in the v2
proposal"), in a domain no gold set uses: a zoo.

"for dec 2026, does circulation include e-audiobooks as in the circulation v3 proposal" (library /
wind probe) was a plain answer: "like" or "as" right before the source's phrase, with a verb after
it ("like the draft does"), compared with a source; "as in the …" at the end of the question named
none. It does now (canon/ask/understanding/named_sources.py, `compared_in`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

V1 = "zoo.visitor_dwell_time.v1"
PROPOSAL = "zoo.visitor_dwell_time.v2_proposal"
WIKI = "wiki.zoo.visitor_glossary_old"

DOCS = [
    governed_doc(V1, "metric.zoo.visitor_dwell_time", "Visitor dwell time governed definition v1",
                 "Governed metric visitor dwell time version 1. Median minutes between a ticket's entry scan and "
                 "its exit scan; time in the café counts."),
    {**governed_doc(PROPOSAL, "metric.zoo.visitor_dwell_time", "Visitor dwell time v2 proposal",
                    "DRAFT proposal, not approved. Visitor dwell time would leave out time in the café and the "
                    "shop.", status="draft", authority=20, version="2", valid_from="2026-09-01", valid_to=None),
     "supersedes": V1},
    governed_doc(WIKI, "wiki.zoo.visitor_glossary", "Visitor glossary — old zoo wiki",
                 "Old wiki page. Visitor dwell time is the mean, not the median, of minutes inside.", kind="wiki",
                 status="superseded", authority=30),
]

ctx = module_context("zoo", DOCS)


@pytest.mark.parametrize("question, source", [
    ("for 2026-10-01, does visitor dwell time leave out the café as in the visitor dwell time v2 proposal",
     PROPOSAL),
    ("Is visitor dwell time the mean for 2026-10-01, like in the old zoo wiki?", WIKI),
])
def test_the_source_is_conflict_beside_the_metric(ctx, question, source):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (V1, "primary") and (source, "conflict") in uses, (
        question, r.action, r.reason, uses)


def test_as_in_names_a_source_only_before_a_document_noun():
    assert [ns.noun for ns in extract_named_sources("does it count the café, as in the v2 proposal")] == ["proposal"]
    assert not extract_named_sources("is dwell time measured in minutes, as in most zoos?")

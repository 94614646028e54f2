"""A source named by a document noun and the thing it is kept in ("the WhatsApp <group>", "the
Slack <export>"), or posted somewhere ("a manager <posted in> Slack that …"), in a domain no gold
set uses: a coworking space operator.

"the WhatsApp group says the curtailment rate leaves out bat curtailment - is that governed?" and
"a branch manager posted in Slack that …" (library / wind probe) were plain answers: "group"
ended the source's phrase before the verb that attributes, and only "I read / saw in X that …"
attributed a claim to where it was read. A noun such as "group", "export" or "transcript" after a
document noun belongs to its phrase, and "<someone> posted / wrote / said in X that <claim>"
attributes as "I read in X that" does (canon/ask/understanding/named_sources.py, `_SOURCE_TAILS`,
`_POSTED`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

METRIC = "cowork.desk_occupancy.v1"
CHAT = "note.cowork.community_whatsapp"

DOCS = [
    governed_doc(METRIC, "metric.cowork.desk_occupancy", "Desk occupancy governed definition v1",
                 "Governed metric desk occupancy version 1. Hot desks checked in for at least two hours divided by "
                 "hot desks open that day. Meeting rooms are excluded."),
    governed_doc("cowork.member_churn.v1", "metric.cowork.member_churn", "Member churn governed definition v1",
                 "Governed metric member churn version 1. Members whose plan ended in the month divided by members "
                 "at the start of the month."),
    governed_doc(CHAT, "note.cowork.community_whatsapp", "Community managers' WhatsApp export",
                 "Exported chat. Anna: desk occupancy counts meeting rooms too since the summer. Ben: and day "
                 "passes count twice.", kind="untrusted_note", status="draft", authority=10),
]

ctx = module_context("cowork", DOCS)


@pytest.mark.parametrize("question", [
    "the WhatsApp group says desk occupancy counts meeting rooms - is that governed?",
    "someone in the community WhatsApp group said desk occupancy counts meeting rooms. true?",
    "a community manager posted in WhatsApp that desk occupancy counts meeting rooms. right?",
    "The WhatsApp export says desk occupancy includes meeting rooms. Correct?",
])
def test_the_source_is_conflict_beside_the_metric(ctx, question):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (METRIC, "primary") and (CHAT, "conflict") in uses, (
        question, r.action, r.reason, uses)


def test_the_tail_is_part_of_the_phrase_not_a_describing_word():
    (ns,) = extract_named_sources("the WhatsApp group says desk occupancy counts meeting rooms")
    assert ns.noun == "whatsapp" and "group" not in ns.words
    assert not extract_named_sources("How is the desk occupancy of the members group defined?")

"""Two names that start alike and go on through a grammar word ("mean time between failures",
"mean time to restore"): a question that starts as both and goes on otherwise ("mean time
between restores", "mean time to failure") names a measure neither is. It was asked back
(`clarify`, the two as options) or could be answered from one of them: coverage read only the
shared start ("mean time"), which both names hold. It now abstains `no_matching_object`
(canon/ask/understanding/coverage.py `continues_otherwise`).

A rail operations domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import continues_otherwise

MTBF, MTTR = "metric.rail_mtbf.v1", "metric.rail_mttr.v1"
DOCS = [
    governed_doc(MTBF, "metric.rail.mean_time_between_failures", "Mean time between failures governed definition v1",
                 "Governed metric mean time between failures version 1. The service hours of a train set in the "
                 "month divided by the number of failures that withdrew it from service."),
    governed_doc(MTTR, "metric.rail.mean_time_to_restore", "Mean time to restore governed definition v1",
                 "Governed metric mean time to restore version 1. The mean minutes from a signalling fault being "
                 "logged to normal working being restored, over faults closed in the month."),
]

ctx = module_context("rail", DOCS)


@pytest.mark.parametrize("question", [
    "How is mean time between restores defined?",
    "What's mean time to failure?",
    "mean time to failure definition",
    "What is the mean time between restorations?",
])
def test_a_name_that_goes_on_otherwise_names_neither(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, resp.reason, [o.get("object_id") for o in resp.options])


@pytest.mark.parametrize("question, doc_id", [
    ("How is mean time to restore defined?", MTTR),
    ("What's the mean time between failures?", MTBF),
    ("How is the mean time to restore for signalling faults defined?", MTTR),   # the whole name, then more
    ("mean time to restor definition", MTTR),                                  # misspelt
])
def test_the_whole_name_still_names_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_where_a_name_goes_on():
    names = {"mean time to restore"}
    assert continues_otherwise("mean time between restores", ["mean", "time"], names)
    assert continues_otherwise("mean time to failure", ["mean", "time"], names)
    assert not continues_otherwise("mean time to restore", ["mean", "time"], names)
    assert not continues_otherwise("mean time to restore for faults", ["mean", "time", "to", "restore"], names)
    assert not continues_otherwise("mean time in the month", ["mean", "time"], names)   # no word after a link

"""A metric whose id is an initialism and whose title spells it out ("Mean time to acknowledge
(MTTA) governed definition v1", id metric.itops.mtta) answered only to the initialism: a
definition's title is not read for names (its versions repeat the name with noise such as "v3
proposal"), so "how is mean time to acknowledge defined?" abstained `no_matching_object`, and
a role the policy does not let see the metric got the same abstention instead of `deny`. The
words a title spells the id's initialism with are a name of the object now
(canon/ask/understanding/match.py `spelled_out`), unless another object has that name.

An IT operations domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import spelled_out

MTTA, CFR = "metric.mtta.v1", "metric.cfr.v1"
DOCS = [
    governed_doc(MTTA, "metric.itops.mtta", "Mean time to acknowledge (MTTA) governed definition v1",
                 "Governed metric mean time to acknowledge version 1. The mean minutes from an alert paging the "
                 "on-call engineer to the engineer acknowledging it, over alerts paged in the week."),
    {**governed_doc(CFR, "metric.itops.cfr", "Change failure rate (CFR) governed definition v1",
                    "Governed metric change failure rate version 1. The share of production deployments that "
                    "cause an incident or a rollback within 24 hours, over all production deployments in the "
                    "month."), "allowed_roles": ["sre_lead"]},
    governed_doc("metric.deploy_frequency.v1", "metric.itops.deploy_frequency", "Deployment frequency governed definition v1",
                 "Governed metric deployment frequency version 1. The number of production deployments per day, "
                 "averaged over the days of the month."),
]

ctx = module_context("itops", DOCS)


@pytest.mark.parametrize("question", [
    "How is mean time to acknowledge defined?",
    "mean time to acknowledge definition",
    "What's the mean time to acknowlege?",    # misspelt, as any name may be
    "MTTA definition",
])
def test_the_words_a_title_spells_the_id_with_name_the_object(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == MTTA, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", ["How is change failure rate defined?", "What is the CFR?"])
def test_a_role_that_may_not_see_it_is_denied_by_either_name(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "deny" and resp.reason == "not_authorized" and not resp.evidence, (
        question, resp.action, resp.reason)
    assert ask(ctx, question, "sre_lead").action == "answer"


def test_what_a_title_spells_out():
    assert spelled_out("Mean time to acknowledge (MTTA) governed definition v1", "mtta") == "mean time to acknowledge"
    assert spelled_out("Change failure rate governed definition v1", "cfr") == "change failure rate"
    assert spelled_out("Overall equipment effectiveness v3 proposal", "oee") == "overall equipment effectiveness"
    assert spelled_out("Net revenue governed definition v2", "net revenue") is None   # no initialism
    assert spelled_out("Mean time to acknowledge (MTTA) governed definition v1", "mttr") is None

"""A metric whose id is an initialism and whose title spells it out ("Mean time to acknowledge
(MTTA) governed definition v1", id metric.itops.mtta) answered only to the initialism: a
definition's title is not read for names (its versions repeat the name with noise such as "v3
proposal"), so "how is mean time to acknowledge defined?" abstained `no_matching_object`, and
a role the policy does not let see the metric got the same abstention instead of `deny`. The
words a title spells the id's initialism with are a name of the object now
(canon/ask/understanding/match.py `spelled_out`), unless another object has that name. So are
the names a title gives around an initialism in parentheses (`parenthesized_names`): "Service
recovery rate (SRR)" states "SRR", which outranks the same letters derived from another
metric's name ("stale runbook rate"), where "SRR" had been asked back as either.

An IT operations domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import parenthesized_names, spelled_out

MTTA, CFR = "metric.mtta.v1", "metric.cfr.v1"
DOCS = [
    governed_doc(MTTA, "metric.itops.mtta", "Mean time to acknowledge (MTTA) governed definition v1",
                 "Governed metric mean time to acknowledge version 1. The mean minutes from an alert paging the "
                 "on-call engineer to the engineer acknowledging it, over alerts paged in the week."),
    {**governed_doc(CFR, "metric.itops.cfr", "Change failure rate (CFR) governed definition v1",
                    "Governed metric change failure rate version 1. The share of production deployments that "
                    "cause an incident or a rollback within 24 hours, over all production deployments in the "
                    "month."), "allowed_roles": ["sre_lead"]},
    # An initialism the title states beside a name, and another metric whose initials spell it.
    governed_doc("metric.service_recovery.v1", "metric.itops.service_recovery_rate",
                 "Service recovery rate (SRR) governed definition v1",
                 "Governed metric service recovery rate version 1. The share of incidents whose service was "
                 "restored within the agreed recovery time, over incidents closed in the month."),
    governed_doc("metric.stale_runbook.v1", "metric.itops.stale_runbook_rate", "Stale runbook rate governed definition v1",
                 "Governed metric stale runbook rate version 1. The share of runbooks not reviewed in 180 days."),
    # The initialism inside the title's name, the id written with it.
    governed_doc("metric.pir_completion.v1", "metric.itops.pir_completion_rate",
                 "Post-incident review (PIR) completion rate governed definition v1",
                 "Governed metric PIR completion rate version 1. The share of major incidents whose review was "
                 "published within ten working days."),
    governed_doc("metric.first_call_resolution.v1", "metric.itops.first_call_resolution_rate",
                 "First call resolution rate governed definition v1",
                 "Governed metric first call resolution rate version 1. The share of service desk calls resolved "
                 "without a callback or an escalation, over calls closed in the week."),
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


@pytest.mark.parametrize("question, doc_id", [
    ("SRR definition", "metric.service_recovery.v1"),       # stated in the title, not only derived
    ("How is the SRR defined?", "metric.service_recovery.v1"),
    ("How is the post-incident review completion rate defined?", "metric.pir_completion.v1"),
    ("PIR completion rate definition", "metric.pir_completion.v1"),
])
def test_the_names_a_title_gives_around_an_initialism_name_the_object(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "How is the PIR backlog rate defined?",      # "PIR": the initials of the first words only
    "What is the MTT rate?",
])
def test_initials_of_a_name_s_first_words_are_no_whole_name(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", ["What's the FCR definition?", "How is FCR defined?"])
def test_the_initials_of_a_name_less_its_measure_head_are_a_whole_name(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == "metric.first_call_resolution.v1", (
        question, resp.action, resp.reason)


def test_what_a_title_names_around_an_initialism():
    assert parenthesized_names("Service recovery rate (SRR) governed definition v1", "service recovery rate") == {"srr"}
    assert parenthesized_names("Post-incident review (PIR) completion rate governed definition v1",
                               "pir completion rate") == {"post incident review completion rate"}
    assert parenthesized_names("Service recovery rate (SRR) governed definition v1", "srr rate") == set()
    assert parenthesized_names("Net revenue (draft) v3", "net revenue") == set()


def test_what_a_title_spells_out():
    assert spelled_out("Mean time to acknowledge (MTTA) governed definition v1", "mtta") == "mean time to acknowledge"
    assert spelled_out("Change failure rate governed definition v1", "cfr") == "change failure rate"
    assert spelled_out("Overall equipment effectiveness v3 proposal", "oee") == "overall equipment effectiveness"
    assert spelled_out("Net revenue governed definition v2", "net revenue") is None   # no initialism
    assert spelled_out("Mean time to acknowledge (MTTA) governed definition v1", "mttr") is None

"""A metric named without its measure head noun ("how were course completions counted?" for
the course completion rate, "on-time delivery" for the on-time delivery rate) is that metric
when the words stand as a noun phrase of their own: it abstained no_matching_object when
retrieval ranked other governed documents first, because only the top hit's description was
read. Another measure after the words ("the course completion count") or a modifier before them
is not the metric (canon/ask/understanding/coverage.py `names_without_head`; canon/ask/pipeline.py
`_names_in_discovery`).

An education domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import names_without_head

RATE = "metric.course_completion_rate.v1"

DOCS = [
    governed_doc(RATE, "metric.edu.course_completion_rate", "Course completion rate governed definition v1",
                 "Governed metric course completion rate version 1. The course completion rate is the share of "
                 "learners enrolled in a course who pass its final assessment within 120 days of enrolment; "
                 "audited enrolments are excluded."),
    governed_doc("metric.enrolment_lead_time.v1", "metric.edu.enrolment_lead_time", "Enrolment lead time governed definition v1",
                 "Governed metric enrolment lead time version 1. Enrolment lead time is the median days between a "
                 "learner's first visit to a course page and their enrolment in a course."),
    governed_doc("runbook.edu.term_close", "runbook.edu.term_close", "Term close runbook",
                 "At term close, count the course completions of every course, export the completions and the "
                 "course refunds, and reconcile course completions with finance.", kind="runbook", authority=60),
    governed_doc("metric.course_refund_rate.v1", "metric.edu.course_refund_rate", "Course refund rate governed definition v1",
                 "Governed metric course refund rate version 1. The course refund rate is the share of paid course "
                 "enrolments refunded in the term, counted per course."),
    governed_doc("policy.edu.learner_privacy", "policy.edu.learner_privacy", "Learner data privacy policy",
                 "Learner-level course data is shared only in aggregate; a course with fewer than ten learners is "
                 "reported with the learners of its faculty.", kind="policy", authority=70),
]

ctx = module_context("edu", DOCS)


@pytest.mark.parametrize("question", [
    "How were course completions counted in 2025?",
    "Do audited learners count toward course completions?",
    "course completion: how is it measured?",
])
def test_a_metric_named_without_its_head_noun_is_answered(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == RATE


@pytest.mark.parametrize("question, named", [
    ("How were course completions counted in 2025?", True),
    ("how is on-time delivery measured", True),
    ("How is the course completion count defined?", False),       # another measure after the words
    ("How were online course completions counted?", False),      # a modifier before them
])
def test_names_without_head(question, named):
    assert names_without_head(question, {"course completion rate", "on time delivery rate"}) is named


def test_one_word_used_as_a_verb_names_nothing():
    names = {"take rate", "course completion rate"}
    assert not names_without_head("The runbook tells me to take the census at 08:00", names)
    assert not names_without_head("we take the census at 08:00", names)
    assert names_without_head("How is take defined?", names)

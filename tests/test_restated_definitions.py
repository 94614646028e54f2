"""A question may name an object by a phrase that holds part of its name and paraphrases the
rest ("the module finish rate" for the course completion rate), then restate its definition
around it. The object's definition then describes the question (canon/ask/understanding/
coverage.py, `restates_definition`). Still abstaining: a name no object has, asked about with
nothing beside it ("how is the dropout rate defined?" beside a definition that mentions
dropping out), a modifier added before the whole name ("<learner> course completion rate"), and a phrase
whose other words the definition only names to exclude them ("self-paced learners ... are not
counted").

Education documents, a domain no gold set uses, through the real pipeline: the contract gate,
a LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc as _doc
from corpus_context import module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import coverage, restates_definition

COMPLETION = ("Governed metric course completion rate version 1. The course completion rate is the share of "
              "enrolled learners who finish every required module within 90 days of enrolment. Self-paced "
              "learners who study without enrolling are not counted. Learners who drop out before the first "
              "module are still in the denominator.")
DOCS = [
    _doc("metric.course_completion_rate.v1", "metric.learning.course_completion_rate",
         "Course completion rate governed definition v1", COMPLETION),
    _doc("metric.tutor_response_time.v1", "metric.learning.tutor_response_time",
         "Tutor response time governed definition v1",
         "Governed metric tutor response time version 1. Tutor response time is the median number of hours "
         "between a learner posting a question in a course forum and the first reply from a tutor."),
]


ctx = module_context("edu", DOCS)


@pytest.mark.parametrize("question", [
    "How do we define the module finish rate of enrolled learners within 90 days of enrolment?",
    "What is our definition of the module finish rate: enrolled learners finishing every required module?",
    "How is the course finish share counted for enrolled learners who finish each required module in 90 days?",
])
def test_a_paraphrased_name_with_its_definition_restated_is_answered(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == "metric.course_completion_rate.v1"


@pytest.mark.parametrize("question", [
    "How is the dropout rate defined?",
    "Define the self-paced completion rate for learners who finish every required module.",
])
def test_a_name_no_object_has_still_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question


def test_the_rule_reads_the_phrase_against_the_name_and_the_counted_sentences():
    names = ["course completion rate"]
    restated = "How do we define the module finish rate of enrolled learners within 90 days of enrolment?"
    cov = coverage(restated, names)
    assert (cov.phrase, cov.uncovered) == (["module", "finish", "rate"], ["module", "finish"])
    assert restates_definition(restated, cov, names, COMPLETION)
    # The same phrase with nothing restated beside it is a name, not a description.
    bare = "How is the module finish rate defined?"
    assert not restates_definition(bare, coverage(bare, names), names, COMPLETION)
    # A paraphrase the definition does not state ("graduation") is not restated by it.
    other = "How do we define the graduation rate of enrolled learners within 90 days of enrolment?"
    assert not restates_definition(other, coverage(other, names), names, COMPLETION)
    # A word before the name's first word is a modifier of the whole name, another measure.
    added = "Define the learner course completion rate for enrolled learners who finish every required module."
    cov = coverage(added, names)
    assert cov.uncovered == ["learner"]
    assert not restates_definition(added, cov, names, COMPLETION)

""""Which definition did v3 replace?", in a domain no gold set uses: a garden centre chain.

Asked with "which"/"what" and "did"/"does", the version before the verb's base form ("did v3
<replace>", "does version 3 <supersede>") names the revision it replaced, as "the definition v3
replaced" did; before, version 3 itself was served, a wrong version as primary. "Did v3 replace
the frost exclusion?" asks about v3 itself (canon/ask/understanding/temporal.py,
`_ASKED_WHAT_IT_REPLACED`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask

revision = functools.partial(metric_revision, "garden.plant_loss_rate", "metric.garden.plant_loss_rate",
                             "plant loss rate")

DOCS = [
    revision("1", "2024-01-01", "2025-03-01", "Plants written off divided by plants received."),
    revision("2", "2025-03-01", "2026-03-01", "Plants written off divided by plants received; frost damage excluded."),
    revision("3", "2026-03-01", None, "Plants written off or marked down over 50 percent divided by plants received."),
]

ctx = module_context("garden", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("Which plant loss rate definition did v3 replace?", "garden.plant_loss_rate.v2"),
    ("what did the plant loss rate version 3 supersede?", "garden.plant_loss_rate.v2"),
    ("Which definition of the plant loss rate does v2 replace?", "garden.plant_loss_rate.v1"),
    # as before: the revision a version replaced, and the one that replaced it
    ("the plant loss rate definition that v3 replaced", "garden.plant_loss_rate.v2"),
    ("which plant loss rate definition replaced v2?", "garden.plant_loss_rate.v3"),
    # a yes/no question about what v3 did is about v3
    ("Did plant loss rate v3 replace the frost exclusion?", "garden.plant_loss_rate.v3"),
])
def test_the_revision_named(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason,
                                                                      [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, doc_id", [
    # a revision written "r2" is version 2 (admissions / port probe: "FYR r5" of an object with one
    # revision was answered with it, never saying r5 does not exist)
    ("plant loss rate r2", "garden.plant_loss_rate.v2"),
    ("show me the plant loss rate r1", "garden.plant_loss_rate.v1"),
])
def test_a_revision_written_r_and_its_number(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_a_revision_that_does_not_exist_is_asked_back(ctx):
    r = ask(ctx, "plant loss rate r5", "analyst")
    assert (r.action, r.reason) == ("clarify", "version_not_found"), (r.action, r.reason)


def test_a_statistic_named_r2_is_no_revision():
    from canon.ask.understanding.temporal import find_versions
    assert [v.number for v in find_versions("plant loss rate r2")] == ["2"]
    assert find_versions("what is the r2 score of the plant loss forecast") == ()

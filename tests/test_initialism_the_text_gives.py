"""Initialisms and second names a definition gives its object beside a stated name, and an
initialism over the start of a title's name, in a domain no gold set uses: a fitness app.

On the admissions / port probe "GCR definition for 2026-08-01" and "BMPH definition as of
2026-03-03" abstained no_matching_object (8 cases): the texts say "crane moves per hour, also
called the gross crane rate (GCR) or quay crane productivity" and "berth productivity (BMPH),
also called berth moves per hour", and only the name after "also called" was read. The
initialism written in capitals before or after a stated name, and a second name after "or", are
stated names too (canon/ask/understanding/match.py, `stated_names`). "how is WP share defined?"
abstained as well: "Widening participation (WP) share" gave names only when the id's name was
one of them whole, and the id is "widening participation" (`parenthesized_names`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import parenthesized_names, stated_names

WCR1, WCR2 = "fit.workout_completion.v1", "fit.workout_completion.v2"
SESSION = "fit.session_length.v1"
PREMIUM = "fit.premium_conversion.v1"

DOCS = [
    governed_doc(WCR1, "metric.fit.workout_completion", "Workout completion (WCR) governed definition v1",
                 "Governed metric workout completion version 1. Workout completion (WCR), also called the workout "
                 "finish rate, is started workouts finished within 24 hours, over started workouts.",
                 valid_to="2026-06-01"),
    governed_doc(WCR2, "metric.fit.workout_completion", "Workout completion (WCR) governed definition v2",
                 "Governed metric workout completion version 2. Workout completion (WCR), also called the workout "
                 "finish rate, is started workouts finished the same day, over started workouts.",
                 version="2", valid_from="2026-06-01", supersedes=WCR1),
    governed_doc(SESSION, "metric.fit.session_length", "Metric definition: Session length, version 1",
                 "Governed metric session length version 1. Session length, also called the active minutes per "
                 "session (AMS) or time in app, is the median minutes between opening the app and its last "
                 "interaction."),
    governed_doc(PREMIUM, "metric.fit.premium_conversion", "Premium conversion (PC) share governed definition v1",
                 "Governed metric premium conversion share version 1. Trial users who bought a premium plan within "
                 "14 days, over trial users."),
]

ctx = module_context("fitness_app", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("WCR definition for 2026-08-01", WCR2),
    ("how was WCR defined on 2026-03-03?", WCR1),
    ("how is AMS defined?", SESSION),
    ("time in app definition", SESSION),
    ("how is PC share defined?", PREMIUM),
])
def test_the_name_the_text_gives_finds_the_object(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_only_capitals_beside_a_stated_name():
    assert stated_names("crane moves per hour, also called the gross crane rate (GCR) or quay crane productivity, is "
                        "the number") == {"gross crane rate", "gcr", "quay crane productivity"}
    assert stated_names("berth productivity (BMPH), also called berth moves per hour, is the total") == {
        "bmph", "berth moves per hour"}
    # A unit in parentheses beside no stated name is none.
    assert stated_names("Net revenue (USD) is the sum of invoices, in dollars (USD).") == frozenset()
    assert parenthesized_names("Premium conversion (PC) share governed definition v1", "premium conversion") == {
        "pc share", "premium conversion share"}

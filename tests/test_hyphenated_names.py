"""Names made of a verb and a particle, or of grammar words joined by a hyphen ("opt-out rate",
"no-show rate", "check-in success rate"), in a domain no gold set uses: a city bike share.

A grammar word inside a hyphenated compound is part of the name: "the opt-in rate" is not the
opt-out rate with a preposition dropped, and "the no-show rate" is no bare "rate" to ask back
about. A particle written where a name has another ("opt in" / "opt out"), hyphen or none, names
another thing. Compounds of time ("year-to-date", "month-over-month") stay words of time.
(canon/ask/understanding/coverage.py, `hyphen_joined` and `_particle_swaps`.)"""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import content_words, coverage, hyphen_joined


def _metric(stem: str, name: str, text: str) -> dict:
    return governed_doc(f"bike.{stem}.v1", f"metric.{stem}", f"{name} governed definition v1",
                        f"Governed metric {name.lower()} version 1. {text}")


DOCS = [
    _metric("sign_up_conversion_rate", "Sign-up conversion rate",
            "Share of app installs that complete a sign-up within 7 days."),
    _metric("opt_out_rate", "Opt-out rate", "Share of members who opt out of marketing messages in a month."),
    _metric("drop_off_completion_rate", "Drop-off completion rate",
            "Share of rides whose bike is docked at a station within 5 minutes of the ride's end."),
    _metric("rebalancing_rate", "Rebalancing rate", "Bikes moved by van per station per day."),
    _metric("dock_utilization_rate", "Dock utilization rate", "Share of dock-hours with a bike docked."),
    _metric("check_out_success_rate", "Check-out success rate",
            "Share of unlock attempts at a dock that release a bike within 30 seconds."),
]

ctx = module_context("bike_share", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("How is the opt-out rate defined?", "bike.opt_out_rate.v1"),
    ("opt out rate definition", "bike.opt_out_rate.v1"),
    ("What is the sign-up conversion rate?", "bike.sign_up_conversion_rate.v1"),
    ("How is the sign up conversion rate defined?", "bike.sign_up_conversion_rate.v1"),
    ("drop-off completion rate definition", "bike.drop_off_completion_rate.v1"),
    ("How is the check-out success rate defined?", "bike.check_out_success_rate.v1"),
    # compounds of time are no part of the name
    ("How is the year-to-date opt-out rate defined?", "bike.opt_out_rate.v1"),
    ("opt-out rate month-over-month definition", "bike.opt_out_rate.v1"),
])
def test_the_compound_a_name_writes_is_answered(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer", (question, r.action, r.reason)
    assert r.evidence[0].doc_id == doc_id


@pytest.mark.parametrize("question", [
    # the other particle, with a hyphen or without: another metric, never the opt-out rate
    "How is the opt-in rate defined?",
    "How is the opt in rate defined?",
    "opt in rate definition",
    "How is the check-in success rate defined?",
    "check in success rate definition",
])
def test_another_particle_names_another_metric(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "no_matching_object"), (question, r.action, r.reason, r.evidence)


@pytest.mark.parametrize("question", [
    "How is the no-show rate defined?",
    "How is the check-in rate defined?",
    "What is the walk-in rate?",
])
def test_a_compound_of_grammar_words_is_no_bare_measure_word(ctx, question):
    """Not a clarification listing every rate: the compound is a name no metric has."""
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "no_matching_object"), (question, r.action, r.reason, r.options)


def test_hyphen_joined_positions():
    # "how is the no show rate defined": "no" and "show" are the 4th and 5th words
    assert hyphen_joined("How is the no-show rate defined?") == {3, 4}
    assert hyphen_joined("check-in and opt-out") == {0, 1, 3, 4}
    assert hyphen_joined("year-to-date opt-out rate, month-over-month, as-of 2026-08-31") == {3, 4}
    assert hyphen_joined("no hyphen here") == frozenset()


def test_compound_words_are_content_words():
    assert content_words("How is the no-show rate defined?") == ["no", "show", "rate"]
    assert content_words("How is the no show rate defined?") == ["rate"]


def test_a_particle_in_another_particles_place_is_uncovered():
    assert coverage("how is the opt in rate defined", ["opt out rate"]).uncovered == ["in"]
    assert coverage("how is the opt out rate defined", ["opt out rate"]).covered
    # a particle between words the name does not hold around one is left as grammar
    assert coverage("opt out rate in june", ["opt out rate"]).covered

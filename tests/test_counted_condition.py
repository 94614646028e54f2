"""A share or a count described by the things it takes and a condition no definition states
("the share of delivered parcels reported damaged") asks about a measure no one governs, though
most of its words are a definition's (canon/ask/understanding/counted_condition.py). The
condition is read from the participles after the counted things; a phrasal verb ("snapped up")
and a participle that says how the measure is made ("weighted") are not read word by word. "No
longer" and "off" after a form of "be" negate what follows them
(canon/ask/understanding/measure_shape.py, `negated_words`). A model whose name stands inside
what a share takes is not the object of a definition question (canon/ask/pipeline.py,
`_measured_model`).

Hotel documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.counted_condition import counted_part, counts_within, unstated_condition
from canon.ask.understanding.measure_shape import negated_words

OCCUPANCY = ("Governed metric occupancy rate version 1. The occupancy rate is the share of available room nights "
             "sold to paying guests, over all available room nights in the month; complimentary stays are "
             "excluded.")
NO_SHOW = ("Governed metric no-show rate version 1. The no-show rate is the share of confirmed bookings whose "
           "guest never checked in on the arrival date, over all confirmed bookings arriving that day.")
GUEST_RETURN = ("Governed metric guest return rate version 1. The guest return rate is the share of guests with "
                "a completed stay in the year who booked another stay within 12 months of checking out.")
COHORTS = ("dbt model model.hotel.fct_loyalty_cohorts.v1. Grain: one row per member per enrolment week. Primary "
           "key: member_id, enrolment_week. Important fields: member_id, enrolment_week, tier, stays. One row per "
           "loyalty member enrolled in a cohort week, with the stays they made since.")
DOCS = [
    governed_doc("metric.occupancy_rate.v1", "metric.hotel.occupancy_rate", "Occupancy rate governed definition v1",
                 OCCUPANCY),
    governed_doc("metric.no_show_rate.v1", "metric.hotel.no_show_rate", "No-show rate governed definition v1",
                 NO_SHOW),
    governed_doc("metric.guest_return_rate.v1", "metric.hotel.guest_return_rate",
                 "Guest return rate governed definition v1", GUEST_RETURN),
    governed_doc("model.fct_loyalty_cohorts.v1", "model.hotel.fct_loyalty_cohorts",
                 "dbt model schema fct_loyalty_cohorts v1", COHORTS, kind="model_schema"),
]


ctx = module_context("hotel", DOCS)


@pytest.mark.parametrize("question", [
    # A condition no definition states, after the things a definition counts.
    "What is the share of available room nights sold to paying guests that were refunded?",
    "How do we define the confirmed bookings cancelled before the arrival date divided by all confirmed bookings?",
    "How is the proportion of guests with a completed stay in the year that were blacklisted defined?",
    # The complement of what a definition counts.
    "How do we define the share of guests with a completed stay in the year who no longer booked another stay "
    "within 12 months?",
    # A model's name inside what a share takes, and a condition nothing states.
    "How do we define the share of members enrolled in a loyalty cohort week that were downgraded by week 4?",
])
def test_a_share_with_a_condition_no_definition_states_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question


@pytest.mark.parametrize("question, doc_id", [
    ("How do we define the share of confirmed bookings whose guest never checked in on the arrival date?",
     "metric.no_show_rate.v1"),
    # A phrasal verb paraphrases; its verb is not read as the condition.
    ("How do we define the share of available room nights snapped up by paying guests, over all available "
     "room nights in the month?", "metric.occupancy_rate.v1"),
    ("How do we define the share of guests with a completed stay in the year who booked another stay within "
     "12 months?", "metric.guest_return_rate.v1"),
])
def test_a_share_whose_condition_a_definition_states_is_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", doc_id), question


def test_what_a_share_or_a_count_takes():
    assert counted_part("What is the share of room nights sold, over all room nights?") == ("room", "nights", "sold")
    assert counted_part("the bookings cancelled late divided by all bookings") == ("the", "bookings", "cancelled",
                                                                                   "late")
    assert counted_part("How is the no-show rate defined?") == ()
    assert counts_within("the share of members enrolled in a loyalty cohort week", ["loyalty", "cohort"])
    assert not counts_within("the loyalty cohort week of members", ["loyalty", "cohort"])


def test_which_participles_are_conditions():
    assert unstated_condition("the share of room nights refunded", OCCUPANCY) == ["refunded"]
    # Stated in another form ("checked" / "checking"), a phrasal verb, a participle of making.
    assert unstated_condition("the share of guests checked out who booked again", GUEST_RETURN) == []
    assert unstated_condition("the share of room nights snapped up by guests", OCCUPANCY) == []
    assert unstated_condition("the share of room keys handed over to guests", OCCUPANCY) == []
    assert unstated_condition("the share of room nights sold weighted by price", OCCUPANCY) == []
    # Neither a share nor a count: nothing is read.
    assert unstated_condition("Is the occupancy rate refunded?", OCCUPANCY) == []


def test_no_longer_and_off_negate():
    assert negated_words("employees no longer employed at its end") == ["employed"]
    assert negated_words("guests who are off the loyalty programme") == ["loyalty"]
    # A comparison, a particle, a compound.
    assert negated_words("sessions no longer than 30 minutes") == []
    assert negated_words("stays signed off by the manager") == []
    assert negated_words("the actual off-block time") == []

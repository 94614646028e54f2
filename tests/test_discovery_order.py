"""When a question names no governed object whole, retrieval proposes candidates and
canon/ask/pipeline.py (`_discover`) decides in order: a candidate near the top that the
question names beats the top hit's description; a description is read without the words that
name the question's sources ("the old front-desk wiki says"); two candidates a claim describes
alike are told apart by the source it names; and one word of a model's name ("per stay") does
not name the model.

Hotel documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

from corpus_context import governed_doc, module_context

from canon.ask.pipeline import _retrieve, ask
from canon.ask.understanding.named_sources import extract_named_sources, without_sources


def _doc(doc_id, object_id, kind, title, text, status="approved", authority=100):
    return governed_doc(doc_id, object_id, title, text, kind=kind, status=status, authority=authority)


DOCS = [
    _doc("metric.occupancy_rate.v1", "metric.hotel.occupancy_rate", "metric_definition",
         "Occupancy rate governed definition v1",
         "Governed metric occupancy rate version 1. The occupancy rate is the share of available room nights "
         "sold to paying guests, over all available room nights in the month. Complimentary stays are not sold "
         "room nights."),
    _doc("metric.average_daily_rate.v1", "metric.hotel.average_daily_rate", "metric_definition",
         "Average daily rate governed definition v1",
         "Governed metric average daily rate version 1. The average daily rate is room revenue divided by the "
         "room nights sold to paying guests in the month. Complimentary stays are room nights not sold to "
         "paying guests: complimentary stays carry no room revenue."),
    _doc("metric.on_time_turnover_rate.v1", "metric.hotel.on_time_turnover_rate", "metric_definition",
         "On-time turnover rate governed definition v1",
         "Governed metric on-time turnover rate version 1. The on-time turnover rate is the share of departing "
         "rooms cleaned and inspected before the 15:00 check-in, over all departing rooms on the day."),
    _doc("metric.late_checkout_share.v1", "metric.hotel.late_checkout_share", "metric_definition",
         "Late checkout share governed definition v1",
         "Governed metric late checkout share version 1. One late room counts once: the late checkout share is "
         "the share of stays whose room is vacated one hour or more after 11:00, counting each late room once "
         "a day, one late hour or more."),
    _doc("model.fct_stays.v1", "model.hotel.fct_stays", "model_schema", "dbt model schema fct_stays v1",
         "dbt model model.hotel.fct_stays.v1. Grain: one row per stay. Primary key: stay_id. Important "
         "fields: stay_id, room_id, nights_sold, is_complimentary, room_revenue, paying_guest_id. This model "
         "supports metric.hotel.occupancy_rate version 1 and metric.hotel.average_daily_rate version 1."),
    _doc("wiki.hotel.occupancy_faq", "wiki.hotel.occupancy", "wiki", "Occupancy FAQ - old front-desk wiki",
         "OLD FRONT-DESK WIKI, superseded. Complimentary stays count as room nights sold to paying guests.",
         status="superseded", authority=20),
    _doc("wiki.hotel.housekeeping_article", "wiki.hotel.housekeeping", "wiki", "Housekeeping help article",
         "Staff help article, not a governed definition. A room cleaned within one hour of check-in still "
         "counts as ready.", status="untrusted", authority=10),
]


ctx = module_context("hotel", DOCS)


def _primary_and_conflicts(resp):
    return resp.action, [e.doc_id for e in resp.evidence][:2]


def _governed_order(ctx, q):
    return [h.doc_id for h in _retrieve(ctx, q, "analyst", k=10) if h.doc_id.startswith("metric.")]


def test_a_description_is_read_without_the_words_naming_its_source(ctx):
    # Three words describe the claim; with the source's five beside them too few are the definition's.
    q = "The old front-desk wiki says complimentary stays count as sold. Is that right?"
    assert without_sources(q, extract_named_sources(q)).split() == [
        "the", "complimentary", "stays", "count", "as", "sold", ".", "is", "that", "?"]
    assert _primary_and_conflicts(ask(ctx, q, "analyst")) == (
        "answer_conflict", ["metric.occupancy_rate.v1", "wiki.hotel.occupancy_faq"])


def test_a_claim_two_definitions_describe_alike_goes_to_the_one_its_source_is_about(ctx):
    q = "Is the old front-desk wiki correct that complimentary stays are room nights sold to paying guests?"
    # Both definitions state every word of the claim; retrieval ranks the average daily rate first.
    assert _governed_order(ctx, q)[:2] == ["metric.average_daily_rate.v1", "metric.occupancy_rate.v1"]
    assert _primary_and_conflicts(ask(ctx, q, "analyst")) == (
        "answer_conflict", ["metric.occupancy_rate.v1", "wiki.hotel.occupancy_faq"])


def test_a_name_near_the_top_beats_the_top_hits_description(ctx):
    q = "Was the housekeeping help article wrong that a room cleaned one late hour after check-in counts as on time?"
    # The neighbour sharing "one", "late", "hour", "counts" ranks first: the case is the class's.
    assert _governed_order(ctx, q)[0] == "metric.late_checkout_share.v1"
    assert _primary_and_conflicts(ask(ctx, q, "analyst")) == (
        "answer_conflict", ["metric.on_time_turnover_rate.v1", "wiki.hotel.housekeeping_article"])


def test_one_word_of_a_models_name_does_not_name_the_model(ctx):
    resp = ask(ctx, "How do we define room revenue divided by room nights sold to paying guests, per stay?", "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", "metric.average_daily_rate.v1")

"""A question that uses no governed object's name is answered from retrieval's top governed
hit only when it describes that object in the words its definition uses
(canon/ask/understanding/coverage.py, `describes`). A name no object has, sharing a generic
word or two with the top hit, and initials no object's title gives, abstain with
`no_matching_object`: answering from a look-alike is the worst failure Canon can have. A word
with letters written in front of a name's word ("unmetered" for "metered") is another word, not a
misspelling (canon/ask/understanding/match.py, `prefixed`).

Water-utility documents, a domain no gold set uses, through the real pipeline: the contract
gate, a LanceDB index (HashingEmbedder: the lexical side of retrieval decides), ask."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from corpus_context import corpus_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import describes
from canon.index.embedding.hashing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
DAY = dt.date(2026, 6, 30)

METRICS = {
    "non_revenue_water_share": ("Non-revenue water share",
                                "The share of treated water pumped into the network that is never billed to a "
                                "customer: leaks from mains, burst pipes, meter under-registration and theft, "
                                "over the water put into supply in the month."),
    "mean_time_to_repair_bursts": ("Mean time to repair bursts",
                                   "The average number of hours from a burst main being reported to the supply "
                                   "being restored, over bursts closed in the month."),
    "leakage": ("Leakage", "Megalitres of treated water lost from the network per day, from night-flow analysis."),
    "leakage_per_property": ("Leakage per property",
                             "Litres lost from the network per connected property per day: leakage over the "
                             "properties connected at the start of the month."),
    "leakage_growth_yoy": ("Leakage growth YoY",
                           "Leakage this month over leakage in the same month a year earlier, minus one."),
    "metered_property_share": ("Metered property share",
                               "Connected properties billed from a working meter, over all connected "
                               "properties at the end of the month."),
    "supply_interruption_rate": ("Supply interruption rate",
                                 "Customer properties whose supply was interrupted for more than three hours, per "
                                 "1,000 connected properties, in the month."),
}


def _water_docs() -> list[dict]:
    docs = [{
        "doc_id": f"metric.{key}.v1", "object_id": f"metric.water.{key}", "kind": "metric_definition",
        "title": f"{title} governed definition v1", "status": "approved", "authority": 100, "version": "1",
        "valid_from": "2025-01-01", "valid_to": None, "allowed_roles": ["analyst"], "supersedes": None,
        "content_hash": f"sha256:water-{key}", "text": f"Governed metric {title.lower()} version 1. {text}",
    } for key, (title, text) in METRICS.items()]
    # The model behind the interruption rate, restating its words and more.
    docs.append({
        "doc_id": "model.fct_supply_interruptions.v1", "object_id": "model.water.fct_supply_interruptions",
        "kind": "model_schema", "title": "dbt model schema fct_supply_interruptions v1", "status": "approved",
        "authority": 90, "version": "1", "valid_from": "2025-01-01", "valid_to": None,
        "allowed_roles": ["analyst"], "supersedes": None, "content_hash": "sha256:water-model",
        "text": "dbt model fct_supply_interruptions v1. Grain: one row per customer property whose supply was "
                "interrupted, per interruption, with the hours interrupted, more than three hours flagged, and "
                "the connected properties in the month. Supports metric.water.supply_interruption_rate.",
    })
    return docs


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    with corpus_context(tmp_path_factory.mktemp("water"), _water_docs()) as context:
        yield context


@pytest.mark.parametrize("question, doc_id", [
    ("How do we define the share of treated water that is never billed because of leaks and burst pipes?",
     "metric.non_revenue_water_share.v1"),
    ("How do we define the average number of hours from a main being reported to its restoration, over mains "
     "closed in the month?",
     "metric.mean_time_to_repair_bursts.v1"),
])
def test_a_description_in_the_definitions_words_finds_its_object(ctx, question, doc_id):
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.answer)


@pytest.mark.parametrize("question", [
    "What is the reservoir drawdown velocity?",           # shares nothing but grammar
    "How is the pipe renewal share defined?",             # "share" and "pipe": two of three words
    "Which governed sewer overflow rate applies?",        # "rate" with a name no object has
    "What is ILI?",                                       # initials of no title (infrastructure leakage index)
    "What is the unmetered property share?",              # letters in front of a name's word make another word
    "How is the submetered property share defined?",
])
def test_a_name_no_object_has_abstains_instead_of_taking_the_top_hit(ctx, question):
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "abstain" and r.reason == "no_matching_object", (question, r.action, r.answer)
    assert r.evidence == []


@pytest.mark.parametrize("question, doc_id", [
    ("How is leakage per property computed?", "metric.leakage_per_property.v1"),
    ("Which definition of leakage per property applies?", "metric.leakage_per_property.v1"),
    ("How is leakage computed?", "metric.leakage.v1"),
    ("How is leakage growth computed?", "metric.leakage_growth_yoy.v1"),   # the first words of a longer name
    ("What does leakage growth measure?", "metric.leakage_growth_yoy.v1"),
])
def test_the_most_complete_name_wins_over_a_short_name_inside_it(ctx, question, doc_id):
    """"leakage" is a whole name inside "leakage per property": the name that accounts for the
    question's whole object phrase is the one asked about."""
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.answer)


def test_describes_needs_most_content_words_and_every_word_of_a_short_name():
    text = METRICS["non_revenue_water_share"][1]
    assert describes("the share of treated water never billed to a customer", text)
    assert describes("water lost to leaks from mains and burst pipes, as a share of supply", text)
    assert not describes("pipe renewal share", text)          # a three-word name: every word must be there
    assert not describes("the share of meters replaced after calibration checks failed", text)


ANSWERS = {"answer", "answer_conflict", "calculate"}


def test_no_dev_case_is_answered_from_an_object_its_gold_does_not_name():
    """The issue's bar on tests/gold_understanding (dev split: the final one is not tuned on):
    zero answers from a non-matching object. Every case Canon answers is one the gold answers,
    and its primary evidence is a gold document; what it gets wrong, it gets wrong by abstaining."""
    from canon.evaluation.run import evaluate

    set_dir = ROOT / "tests" / "gold_understanding"
    result = evaluate(set_dir / "corpus", set_dir / "gold_dev.json", embedder=HashingEmbedder())
    wrong = []
    for c in result["cases"]:
        r = c["response"]
        if r["action"] not in ANSWERS:
            continue
        primary = r["evidence"][0]["doc_id"] if r["evidence"] else None
        if c["expected_action"] not in ANSWERS or (c["gold_docs"] and primary not in c["gold_docs"]):
            wrong.append((c["id"], r["action"], primary))
    assert wrong == []
    assert result["summary"]["permission_leaks"] == 0 and result["summary"]["wrong_version_rate"] == 0


@pytest.mark.parametrize("question", ["Which definition of metered property share applies?",
                                      "How is the metred property share defined?"])   # a misspelling still matches
def test_the_name_itself_still_matches_beside_the_prefixed_forms(ctx, question):
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "answer" and r.evidence[0].doc_id == "metric.metered_property_share.v1", (question, r.answer)


@pytest.mark.parametrize("a, b, expected", [
    ("redelivery", "delivery", True), ("involuntary", "voluntary", True), ("unresolved", "resolved", True),
    ("delivery", "delivery", False), ("deliveries", "delivery", False), ("revnue", "revenue", False),
    ("ddelivery", "delivery", False),   # one letter in front: a typo, left to the fuzzy match
])
def test_prefixed_words(a, b, expected):
    from canon.ask.understanding.match import prefixed
    assert prefixed(a, b) is expected and prefixed(b, a) is expected


def test_of_the_described_candidates_the_fuller_description_wins(ctx):
    """Retrieval may rank a neighbour first that shares some of a description's words ("connected
    properties", "in the month"); the object whose definition uses more of them is the one described
    (canon/ask/pipeline.py, `_best_described`), and a candidate that uses fewer never displaces it."""
    from canon.ask.pipeline import _best_described
    question = ("How do we define customer properties whose supply was interrupted for more than three hours, "
                "per 1,000 connected properties in the month?")
    neighbour = ctx.by_object["metric.water.leakage_per_property"][0]
    described = ctx.by_object["metric.water.supply_interruption_rate"][0]
    assert _best_described(ctx, neighbour, [described], question, "analyst") == "metric.water.supply_interruption_rate"
    assert _best_described(ctx, described, [neighbour], question, "analyst") == "metric.water.supply_interruption_rate"
    # The metric's own model uses more of a description's words ("flagged"): it is still not what
    # a description of the metric asks for.
    model = ctx.by_object["model.water.fct_supply_interruptions"][0]
    flagged = ("How do we define customer properties whose supply was interrupted, with more than three hours "
               "flagged?")
    assert _best_described(ctx, described, [model], flagged, "analyst") == "metric.water.supply_interruption_rate"
    # Ranked first itself, the model yields to the metric it restates, unless a model is asked about.
    assert _best_described(ctx, model, [described], flagged, "analyst") == "metric.water.supply_interruption_rate"
    assert _best_described(ctx, model, [described], flagged, "analyst", "model") == "model.water.fct_supply_interruptions"



def test_only_prefixed_is_prefixed_over_every_pair_of_words():
    """`only_prefixed` (one pass over the question's stems) equals its definition: some name word
    absent from the question is `prefixed` against a question word that does not join the name's
    words before it ("ontime")."""
    import random

    from canon.ask.understanding.match import _letter_spelled_before, only_prefixed, prefixed

    def reference(words, q_words):
        stems = {q.rstrip("s") for q in q_words}
        for i, w in enumerate(words):
            if len(w) < 3 or w.rstrip("s") in stems:
                continue
            joins = {"".join(words[j:i + 1]).rstrip("s") for j in range(i)}
            if any(prefixed(w, q) and q.rstrip("s") not in joins
                   and not _letter_spelled_before(w.rstrip("s") or w, q.rstrip("s") or q, words[i - 1] if i else "",
                                        q_words[k - 1] if k else "")
                   for k, q in enumerate(q_words)):
                return True
        return False

    vocab = ["delivery", "redelivery", "deliveries", "on", "time", "ontime", "rate", "rates", "voluntary",
             "involuntary", "resolved", "unresolved", "active", "inactive", "cost", "costs", "s", "ss", "ab",
             "abc", "xabc", "sabc", "abcs", "x"]
    rng = random.Random(16)
    for _ in range(20_000):
        name = tuple(rng.choice(vocab) for _ in range(rng.randint(1, 4)))
        q = tuple(rng.choice(vocab) for _ in range(rng.randint(1, 8)))
        assert only_prefixed(name, q) == reference(name, q), (name, q)

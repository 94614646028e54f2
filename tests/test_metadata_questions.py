""""Who owns …" and "is … deprecated" are answered from the governing revision's
metadata (owner, deprecation_date: what dbt-derived documents carry), and a
revision recording neither says so, citing its definition. Energy
documents, a domain no gold set uses."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.pipeline import AskContext, ask
from canon.ask.understanding.parse import detect_intents
from canon.models.documents import Document
from canon.registry.policy import Policy

D = dt.date.fromisoformat


def _model(object_id: str, title: str, text: str, **metadata) -> Document:
    return Document(doc_id=f"{object_id}.v1", object_id=object_id, kind="model_schema", title=title,
                    status="approved", authority=95, version="1", valid_from=D("2025-01-01"),
                    allowed_roles=("analyst",), text=text, metadata=metadata)


@pytest.fixture
def ctx():
    return AskContext(docs=[
        _model("model.energy.fct_meter_reads", "fct_meter_reads",
               "One row per meter per interval. Owner: Grid analytics (group grid). Deprecation date: 2026-09-30.",
               owner="Grid analytics", group="grid", deprecation_date="2026-09-30"),
        _model("model.energy.fct_tariffs", "fct_tariffs", "One row per tariff plan and day."),
    ], policy=Policy(), log_answers=False)


def test_who_owns_is_answered_from_the_owner_metadata(ctx):
    for q in ("Who owns fct_meter_reads?", "Who is responsible for the fct meter reads table?"):
        resp = ask(ctx, q, "analyst", D("2026-06-01"))
        assert resp.action == "answer", q
        assert [e.doc_id for e in resp.evidence] == ["model.energy.fct_meter_reads.v1"]
        assert "owned by Grid analytics" in resp.answer
        assert [c.supported_span for c in resp.claims] == ["Owner: Grid analytics (group grid)."]
    # A revision that records no owner says so (not its definition alone), citing its definition.
    resp = ask(ctx, "Who owns fct_tariffs?", "analyst", D("2026-06-01"))
    assert resp.action == "answer" and "owned by" not in resp.answer
    assert "No owner is recorded for model.energy.fct_tariffs.v1." in resp.answer
    assert resp.answer.endswith("One row per tariff plan and day.")   # what the revision says is still shown
    assert resp.claims[0].supported_span == "One row per tariff plan and day."
    dbt_node = _model("model.energy.dim_sites", "dim_sites", "One row per site.", derived_from_dbt=True)
    ctx.docs = [*ctx.docs, dbt_node]
    resp = ask(ctx, "Who owns dim_sites?", "analyst", D("2026-06-01"))
    assert "No owner is recorded for model.energy.dim_sites.v1 in dbt (no group owner, no meta.owner)." in resp.answer


def test_is_deprecated_reads_the_deprecation_date_against_the_question_date(ctx):
    before = ask(ctx, "Is fct_meter_reads deprecated?", "analyst", D("2026-06-01"))
    assert "is scheduled for deprecation on 2026-09-30" in before.answer
    after = ask(ctx, "Is fct_meter_reads deprecated?", "analyst", D("2026-10-15"))
    assert "was deprecated on 2026-09-30" in after.answer
    assert [c.supported_span for c in after.claims] == ["Deprecation date: 2026-09-30."]
    never = ask(ctx, "Is fct_tariffs deprecated?", "analyst", D("2026-10-15"))
    assert never.action == "answer" and "No deprecation date is recorded for model.energy.fct_tariffs.v1." in never.answer



def test_who_owns_without_a_date_is_asked_of_today_not_answered_with_a_date_question():
    """"Who owns X" and "is X deprecated" are asked in the present: over an object whose revisions
    changed, the governing revision is today's (the injectable clock), and the answer says so.
    A definition question without a date still needs one (tests/test_temporal_phrases.py)."""
    v1 = _model("model.energy.fct_meter_reads", "fct_meter_reads",
                "One row per meter per interval. Owner: Grid analytics.", owner="Grid analytics"
                ).model_copy(update={"valid_to": D("2026-07-01")})
    v2 = Document(doc_id="model.energy.fct_meter_reads.v2", object_id="model.energy.fct_meter_reads",
                  kind="model_schema", title="fct_meter_reads", status="approved", authority=95, version="2",
                  valid_from=D("2026-07-01"), allowed_roles=("analyst",),
                  text="One row per meter per interval, half-hourly. Owner: Metering team. Deprecation date: 2027-03-31.",
                  metadata={"owner": "Metering team", "deprecation_date": "2027-03-31"})
    ctx = AskContext(docs=[v1, v2], policy=Policy(), log_answers=False, clock=lambda: D("2026-11-15"))
    resp = ask(ctx, "Who owns fct_meter_reads?", "analyst")
    assert resp.action == "answer" and resp.as_of == D("2026-11-15")
    assert [e.doc_id for e in resp.evidence] == ["model.energy.fct_meter_reads.v2"]
    assert "owned by Metering team" in resp.answer and "today (2026-11-15)" in resp.answer
    resp = ask(ctx, "Is fct_meter_reads deprecated?", "analyst")
    assert "is scheduled for deprecation on 2027-03-31" in resp.answer
    # A date the question names still decides.
    resp = ask(ctx, "Who owned fct_meter_reads on 2026-03-31?", "analyst")
    assert resp.as_of == D("2026-03-31") and "owned by Grid analytics" in resp.answer
    # Its definition, asked without a date, still asks for one.
    assert ask(ctx, "What is fct_meter_reads?", "analyst").reason == "date_required"


def test_the_keeper_is_asked_by_a_verb_of_keeping_after_who_or_a_team_noun():
    """"Which group maintains X", "what team looks after X" ask for the owner as "who owns X"
    does; "who" opening a relative clause of a description asks for no owner."""
    asks = ["Which group maintains fct_meter_reads?", "What team looks after fct_meter_reads?",
            "Who maintained fct_meter_reads in 2025?", "Who was responsible for fct_meter_reads?",
            "Which department is responsible for fct_meter_reads?", "Who looks after fct_meter_reads?"]
    assert all("owner" in detect_intents(q) for q in asks)
    describes = ["How is the share of customers who managed a renewal defined?",
                 "What is the share of customers who maintained a balance?",
                 "What is the number of meters which runs on prepaid tariffs?"]
    assert not any("owner" in detect_intents(q) for q in describes)

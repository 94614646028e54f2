"""Governed metric values over a real dbt build: load_raw → dbt build → MetricEngine.

The governing definitions are the registry's own documents (rendered from the
temporary build's artifacts by canon.sources.dbt.documents); every expected number is an
independent SQL over the raw tables, never the mart the engine reads.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from decimal import Decimal

import duckdb
import pytest

from canon.core.config import CanonPaths
from canon.models.documents import Document
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_artifacts
from canon.sources.dbt.semantic.metric_values import (
    MetricEngine,
    NotComputable,
    UnsafeExpression,
    evaluate_expression,
    metric_name_of,
    query_id_of,
)
from canon.sources.demo.raw_data import load_raw

try:  # the dbt subprocess helper of the dbt-project tests (same env, same flags)
    from test_dbt_project import _dbt
except ImportError:  # pragma: no cover - e.g. --import-mode=importlib
    import os
    import subprocess
    import sys
    from pathlib import Path

    from canon.core.config import PROJECT_ROOT

    def _dbt(paths: CanonPaths, *args: str) -> subprocess.CompletedProcess:
        exe = Path(sys.executable).with_name("dbt")
        env = {**os.environ, "CANON_HOME": str(paths.home), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
               "DO_NOT_TRACK": "1"}
        project = str(PROJECT_ROOT / "dbt_project")
        return subprocess.run(
            [str(exe) if exe.exists() else "dbt", *args, "--project-dir", project, "--profiles-dir", project,
             "--target-path", str(paths.dbt_target_dir), "--log-path", str(paths.home / "dbt_logs")],
            env=env, capture_output=True, text=True, timeout=300)


AUG, SEP = dt.date(2026, 8, 1), dt.date(2026, 9, 1)
JUN, JUL = dt.date(2026, 6, 1), dt.date(2026, 7, 1)


@pytest.fixture(scope="session")
def metric_home(tmp_path_factory) -> CanonPaths:
    """One real dbt build for the module (the warehouse is only read afterwards)."""
    paths = CanonPaths(tmp_path_factory.mktemp("metric_home").resolve())
    paths.dbt_target_dir.mkdir(parents=True)
    load_raw(paths.raw_db, dt.datetime.now(dt.timezone.utc))
    build = _dbt(paths, "build")
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    return paths


@pytest.fixture(scope="module")
def semantic(metric_home: CanonPaths) -> dict:
    return json.loads((metric_home.dbt_target_dir / "semantic_manifest.json").read_text())


@pytest.fixture(scope="module")
def engine(metric_home: CanonPaths) -> MetricEngine:
    # A Path to the target folder: the engine reads semantic_manifest.json itself.
    return MetricEngine(metric_home.dbt_target_dir, metric_home.warehouse_db)


@pytest.fixture(scope="module")
def definitions(metric_home: CanonPaths) -> dict[str, Document]:
    """The governed metric documents exactly as the registry renders them."""
    bundle = read_artifacts(metric_home.dbt_target_dir)
    docs = documents_from_artifacts(bundle.governed, bundle.nodes.to_pylist(), bundle.edges.to_pylist(),
                                    bundle.freshness, revision=bundle.revision)
    return {d.doc_id: d for d in docs if d.kind == "metric_definition"}


def _raw(paths: CanonPaths, sql: str):
    con = duckdb.connect(str(paths.raw_db), read_only=True)
    try:
        return con.execute(sql).fetchall()[0][0]
    finally:
        con.close()


def _doc(doc_id: str, unique_id: str) -> Document:
    return Document(doc_id=doc_id, object_id=f"metric.test.{doc_id}", kind="metric_definition", title=doc_id,
                    status="approved", authority=100, version="1", valid_from="2026-01-01",
                    allowed_roles=["analyst"], text=f"test definition {doc_id}",
                    metadata={"dbt_unique_id": unique_id, "dbt_resource_type": "metric"})


# --------------------------------------------------------------------------- governed values


def test_net_revenue_v2_august_2026_matches_raw_tables(engine, definitions, metric_home):
    doc = definitions["metric.net_revenue.v2"]
    assert doc.status.value == "approved" and doc.in_effect(dt.date(2026, 8, 31))
    assert metric_name_of(doc) == "net_revenue_v2"

    result = engine.value(doc, AUG, SEP)
    assert result is not None, engine.last_reason

    # The v2 rules, straight from the raw tables (the same rule as test_dbt_project).
    expected = _raw(metric_home, """
        with fx as (select rate_date, currency_code, usd_rate from finance.fx_daily),
        lines as (
            select sum((l.gross_amount - l.discount_amount) * fx.usd_rate) as usd
            from commerce.order_lines l
            join fx on fx.currency_code = l.currency_code and fx.rate_date = l.transaction_date
            where l.status = 'settled'
              and l.settlement_date >= date '2026-08-01' and l.settlement_date < date '2026-09-01'
        ),
        refunds as (
            select coalesce(sum(r.refund_amount * fx.usd_rate), 0) as usd
            from commerce.refunds r
            join fx on fx.currency_code = r.currency_code and fx.rate_date = r.refund_date
            where r.refund_date >= date '2026-08-01' and r.refund_date < date '2026-09-01'
        ),
        credit_notes as (
            select coalesce(sum(c.credit_note_amount * fx.usd_rate), 0) as usd
            from billing.credit_notes c
            join fx on fx.currency_code = c.currency_code and fx.rate_date = c.issue_date
            where c.issue_date >= date '2026-08-01' and c.issue_date < date '2026-09-01'
        )
        select lines.usd - refunds.usd - credit_notes.usd from lines, refunds, credit_notes
    """)
    assert expected > 0
    assert Decimal(result["value_exact"]).quantize(Decimal("0.01")) == expected.quantize(Decimal("0.01"))
    assert result["value"] == pytest.approx(float(expected), abs=0.005)

    events = _raw(metric_home, """
        select (select count(*) from commerce.order_lines where status = 'settled'
                  and settlement_date >= date '2026-08-01' and settlement_date < date '2026-09-01')
             + (select count(*) from commerce.refunds
                  where refund_date >= date '2026-08-01' and refund_date < date '2026-09-01')
             + (select count(*) from billing.credit_notes
                  where issue_date >= date '2026-08-01' and issue_date < date '2026-09-01')
    """)
    assert result["rows_scanned"] == events
    assert (result["metric"], result["unit"], result["doc_id"]) == ("net_revenue_v2", "USD", "metric.net_revenue.v2")
    assert result["evidence_revision"] == doc.content_hash
    assert (result["start"], result["end"]) == ("2026-08-01", "2026-09-01")


def test_returned_sql_is_the_query_that_ran(engine, definitions, metric_home):
    result = engine.value(definitions["metric.net_revenue.v2"], AUG, SEP)
    sql = result["sql"]
    assert '"analytics"."fct_revenue_v2"' in sql
    assert "\"warehouse\"" not in sql  # the warehouse file's own catalog is stripped
    assert "\"recognition_date\" >= date '2026-08-01'" in sql
    assert "\"recognition_date\" < date '2026-09-01'" in sql
    assert 'sum("net_revenue_usd")' in sql
    assert result["query_id"] == query_id_of(sql) and result["query_id"].startswith("q_")
    # Re-running the SQL verbatim on a read-only connection gives the same value.
    con = duckdb.connect(str(metric_home.warehouse_db), read_only=True)
    try:
        value, rows = con.execute(sql).fetchall()[0]
    finally:
        con.close()
    assert (str(value), rows) == (result["value_exact"], result["rows_scanned"])
    # Same question, same SQL, same id; another window, another id.
    assert engine.value(definitions["metric.net_revenue.v2"], AUG, SEP)["query_id"] == result["query_id"]
    assert engine.value(definitions["metric.net_revenue.v2"], JUL, AUG)["query_id"] != result["query_id"]


def test_net_revenue_v1_june_2026_matches_raw_tables(engine, definitions, metric_home):
    doc = definitions["metric.net_revenue.v1"]
    assert doc.in_effect(dt.date(2026, 6, 30))
    result = engine.value(doc, JUN, JUL)
    assert result is not None, engine.last_reason
    # v1: settled lines recognized on settlement_date; all of a line's refunds are
    # netted against it; everything at the settlement-date FX rate.
    expected = _raw(metric_home, """
        with refunds as (
            select order_line_id, sum(refund_amount) as amount from commerce.refunds group by order_line_id
        )
        select sum((l.gross_amount - l.discount_amount - coalesce(r.amount, 0)) * fx.usd_rate)
        from commerce.order_lines l
        left join refunds r on r.order_line_id = l.order_line_id
        join finance.fx_daily fx on fx.currency_code = l.currency_code and fx.rate_date = l.settlement_date
        where l.status = 'settled'
          and l.settlement_date >= date '2026-06-01' and l.settlement_date < date '2026-07-01'
    """)
    settled = _raw(metric_home, """
        select count(*) from commerce.order_lines where status = 'settled'
          and settlement_date >= date '2026-06-01' and settlement_date < date '2026-07-01'
    """)
    assert Decimal(result["value_exact"]).quantize(Decimal("0.01")) == expected.quantize(Decimal("0.01"))
    assert result["rows_scanned"] == settled > 0
    assert '"analytics"."fct_revenue_v1"' in result["sql"] and '"settlement_date" >= date \'2026-06-01\'' in result["sql"]
    assert result["unit"] == "USD"


def test_half_open_windows_add_up(engine, definitions):
    doc = definitions["metric.net_revenue.v2"]
    whole = engine.value(doc, JUL, SEP)
    halves = [engine.value(doc, JUL, AUG), engine.value(doc, AUG, SEP)]
    assert whole["value"] == pytest.approx(sum(h["value"] for h in halves), abs=1e-6)
    assert whole["rows_scanned"] == sum(h["rows_scanned"] for h in halves)
    with pytest.raises(ValueError):
        engine.value(doc, SEP, AUG)


def test_window_without_rows_has_no_value(engine, definitions):
    result = engine.value(definitions["metric.net_revenue.v2"], dt.date(2030, 1, 1), dt.date(2030, 2, 1))
    assert result["value"] is None and result["rows_scanned"] == 0


# --------------------------------------------------------------------------- not computable


def test_unknown_metric_or_non_metric_document_is_none(engine, definitions):
    assert engine.value(_doc("metric.nope", "metric.canon_demo.no_such_metric"), AUG, SEP) is None
    assert "no_such_metric" in engine.last_reason and "not in the semantic manifest" in engine.last_reason
    plain = _doc("wiki.page", "model.canon_demo.fct_revenue.v2")
    assert engine.value(plain, AUG, SEP) is None
    assert "names no dbt metric" in engine.last_reason


def _extended(semantic: dict) -> dict:
    """The build's semantic manifest plus metrics of every other type on the same model."""
    sm = copy.deepcopy(semantic)
    v2 = next(m for m in sm["semantic_models"] if m["name"] == "revenue_events_v2")
    v2["measures"].append({"name": "revenue_events_v2_count", "agg": "count", "expr": "revenue_event_id",
                           "agg_time_dimension": None, "non_additive_dimension": None, "agg_params": None})

    def simple(name, measure, where=None):
        return {"name": name, "type": "simple", "config": {"meta": {}},
                "type_params": {"measure": {"name": measure, "filter": None, "alias": None}},
                "filter": {"where_filters": [{"where_sql_template": where}]} if where else None}

    def inp(name, alias=None, **extra):
        return {"name": name, "alias": alias, "filter": None, "offset_window": None, "offset_to_grain": None, **extra}

    sm["metrics"] += [
        simple("gross_v2", "gross_amount_v2_usd"),
        simple("discounts_v2", "discount_amount_v2_usd"),
        simple("refunds_v2", "refund_amount_v2_usd"),
        simple("credit_notes_v2", "credit_note_amount_v2_usd"),
        simple("refund_events_v2", "revenue_events_v2_count",
               "{{ Dimension('revenue_event__event_type') }} = 'refund'"),
        simple("injected_v2", "revenue_events_v2_count",
               "{{ Dimension('revenue_event__event_type') }} = 'refund' or 1=1"),
        simple("joined_v2", "revenue_events_v2_count", "{{ Dimension('customer__region') }} = 'EU'"),
        {"name": "net_rebuilt_v2", "type": "derived", "filter": None, "config": {"meta": {}},
         "type_params": {"expr": "g - d - refunds_v2 - credit_notes_v2",
                         "metrics": [inp("gross_v2", "g"), inp("discounts_v2", "d"),
                                     inp("refunds_v2"), inp("credit_notes_v2")]}},
        {"name": "refund_rate_v2", "type": "ratio", "filter": None, "config": {"meta": {}},
         "type_params": {"numerator": inp("refunds_v2"), "denominator": inp("gross_v2")}},
        {"name": "evil_v2", "type": "derived", "filter": None, "config": {"meta": {}},
         "type_params": {"expr": "__import__('os').system('true')", "metrics": [inp("gross_v2")]}},
        {"name": "gross_wow_v2", "type": "derived", "filter": None, "config": {"meta": {}},
         "type_params": {"expr": "gross_v2 - prev",
                         "metrics": [inp("gross_v2"), inp("gross_v2", "prev", offset_window={"count": 7, "granularity": "day"})]}},
        {"name": "net_revenue_v2_running", "type": "cumulative", "filter": None, "config": {"meta": {}},
         "type_params": {"measure": {"name": "net_revenue_v2_usd"},
                         "cumulative_type_params": {"window": None, "grain_to_date": "month"}}},
    ]
    return sm


@pytest.fixture(scope="module")
def extended(semantic, metric_home) -> MetricEngine:
    return MetricEngine(_extended(semantic), metric_home.warehouse_db)


def _uid(name: str) -> Document:
    return _doc(f"metric.{name}", f"metric.canon_demo.{name}")


def test_cumulative_metric_is_none_with_reason(extended):
    assert extended.value(_uid("net_revenue_v2_running"), AUG, SEP) is None
    assert "cumulative" in extended.last_reason


def test_offset_and_joined_filter_are_not_computed(extended):
    assert extended.value(_uid("gross_wow_v2"), AUG, SEP) is None
    assert "offset" in extended.last_reason
    assert extended.value(_uid("joined_v2"), AUG, SEP) is None
    assert "customer__region" in extended.last_reason


# --------------------------------------------------------------------------- derived, ratio, filters


def test_derived_metric_rebuilds_net_revenue(extended, definitions):
    net = extended.value(definitions["metric.net_revenue.v2"], AUG, SEP)
    rebuilt = extended.value(_uid("net_rebuilt_v2"), AUG, SEP)
    assert rebuilt is not None, extended.last_reason
    assert rebuilt["value"] == pytest.approx(net["value"], abs=1e-6)
    assert rebuilt["unit"] == "USD"
    assert len(rebuilt["queries"]) == 4 and rebuilt["sql"].count("select") == 4
    assert rebuilt["query_id"] == query_id_of(rebuilt["sql"])


def test_ratio_metric(extended):
    ratio = extended.value(_uid("refund_rate_v2"), AUG, SEP)
    refunds = extended.value(_uid("refunds_v2"), AUG, SEP)["value"]
    gross = extended.value(_uid("gross_v2"), AUG, SEP)["value"]
    assert ratio["value"] == pytest.approx(refunds / gross) and 0 < ratio["value"] < 1
    assert ratio["unit"] == ""


def test_dimension_filter_is_rendered_and_applied(extended, metric_home):
    result = extended.value(_uid("refund_events_v2"), AUG, SEP)
    assert result is not None, extended.last_reason
    assert "\"event_type\" = 'refund'" in result["sql"]
    assert 'count("revenue_event_id")' in result["sql"]
    expected = _raw(metric_home, """select count(*) from commerce.refunds
                                    where refund_date >= date '2026-08-01' and refund_date < date '2026-09-01'""")
    assert result["value"] == expected > 0


def test_filter_text_is_never_passed_through(extended):
    assert extended.value(_uid("injected_v2"), AUG, SEP) is None
    assert "not supported" in extended.last_reason
    with pytest.raises(NotComputable):
        extended.plan("injected_v2", AUG, SEP)


def test_derived_expression_evaluator_is_arithmetic_only(extended):
    assert evaluate_expression("a - b * 2 + -c / 4", {"a": 10, "b": 2, "c": 8}) == 4.0
    assert evaluate_expression("(a + b) / c", {"a": 1, "b": 1, "c": 0}) is None  # SQL-like NULL
    assert evaluate_expression("a + b", {"a": 1, "b": None}) is None
    for bad in ("__import__('os')", "a.__class__", "a.real", "a[0]", "a if b else c", "a ** 2",
                "(lambda: 1)()", "a < b", "'text'", "a; b", "__builtins__", "True + a"):
        with pytest.raises(UnsafeExpression):
            evaluate_expression(bad, {"a": 1.0, "b": 2.0, "c": 3.0})
    # Inside a metric definition the same rule holds: no value, a reason, nothing executed.
    assert extended.value(_uid("evil_v2"), AUG, SEP) is None
    assert "Call" in extended.last_reason or "Attribute" in extended.last_reason


def test_a_value_over_a_period_the_definition_changes_in_is_computed_per_sub_period(engine, definitions):
    """June–July 2026 spans net revenue v1 → v2 (2026-07-01): each month under its own revision, never summed."""
    from canon.ask.pipeline import AskContext, ask
    from canon.registry.policy import Policy

    ctx = AskContext(docs=sorted(definitions.values(), key=lambda d: d.doc_id), policy=Policy(),
                     metric_values=engine.value, log_answers=False)
    resp = ask(ctx, "What was net revenue from June to July 2026?", "analyst")
    assert resp.action == "calculate", resp.answer
    parts = resp.calculation["parts"]
    assert resp.calculation["kind"] == "metric_value_by_period"
    assert [(p["doc_id"], p["period_start"], p["period_end"]) for p in parts] == [
        ("metric.net_revenue.v1", "2026-06-01", "2026-07-01"), ("metric.net_revenue.v2", "2026-07-01", "2026-08-01")]
    assert parts[0]["value"] == pytest.approx(engine.value(definitions["metric.net_revenue.v1"], JUN, JUL)["value"])
    assert parts[1]["value"] == pytest.approx(
        engine.value(definitions["metric.net_revenue.v2"], JUL, AUG)["value"])
    assert [e.doc_id for e in resp.evidence] == ["metric.net_revenue.v1", "metric.net_revenue.v2"]
    # Without a semantic layer a person still decides.
    ctx.metric_values = None
    assert ask(ctx, "What was net revenue from June to July 2026?", "analyst").action == "human_review"


def test_a_value_on_one_day_is_the_value_over_that_day(engine, definitions):
    """"What was net revenue on 2026-08-14" asks for a number: the semantic layer's value over
    [day, day + 1) under the revision governing that day; the same words beside "definition"
    ask for the definition (canon/ask/understanding/parse.py, DEFINITION_WORDS)."""
    from canon.ask.pipeline import AskContext, ask
    from canon.registry.policy import Policy

    ctx = AskContext(docs=sorted(definitions.values(), key=lambda d: d.doc_id), policy=Policy(),
                     metric_values=engine.value, log_answers=False)
    day = dt.date(2026, 8, 14)
    expected = engine.value(definitions["metric.net_revenue.v2"], day, day + dt.timedelta(days=1))
    assert expected is not None, engine.last_reason
    for question in ("What was net revenue on 2026-08-14?", "How much net revenue did we book on August 14, 2026?"):
        resp = ask(ctx, question, "analyst")
        assert resp.action == "calculate", (question, resp.answer)
        assert resp.calculation["value"] == pytest.approx(expected["value"]), question
        assert resp.evidence[0].doc_id == "metric.net_revenue.v2"
    resp = ask(ctx, "What was the net revenue definition in force on 2026-08-14?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == "metric.net_revenue.v2"


def test_a_value_asked_per_month_is_one_value_per_month(engine, definitions):
    """"What was net revenue by month in Q2 2026 … Q3 2026" asks for one value per month, each
    under the revision that governs it, never the quarter's total; "by region" asks for a
    breakdown the semantic layer does not compute: no total is given in its place
    (canon/ask/understanding/qualifiers.py)."""
    from canon.ask.pipeline import AskContext, ask
    from canon.registry.policy import Policy

    ctx = AskContext(docs=sorted(definitions.values(), key=lambda d: d.doc_id), policy=Policy(),
                     metric_values=engine.value, log_answers=False)
    months = [(dt.date(2026, 6, 1), dt.date(2026, 7, 1), "metric.net_revenue.v1"),
              (dt.date(2026, 7, 1), dt.date(2026, 8, 1), "metric.net_revenue.v2"),
              (dt.date(2026, 8, 1), dt.date(2026, 9, 1), "metric.net_revenue.v2")]
    for question in ("What was net revenue by month from June to August 2026?",
                     "What was net revenue for each month between June and August 2026?"):
        resp = ask(ctx, question, "analyst")
        assert resp.action == "calculate", (question, resp.answer)
        assert resp.calculation["kind"] == "metric_value_by_period"
        parts = resp.calculation["parts"]
        assert [(p["doc_id"], p["period_start"], p["period_end"]) for p in parts] == [
            (d, a.isoformat(), b.isoformat()) for a, b, d in months], question
        for p, (a, b, d) in zip(parts, months):
            assert p["value"] == pytest.approx(engine.value(definitions[d], a, b)["value"])
    resp = ask(ctx, "What was net revenue by region in July 2026?", "analyst")
    assert resp.action == "abstain" and resp.reason == "metric_not_computable" and resp.calculation is None

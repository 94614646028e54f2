"""The demo dbt project and its raw data, for real: load_raw → dbt build → dbt source freshness.

No mocks: a temporary CANON_HOME gets a raw.duckdb from `canon.sources.demo.raw_data.load_raw`,
then the installed dbt (a subprocess, so dbt's global state never leaks into other
tests) builds the warehouse and writes its artifacts under the temporary home.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from canon.core.config import PROJECT_ROOT, CanonPaths
from canon.sources.demo import raw_data
from canon.sources.demo.raw_data import load_raw

DBT_PROJECT = PROJECT_ROOT / "dbt_project"
RAW_TABLES = (
    "raw.commerce.order_lines",
    "raw.commerce.refunds",
    "raw.billing.credit_notes",
    "raw.finance.fx_daily",
)
METRICS = ("net_revenue_v1", "net_revenue_v2", "net_revenue_v3_draft", "gross_margin_draft")
METRIC_META_KEYS = {
    "object_id", "doc_id", "version", "status", "authority", "valid_from", "valid_to",
    "allowed_roles", "supersedes", "model_version", "lineage_doc_id", "definition",
}
MODEL_META_KEYS = {
    "object_id", "doc_id", "version", "status", "authority", "valid_from", "valid_to",
    "allowed_roles", "supersedes", "grain", "primary_key",
}


def _dbt_executable() -> str:
    exe = Path(sys.executable).with_name("dbt")
    return str(exe) if exe.exists() else "dbt"


def _dbt(paths: CanonPaths, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CANON_HOME": str(paths.home),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DO_NOT_TRACK": "1",
    }
    cmd = [
        _dbt_executable(), *args,
        "--project-dir", str(DBT_PROJECT),
        "--profiles-dir", str(DBT_PROJECT),
        "--target-path", str(paths.dbt_target_dir),
        "--log-path", str(paths.home / "dbt_logs"),
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> CanonPaths:
    paths = CanonPaths(tmp_path_factory.mktemp("canon_home").resolve())
    paths.dbt_target_dir.mkdir(parents=True)
    load_raw(paths.raw_db, dt.datetime.now(dt.timezone.utc))
    build = _dbt(paths, "build")
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    fresh = _dbt(paths, "source", "freshness")
    assert fresh.returncode == 0, fresh.stdout[-4000:] + fresh.stderr[-2000:]
    return paths


def _artifact(paths: CanonPaths, name: str) -> dict:
    return json.loads((paths.dbt_target_dir / name).read_text())


def _warehouse(paths: CanonPaths) -> duckdb.DuckDBPyConnection:
    """An in-memory session with both files attached read-only (as a reader would)."""
    con = duckdb.connect()
    con.execute(f"attach '{paths.warehouse_db}' as warehouse (read_only)")
    con.execute(f"attach '{paths.raw_db}' as raw (read_only)")
    return con


def _one(con: duckdb.DuckDBPyConnection, sql: str):
    return con.execute(sql).fetchall()[0][0]


# --------------------------------------------------------------------------- dbt build


def test_build_succeeds_with_every_node_passing(built: CanonPaths):
    results = _artifact(built, "run_results.json")["results"]
    statuses = {r["unique_id"]: r["status"] for r in results}
    assert statuses, "dbt build ran nothing"
    bad = {uid: s for uid, s in statuses.items() if s not in ("success", "pass")}
    assert not bad
    assert statuses["model.canon_demo.fct_revenue.v2"] == "success"
    assert sum(uid.startswith("test.") for uid in statuses) >= 20


def test_fct_revenue_versions_have_their_grain(built: CanonPaths):
    con = _warehouse(built)
    settled = _one(con, "select count(*) from raw.commerce.order_lines where status = 'settled'")
    refunds = _one(con, "select count(*) from raw.commerce.refunds")
    credit_notes = _one(con, "select count(*) from raw.billing.credit_notes")

    # v1: one row per settled order line, keyed by order_line_id.
    v1_rows, v1_keys = con.execute(
        "select count(*), count(distinct order_line_id) from warehouse.analytics.fct_revenue_v1"
    ).fetchall()[0]
    assert v1_rows == v1_keys == settled

    # v2: one row per recognized revenue event, of the three event types.
    by_type = dict(con.execute(
        "select event_type, count(*) from warehouse.analytics.fct_revenue_v2 group by event_type"
    ).fetchall())
    assert by_type == {"order_line": settled, "refund": refunds, "credit_note": credit_notes}
    assert _one(con, "select count(distinct revenue_event_id) from warehouse.analytics.fct_revenue_v2") \
        == settled + refunds + credit_notes

    # v3 (draft) keeps v2's events and adds shipping to net revenue.
    v2_net, v3_net, shipping = con.execute("""
        select (select sum(net_revenue_amount) from warehouse.analytics.fct_revenue_v2),
               (select sum(net_revenue_amount) from warehouse.analytics.fct_revenue_v3),
               (select sum(shipping_amount) from raw.commerce.order_lines where status = 'settled')
    """).fetchall()[0]
    assert v3_net - v2_net == shipping


def test_net_revenue_v2_for_august_2026_matches_independent_sql(built: CanonPaths):
    con = _warehouse(built)
    # Straight from the raw tables: the v2 rules as the governed definition states them.
    expected = _one(con, """
        with fx as (select rate_date, currency_code, usd_rate from raw.finance.fx_daily),
        lines as (
            select sum((l.gross_amount - l.discount_amount) * fx.usd_rate) as usd
            from raw.commerce.order_lines l
            join fx on fx.currency_code = l.currency_code and fx.rate_date = l.transaction_date
            where l.status = 'settled'
              and l.settlement_date >= date '2026-08-01' and l.settlement_date < date '2026-09-01'
        ),
        refunds as (
            select coalesce(sum(r.refund_amount * fx.usd_rate), 0) as usd
            from raw.commerce.refunds r
            join fx on fx.currency_code = r.currency_code and fx.rate_date = r.refund_date
            where r.refund_date >= date '2026-08-01' and r.refund_date < date '2026-09-01'
        ),
        credit_notes as (
            select coalesce(sum(c.credit_note_amount * fx.usd_rate), 0) as usd
            from raw.billing.credit_notes c
            join fx on fx.currency_code = c.currency_code and fx.rate_date = c.issue_date
            where c.issue_date >= date '2026-08-01' and c.issue_date < date '2026-09-01'
        )
        select lines.usd - refunds.usd - credit_notes.usd from lines, refunds, credit_notes
    """)
    actual = _one(con, """
        select sum(net_revenue_usd) from warehouse.analytics.fct_revenue_v2
        where recognition_date >= date '2026-08-01' and recognition_date < date '2026-09-01'
    """)
    assert isinstance(actual, Decimal) and actual > 0
    assert actual.quantize(Decimal("0.01")) == expected.quantize(Decimal("0.01"))
    # The month exercises all three rules (so the comparison means something).
    types = {r[0] for r in con.execute("""
        select distinct event_type from warehouse.analytics.fct_revenue_v2
        where recognition_date >= date '2026-08-01' and recognition_date < date '2026-09-01'
    """).fetchall()}
    assert types == {"order_line", "refund", "credit_note"}


# --------------------------------------------------------------------------- artifacts


def test_source_freshness_all_four_pass(built: CanonPaths):
    results = _artifact(built, "sources.json")["results"]
    assert {r["unique_id"]: r["status"] for r in results} == {
        "source.canon_demo.commerce.order_lines": "pass",
        "source.canon_demo.commerce.refunds": "pass",
        "source.canon_demo.billing.credit_notes": "pass",
        "source.canon_demo.finance.fx_daily": "pass",
    }
    warn_hours = {r["unique_id"]: r["criteria"]["warn_after"]["count"] for r in results}
    assert warn_hours["source.canon_demo.finance.fx_daily"] == 26
    assert warn_hours["source.canon_demo.commerce.order_lines"] == 2


def test_manifest_has_versioned_fct_revenue_with_governance_meta(built: CanonPaths):
    manifest = _artifact(built, "manifest.json")
    nodes = manifest["nodes"]
    v2 = nodes["model.canon_demo.fct_revenue.v2"]
    assert v2["version"] == 2 and v2["latest_version"] == 2
    canon = v2["config"]["meta"]["canon"]
    assert set(canon) == MODEL_META_KEYS
    assert canon["doc_id"] == "model.fct_revenue.v2"
    assert canon["object_id"] == "model.analytics.fct_revenue"
    assert canon["supersedes"] == "model.fct_revenue.v1"
    assert canon["primary_key"] == "revenue_event_id"
    assert "model.canon_demo.stg_billing__credit_notes" in v2["depends_on"]["nodes"]

    v1, v3 = nodes["model.canon_demo.fct_revenue.v1"], nodes["model.canon_demo.fct_revenue.v3"]
    assert v1["config"]["meta"]["canon"]["primary_key"] == "order_line_id"
    assert v1["config"]["meta"]["canon"]["valid_to"] == "2026-07-01"
    assert v3["latest_version"] == 2  # a prerelease: numerically larger, not latest
    assert v3["config"]["meta"]["canon"]["status"] == "draft"

    relations = {s["unique_id"]: s["relation_name"] for s in manifest["sources"].values()}
    assert sorted(relations.values()) == sorted(RAW_TABLES)
    assert set(manifest["metrics"]) == {f"metric.canon_demo.{m}" for m in METRICS}


def test_semantic_manifest_has_metrics_with_meta(built: CanonPaths):
    semantic = _artifact(built, "semantic_manifest.json")
    metrics = {m["name"]: m for m in semantic["metrics"]}
    assert set(metrics) == set(METRICS)
    for name, metric in metrics.items():
        assert set(metric["config"]["meta"]["canon"]) == METRIC_META_KEYS, name
    v2 = metrics["net_revenue_v2"]["config"]["meta"]["canon"]
    assert (v2["doc_id"], v2["status"], v2["authority"], v2["model_version"]) == \
        ("metric.net_revenue.v2", "approved", 100, 2)
    assert v2["supersedes"] == "metric.net_revenue.v1"
    assert metrics["gross_margin_draft"]["config"]["meta"]["canon"]["object_id"] == "metric.finance.gross_margin"

    models = {s["name"]: s["node_relation"]["alias"] for s in semantic["semantic_models"]}
    assert models == {
        "revenue_order_lines_v1": "fct_revenue_v1",
        "revenue_events_v2": "fct_revenue_v2",
        "revenue_events_v3_draft": "fct_revenue_v3",
    }
    assert semantic["project_configuration"]["time_spines"][0]["primary_column"]["name"] == "date_day"


# --------------------------------------------------------------------------- load_raw


NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)


def _raw_snapshot(raw_db: Path) -> dict[str, tuple]:
    con = duckdb.connect(str(raw_db), read_only=True)
    try:
        out = {}
        for rel in RAW_TABLES:
            table = rel.removeprefix("raw.")
            out[rel] = (
                _one(con, f"select max(loaded_at) from {table}"),
                _one(con, f"select md5(string_agg(t::varchar, '|' order by t::varchar)) "
                          f"from (select * exclude (loaded_at) from {table}) t"),
            )
        return out
    finally:
        con.close()


def test_load_raw_counts_recency_and_idempotence(tmp_path: Path):
    raw_db = tmp_path / "raw.duckdb"
    counts = load_raw(raw_db, NOW)
    assert list(counts) == list(RAW_TABLES)
    assert all(n > 0 for n in counts.values())
    assert 500 <= counts["raw.commerce.order_lines"] <= 5000

    con = duckdb.connect(str(raw_db), read_only=True)
    try:
        for rel, n in counts.items():
            assert _one(con, f"select count(*) from {rel.removeprefix('raw.')}") == n
        # FX: one row per day per currency over the whole covered range.
        days = (raw_data.LAST_DAY - raw_data.FIRST_DAY).days + 1
        assert counts["raw.finance.fx_daily"] == days * 3
        assert con.execute(
            "select min(rate_date), max(rate_date), count(distinct currency_code) from finance.fx_daily"
        ).fetchall()[0] == (raw_data.FIRST_DAY, raw_data.LAST_DAY, 3)
        assert {r[0] for r in con.execute("select distinct currency_code from commerce.order_lines").fetchall()} \
            == {"USD", "EUR", "GBP"}
        assert {r[0] for r in con.execute("select distinct status from commerce.order_lines").fetchall()} \
            == {"settled", "pending"}
        assert _one(con, "select max(settlement_date) from commerce.order_lines") <= raw_data.LAST_DAY
    finally:
        con.close()

    naive_now = NOW.replace(tzinfo=None)
    first = _raw_snapshot(raw_db)
    for rel in RAW_TABLES[:3]:  # commerce/billing: a few minutes old (SLA 2 h)
        age = naive_now - first[rel][0]
        assert dt.timedelta(minutes=1) <= age <= dt.timedelta(minutes=15), rel
    fx_age = naive_now - first["raw.finance.fx_daily"][0]
    assert dt.timedelta(hours=1) <= fx_age <= dt.timedelta(hours=6)  # SLA 26 h

    # Re-running is idempotent: same counts, same data; only loaded_at follows `now`.
    later = NOW + dt.timedelta(hours=1)
    assert load_raw(raw_db, later) == counts
    second = _raw_snapshot(raw_db)
    for rel in RAW_TABLES:
        assert second[rel][1] == first[rel][1]
        assert second[rel][0] - first[rel][0] == dt.timedelta(hours=1)


def test_load_raw_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    raw_db = tmp_path / "raw.duckdb"
    load_raw(raw_db, NOW)
    before = _raw_snapshot(raw_db)
    # Break the last table's DDL: the tables already rewritten in this run must roll back.
    monkeypatch.setitem(raw_data._DDL, "raw.finance.fx_daily", "create or replace table finance.fx_daily (")
    with pytest.raises(duckdb.Error):
        load_raw(raw_db, NOW + dt.timedelta(hours=5))
    assert _raw_snapshot(raw_db) == before

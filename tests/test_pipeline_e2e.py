"""The whole product from a clean CANON_HOME: the main Dagster job with real
dbt, DuckDB, LanceDB and the real embedding model, then the CLI a user runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from definitions import MAIN_JOB, build_definitions

ROOT = Path(__file__).resolve().parents[1]
CANON = str(Path(sys.executable).with_name("canon"))
SOURCES = {"raw.commerce.order_lines", "raw.commerce.refunds", "raw.billing.credit_notes", "raw.finance.fx_daily"}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("canon_home")
    old = os.environ.get("CANON_HOME")
    os.environ["CANON_HOME"] = str(home)
    try:
        defs = build_definitions()
        with dg.DagsterInstance.ephemeral() as instance:
            result = defs.resolve_job_def(MAIN_JOB).execute_in_process(instance=instance, raise_on_error=False)
        yield home, result
    finally:
        if old is None:
            os.environ.pop("CANON_HOME", None)
        else:
            os.environ["CANON_HOME"] = old


def _cli(home, *args) -> dict:
    env = {**os.environ, "CANON_HOME": str(home)}
    out = subprocess.run([CANON, *args, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_main_job_materializes_every_asset_and_passes_every_check(home):
    _, result = home
    failures = [e.step_key for e in result.get_step_failure_events()]
    assert result.success, failures
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    for key in ("raw/commerce/order_lines", "canon/dbt_nodes", "canon/lineage_edges", "canon/evidence_registry",
                "canon/definitions", "canon/knowledge_index", "canon/eval_report", "fct_revenue_v2"):
        assert key in materialized, key
    checks = [e.event_specific_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert len(checks) > 50  # dbt tests + source freshness + definition, registry and release-gate checks
    assert [c.check_name for c in checks if not c.passed] == []
    names = {c.check_name for c in checks}
    assert {"source_freshness", "no_overlapping_approved_revisions", "zero_permission_leaks"} <= names


def test_resolve_from_real_dbt_artifacts(home):
    h, _ = home
    r = _cli(h, "resolve", "metric.finance.net_revenue", "--as-of", "2026-08-31", "--role", "analyst")
    assert r["action"] == "answer" and r["evidence"][0]["doc_id"] == "metric.net_revenue.v2"
    r = _cli(h, "resolve", "metric.finance.net_revenue", "--as-of", "2026-06-30", "--role", "analyst")
    assert r["evidence"][0]["doc_id"] == "metric.net_revenue.v1"
    r = _cli(h, "resolve", "metric.finance.net_revenue", "--role", "analyst")
    assert r["action"] == "clarify" and len(r["options"]) == 2


def test_lineage_walks_the_graph_to_the_raw_sources(home):
    h, _ = home
    r = _cli(h, "lineage", "metric.finance.net_revenue", "--as-of", "2026-08-31", "--role", "analyst")
    nodes = {n["id"]: n for n in r["lineage"]["nodes"]}
    assert "model.canon_demo.fct_revenue.v2" in nodes and "model.canon_demo.fct_revenue.v1" not in nodes
    assert {n["relation_name"] for n in nodes.values() if n["resource_type"] == "source"} == SOURCES
    v1 = _cli(h, "lineage", "metric.finance.net_revenue", "--as-of", "2026-06-30", "--role", "analyst")
    v1_sources = {n["relation_name"] for n in v1["lineage"]["nodes"] if n["resource_type"] == "source"}
    assert v1_sources == SOURCES - {"raw.billing.credit_notes"}
    assert "implemented by the dbt model fct_revenue v1" in v1["answer"]
    model = _cli(h, "lineage", "model.analytics.fct_revenue", "--as-of", "2026-08-31", "--role", "analyst")
    assert model["evidence"][0]["doc_id"] == "model.fct_revenue.v2"
    assert "is the dbt model fct_revenue v2" in model["answer"] and all(s in model["answer"] for s in SOURCES)


def test_ask_worked_example_on_the_demo(home):
    h, _ = home
    r = _cli(h, "ask", "Which revenue definition applies for reporting date 2026-08-31, and which "
                       "source/model/version supports it?", "--role", "analyst")
    assert r["action"] == "answer"
    assert [e["doc_id"] for e in r["evidence"]] == ["metric.net_revenue.v2", "model.fct_revenue.v2", "lineage.net_revenue.v2"]
    assert all(s in r["answer"] for s in SOURCES)
    assert r["index_revision"] and r["policy_revision"] == "2026-11-20T10:00:00Z" and r["answer_id"]
    # A lineage question about a model version: its dbt graph, as `canon lineage` reports it.
    feeds = _cli(h, "ask", "Which tables feed fct_revenue v2?", "--role", "analyst")
    assert feeds["action"] == "answer" and feeds["evidence"][0]["doc_id"] == "model.fct_revenue.v2"
    assert all(s in feeds["answer"] for s in SOURCES) and feeds["lineage"]["edges"]
    denied = _cli(h, "ask", "What does the finance-only Q4 rebate reserve memo say?", "--role", "analyst")
    assert denied["action"] == "deny" and "rebate" not in json.dumps(denied["evidence"])


def test_openlineage_events_for_every_canon_asset_run(home):
    h, _ = home
    events = [json.loads(line) for line in (h / "openlineage" / "events.jsonl").read_text().splitlines()]
    by_job: dict[str, list[str]] = {}
    for e in events:
        by_job.setdefault(e["job"]["name"], []).append(e["eventType"])
    assert by_job, "no OpenLineage events"
    for job, kinds in by_job.items():
        assert kinds[0] == "START" and kinds[-1] in ("COMPLETE", "FAIL"), job
    assert all(e["schemaURL"] and e["producer"] for e in events)


def test_context_server_answers_the_readme_questions_on_the_demo(home):
    """`canon serve mcp` over the workspace `make run` builds, through the real MCP client."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    h, _ = home
    env = {**{k: v for k, v in os.environ.items() if k != "CANON_POLICY"}, "CANON_HOME": str(h)}
    params = StdioServerParameters(command=CANON, args=["serve", "mcp", "--role", "analyst"], env=env)

    async def main():
        async with Client(params, read_timeout_seconds=300) as c:
            async def call(tool, args):
                r = await c.call_tool(tool, args)
                assert not r.is_error, r.content
                return r.structured_content
            r = await call("ask", {"question": "Which revenue definition applies for reporting date 2026-08-31, "
                                               "and which source/model/version supports it?"})
            assert [e["doc_id"] for e in r["evidence"]] == ["metric.net_revenue.v2", "model.fct_revenue.v2",
                                                            "lineage.net_revenue.v2"]
            assert all(s in r["answer"] for s in SOURCES)
            r = await call("ask", {"question": "What was net revenue for August 2026?"})
            assert r["action"] == "calculate" and "26,716.31" in r["answer"]
            # Two periods named: each under its own revision, the same values as asked one by one.
            june = await call("ask", {"question": "What was net revenue in June 2026?"})
            july = await call("ask", {"question": "What was net revenue in July 2026?"})
            both = await call("ask", {"question": "What was net revenue in June and July 2026?"})
            assert both["action"] == "calculate" and both["calculation"]["kind"] == "metric_value_by_period"
            assert [(x["doc_id"], x["value"]) for x in both["calculation"]["parts"]] == [
                ("metric.net_revenue.v1", june["calculation"]["value"]),
                ("metric.net_revenue.v2", july["calculation"]["value"])]
            r = await call("ask", {"question": "What does the finance-only Q4 rebate reserve memo say?"})
            assert r["action"] == "deny" and r["evidence"] == []
            r = await call("lineage", {"object_id": "metric.finance.net_revenue", "as_of": "2026-08-31"})
            full = r["lineage"]
            assert {n["relation_name"] for n in full["nodes"] if n["resource_type"] == "source"} == SOURCES
            assert full["truncated"] is False
            r = await call("lineage", {"object_id": "metric.finance.net_revenue", "as_of": "2026-08-31", "depth": 1})
            assert r["lineage"]["truncated"] and len(r["lineage"]["nodes"]) < len(full["nodes"])
            r = await call("list_metrics", {})
            assert "metric.finance.net_revenue" in [m["object_id"] for m in r["items"]]
    anyio.run(main)

"""Project mode end to end on a real third-party dbt project: dbt-labs/jaffle_shop_duckdb,
vendored under tests/fixtures/projects/ (Apache-2.0, VENDORED.md). `canon build` runs it
through dagster-dbt into a temporary home (about 1 min), then `canon ask` and `canon lineage`
answer about its models, their columns and their lineage from dbt's own metadata: no node
carries `meta.canon`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from canon.core.settings import ENV_CONFIG, ENV_KEYS

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "tests" / "fixtures" / "projects" / "jaffle_shop_duckdb"
CANON = str(Path(sys.executable).with_name("canon"))


def _canon(*args: str, cwd: Path, config: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    env.update({ENV_CONFIG: str(config), "CANON_EMBEDDER": "hashing"})
    return subprocess.run([CANON, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("team")
    shutil.copytree(PROJECT, base / "shop")   # the vendored folder is never written to
    config = base / "canon.yml"
    config.write_text("home: state\ndbt: {project_dir: shop}\ndefault_roles: [analyst]\n")
    out = _canon("build", cwd=base, config=config)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return base, config, out.stdout.splitlines()


def _ask(built, question: str) -> dict:
    base, config, _ = built
    out = _canon("ask", question, "--role", "analyst", "--json", cwd=base, config=config)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_teams_project_builds_through_dagster_dbt(built):
    _, _, lines = built
    assert any(line.startswith("  ✓ dbt_models ") for line in lines)
    assert "dbt nodes      5 model, 3 seed, 20 test; 53 lineage edges" in lines
    assert "registry       8 documents (8 model_schema)" in lines
    assert any(line.startswith("asset checks   ") and line.endswith("passed") for line in lines)


def test_grain_and_columns_come_from_the_projects_tests_and_docs(built):
    grain = _ask(built, "What is the grain of the customers model?")
    assert grain["action"] == "answer"
    assert [e["doc_id"] for e in grain["evidence"] if e["use"] == "primary"] == ["model.jaffle_shop.customers"]
    assert "Grain: one row per customer_id" in grain["answer"]
    columns = _ask(built, "Which columns does the orders model have?")
    assert [e["doc_id"] for e in columns["evidence"] if e["use"] == "primary"] == ["model.jaffle_shop.orders"]
    assert all(c in columns["answer"] for c in ("order_id", "customer_id", "order_date", "status", "amount"))


def test_lineage_walks_the_projects_graph_to_its_seeds(built):
    base, config, _ = built
    out = _canon("lineage", "model.jaffle_shop.orders", "--role", "analyst", "--json", cwd=base, config=config)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["action"] == "answer"
    supporting = {e["doc_id"] for e in r["evidence"] if e["use"] == "supporting"}
    assert {"model.jaffle_shop.stg_orders", "model.jaffle_shop.stg_payments",
            "seed.jaffle_shop.raw_orders", "seed.jaffle_shop.raw_payments"} <= supporting
    assert "raw_orders" in r["answer"] and "raw_payments" in r["answer"] and "raw sources are ." not in r["answer"]
    edges = {(e["parent"], e["child"]) for e in r["lineage"]["edges"]}
    assert ("model.jaffle_shop.stg_orders", "model.jaffle_shop.orders") in edges


def test_a_lineage_question_about_a_model_gets_its_graph(built):
    """`canon ask` reads a lineage question about a model as `canon lineage` answers it: the
    model's dbt graph, not its schema text."""
    r = _ask(built, "Which sources feed the orders model?")
    assert r["action"] == "answer" and r["lineage"] is not None
    assert [e["doc_id"] for e in r["evidence"] if e["use"] == "primary"] == ["model.jaffle_shop.orders"]
    assert {"model.jaffle_shop.stg_orders", "seed.jaffle_shop.raw_orders"} <= {
        e["doc_id"] for e in r["evidence"] if e["use"] == "supporting"}
    assert "raw_orders" in r["answer"]


def test_what_depends_on_a_model_walks_its_graph_downstream(built):
    """"Which models depend on X" asks for what is built from X, not X's own sources: the
    graph walked the other way, dbt's tests on it left out (they check it, they are not built
    from it); "which sources does X use" still asks upstream."""
    for q in ("Which models depend on stg_orders?", "What uses stg_orders?", "What is downstream of stg_orders?"):
        r = _ask(built, q)
        assert r["action"] == "answer" and r["lineage"]["direction"] == "downstream", q
        assert [e["doc_id"] for e in r["evidence"] if e["use"] == "primary"] == ["model.jaffle_shop.stg_orders"], q
        assert {(e["parent"], e["child"]) for e in r["lineage"]["edges"]} == {
            ("model.jaffle_shop.stg_orders", "model.jaffle_shop.orders"),
            ("model.jaffle_shop.stg_orders", "model.jaffle_shop.customers")}, q
        assert "2 models (customers, orders)" in r["answer"] and "test" not in r["answer"], q
    leaf = _ask(built, "What is downstream of the customers model?")
    assert "nothing in the dbt graph is built from it" in leaf["answer"] and leaf["lineage"]["edges"] == []
    up = _ask(built, "Which sources does stg_orders use?")
    assert up["lineage"]["direction"] == "upstream" and "raw_orders" in up["answer"]

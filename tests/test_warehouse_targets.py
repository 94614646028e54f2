"""Metric values on the warehouse the configured dbt target names (issue #15), for real:

- DuckDB at a path outside Canon's home, relative to the team's project, whose catalog is
  not `warehouse` (target `books`), and one whose models live in an attached file named by
  the profile's `database` (target `ledger`);
- PostgreSQL, Debian's `postgresql` server started here on 127.0.0.1 with a password,
  the project built into it by `canon build` (project mode, dagster-dbt, dbt-postgres),
  then `canon ask` gives the number a direct SQL query on PostgreSQL gives;
- artifacts mode, which reads no dbt profile: the reason instead of a number.

The project is tests/fixtures/projects/warehouse_shop (copied, never written to)."""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from canon.ask import calculate
from canon.core.settings import ENV_CONFIG, ENV_KEYS, load_settings
from canon.models.documents import Document
from canon.sources.dbt.semantic.errors import NotComputable
from canon.sources.dbt.semantic.metric_values import MetricEngine
from canon.sources.dbt.semantic.target import (
    configured_warehouse,
    dbt_rendered_target,
    plain_duckdb_target,
    resolve_target,
)

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "tests" / "fixtures" / "projects" / "warehouse_shop"
BIN = Path(sys.executable).parent
AUG, SEP = dt.date(2026, 8, 1), dt.date(2026, 9, 1)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    env.update({"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1", **extra})
    return env


def _team(base: Path, target: str, mode: str = "project") -> Path:
    """A copy of the project and a canon.yml naming it (project mode) or its dbt target folder."""
    if not (base / "shop").exists():
        shutil.copytree(PROJECT, base / "shop")
        (base / "shop" / "data").mkdir(exist_ok=True)
    dbt = (f"{{project_dir: shop, target: {target}}}" if mode == "project"
           else "{artifacts_dir: shop/target}")
    config = base / f"canon-{target}-{mode}.yml"
    config.write_text(f"home: state-{target}\ndbt: {dbt}\ndefault_roles: [analyst]\n")
    return config


def _dbt_build(base: Path, target: str, env: dict[str, str]) -> Path:
    """`dbt build` from the project folder (where dagster-dbt runs dbt); the artifacts' folder."""
    target_dir = base / f"target-{target}"
    out = subprocess.run([str(BIN / "dbt"), "build", "--profiles-dir", ".", "--target", target,
                          "--target-path", str(target_dir), "--log-path", str(base / "logs")],
                         cwd=base / "shop", env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return target_dir


def _engine(config: Path, artifacts: Path, env: dict[str, str]) -> MetricEngine:
    """The engine `canon ask` builds (canon/registry/workspace.py) for this configuration."""
    settings = load_settings({**env, ENV_CONFIG: str(config)})
    return MetricEngine(artifacts / "semantic_manifest.json", configured_warehouse(settings, settings.home, env))


def _metric_doc(metric: str) -> Document:
    return Document(doc_id=f"metric.warehouse_shop.{metric}", object_id=f"metric.warehouse_shop.{metric}",
                    kind="metric_definition", title=metric, status="approved", authority=90, version="1",
                    valid_from=dt.date(2026, 1, 1), allowed_roles=("analyst",), text=f"The {metric} metric.",
                    metadata={"dbt_unique_id": f"metric.warehouse_shop.{metric}"})


@pytest.fixture(scope="module")
def duckdb_team(tmp_path_factory):
    base = tmp_path_factory.mktemp("duckdb_team")
    env = _clean_env()
    _team(base, "books")
    return base, env, {t: _dbt_build(base, t, env) for t in ("books", "ledger")}


def _direct_duckdb(path: Path, catalog_sql: str = "") -> tuple[Decimal, Decimal]:
    """The August figures straight from the seed's table (not the model the metric reads)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        if catalog_sql:
            con.execute(catalog_sql)
        rows = con.execute("select status, ordered_at, amount from main.raw_orders").fetchall()
    finally:
        con.close()
    august = [(s, a) for s, d, a in rows if AUG <= d < SEP]
    return sum(a for s, a in august if s == "completed"), statistics.median(a for _, a in august)


def test_a_name_and_a_period_alone_ask_for_the_value_where_it_computes(duckdb_team):
    """"completed sales for August 2026" names the metric and a period and asks nothing else: the
    value over the period, under the governing revision, where the team's semantic layer
    computes it; without one, the definition that governs the period (never an abstention).
    A word naming the definition, or a single day, still asks for the definition
    (canon/ask/understanding/parse.py, `names_and_period_only`)."""
    from canon.ask.pipeline import AskContext, ask
    from canon.registry.policy import Policy
    from canon.sources.dbt.artifacts import read_artifacts
    from canon.sources.dbt.documents import documents_from_artifacts

    base, env, artifacts = duckdb_team
    bundle = read_artifacts(artifacts["books"])
    docs = [d for d in documents_from_artifacts(bundle.governed, bundle.nodes.to_pylist(), bundle.edges.to_pylist(),
                                                bundle.freshness, revision=bundle.revision, default_roles=["analyst"])
            if d.kind == "metric_definition"]
    metric = {d.metadata["dbt_unique_id"].rsplit(".", 1)[-1]: d for d in docs}
    assert {"completed_sales", "median_order_amount"} <= set(metric), sorted(metric)
    total, median = _direct_duckdb(base / "shop" / "data" / "books.duckdb")
    engine = _engine(_team(base, "books"), artifacts["books"], env)
    ctx = AskContext(docs=sorted(docs, key=lambda d: d.doc_id), policy=Policy(), metric_values=engine.value,
                     log_answers=False)
    for question, expected in (("completed sales for August 2026", total), ("Completed sales, 2026-08?", total),
                               ("what is the median order amount for august 2026?", median)):
        resp = ask(ctx, question, "analyst")
        assert resp.action == "calculate", (question, resp.answer)
        assert resp.calculation["value"] == float(expected) and expected > 0, question
        assert resp.calculation["period_start"] == "2026-08-01" and resp.calculation["period_end"] == "2026-09-01"
    for question in ("completed sales definition for August 2026", "completed sales for 2026-08-14",
                     "Does completed sales include returned orders for August 2026?"):
        resp = ask(ctx, question, "analyst")
        assert resp.action == "answer" and resp.calculation is None, (question, resp.answer)
        assert resp.evidence[0].doc_id == metric["completed_sales"].doc_id, question
    ctx.metric_values = None
    resp = ask(ctx, "completed sales for August 2026", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == metric["completed_sales"].doc_id, resp.answer
    assert "August 2026" in resp.answer


def test_a_duckdb_file_at_the_teams_path_with_its_own_catalog(duckdb_team):
    base, env, artifacts = duckdb_team
    engine = _engine(_team(base, "books"), artifacts["books"], env)
    assert engine.warehouse.catalog == "books"
    assert engine.warehouse.resolved().path == base / "shop" / "data" / "books.duckdb"   # relative to the project
    total, median = _direct_duckdb(base / "shop" / "data" / "books.duckdb")
    got = engine.compute("completed_sales", AUG, SEP)
    assert got["value_exact"] == str(total) and got["value"] == float(total) and total > 0
    assert '"main_marts"."orders"' in got["sql"] and "'completed'" in got["sql"]
    assert engine.compute("median_order_amount", AUG, SEP)["value"] == float(median)
    # Canon's own home has no warehouse.duckdb: the value came from the team's file.
    assert not (base / "state-books" / "warehouse.duckdb").exists()


def test_models_in_an_attached_catalog_named_by_the_profiles_database(duckdb_team):
    base, env, artifacts = duckdb_team
    semantic = json.loads((artifacts["ledger"] / "semantic_manifest.json").read_text())
    assert semantic["semantic_models"][0]["node_relation"]["database"] == "ledger"
    engine = _engine(_team(base, "ledger"), artifacts["ledger"], env)
    assert engine.warehouse.catalog == "scratch" and engine.warehouse.catalogs == {"scratch", "ledger"}
    ledger = base / "shop" / "data" / "ledger.duckdb"
    total, _ = _direct_duckdb(ledger)
    got = engine.compute("completed_sales", AUG, SEP)
    assert got["value_exact"] == str(total)
    assert '"ledger"."main_marts"."orders"' in got["sql"]
    # The books target's artifacts point at catalog `books`, which the ledger target does not reach.
    wrong = _engine(_team(base, "ledger"), artifacts["books"], env)
    assert wrong.value(_metric_doc("completed_sales"), AUG, SEP) is None
    assert "catalog 'books'" in wrong.last_reason and "ledger, scratch" in wrong.last_reason


def test_a_profile_dbt_cannot_render_is_a_reason_naming_the_file(duckdb_team):
    base, env, artifacts = duckdb_team
    engine = _engine(_team(base, "pg"), artifacts["books"], env)   # SHOP_PG_* are not set
    assert engine.value(_metric_doc("completed_sales"), AUG, SEP) is None
    assert str(base / "shop" / "profiles.yml") in engine.last_reason
    assert "SHOP_PG_PORT" in engine.last_reason and "'pg'" in engine.last_reason
    r = calculate.metric_value(_metric_doc("completed_sales"), AUG, SEP, engine, "analyst")
    assert r.action == "abstain" and r.reason == "metric_not_computable" and "SHOP_PG_PORT" in r.answer


def test_the_demo_is_the_same_rule_on_its_own_profile(tmp_path):
    """dbt_project/profiles.yml reads CANON_HOME: the demo's warehouse is <home>/warehouse.duckdb."""
    env = _clean_env()
    env.pop("CANON_HOME", None)
    settings = load_settings(env)
    assert settings.is_demo
    wh = configured_warehouse(settings, tmp_path, env).resolved()
    assert wh.path == tmp_path.resolve() / "warehouse.duckdb" and wh.catalog == "warehouse"
    assert [(a.alias, a.path) for a in wh.attached] == [("raw", str(tmp_path.resolve() / "raw.duckdb"))]


def test_a_plain_duckdb_profile_is_read_as_dbt_renders_it_without_importing_dbt(tmp_path):
    """A profile whose only Jinja is env_var() is read without dbt (importing dbt is seconds of a
    `canon ask` process): the same target dbt renders, for the demo's profile and each DuckDB target
    of the fixture; anything else (a filter, an unset variable, another adapter) goes to dbt."""
    env = {**_clean_env(), "CANON_HOME": str(tmp_path / "home")}
    cases = [(ROOT / "dbt_project", "canon_demo", None), (PROJECT, "warehouse_shop", "books"),
             (PROJECT, "warehouse_shop", "ledger")]
    for project, profile, target in cases:
        plain = plain_duckdb_target(project, project, profile, target, env)
        assert plain is not None, (project, target)
        assert plain == dbt_rendered_target(project, project, profile, target, env), (project, target)
    assert plain_duckdb_target(PROJECT, PROJECT, "warehouse_shop", "pg", {**env, "SHOP_PG_PORT": "5"}) is None
    (tmp_path / "p").mkdir()
    for body in ("{path: \"{{ env_var('UNSET_ANYWHERE') }}/w.duckdb\"}",        # unset, no default
                 "{path: \"{{ env_var('CANON_HOME') | lower }}/w.duckdb\"}",   # a filter
                 "{path: w.duckdb, database: other}"):                         # contradicts the path
        (tmp_path / "p" / "profiles.yml").write_text(f"p:\n  target: t\n  outputs:\n    t: {{type: duckdb, "
                                                      f"{body[1:-1]}}}\n")
        assert plain_duckdb_target(tmp_path / "p", tmp_path / "p", "p", None, env) is None, body
    with_default = "{path: \"{{ env_var('UNSET_ANYWHERE', '/srv/dw') }}/w.duckdb\"}"
    (tmp_path / "p" / "profiles.yml").write_text(f"p:\n  target: t\n  outputs:\n    t: {{type: duckdb, "
                                                  f"{with_default[1:-1]}}}\n")
    assert plain_duckdb_target(tmp_path / "p", tmp_path / "p", "p", None, env).path == Path("/srv/dw/w.duckdb")
    probe = ("import sys; from pathlib import Path; from canon.sources.dbt.semantic.target import resolve_target; "
             f"t = resolve_target(Path({str(ROOT / 'dbt_project')!r}), Path({str(ROOT / 'dbt_project')!r}), None, "
             f"{{'CANON_HOME': {str(tmp_path)!r}}}); print(t.database, 'dbt.config' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["warehouse", "False"], out.stdout + out.stderr


def test_a_broken_profile_never_echoes_a_value_nor_prints(tmp_path, capfd):
    """dbt's credential checks quote the offending value, and dbt prints its events to stdout
    (where `canon ask --json` writes): the reason keeps neither."""
    shutil.copytree(PROJECT, tmp_path / "shop")
    secret = secrets.token_urlsafe(12)
    (tmp_path / "shop" / "profiles.yml").write_text(
        "warehouse_shop:\n  target: typo\n  outputs:\n"
        f"    typo: {{type: postgres, host: 127.0.0.1, port: '{secret}', user: u, password: '{secret}', "
        "dbname: d, schema: s}\n"
        f"    gone: {{type: nosuchadapter, password: '{secret}'}}\n")
    reasons = {}
    for target in ("typo", "gone"):
        with pytest.raises(NotComputable) as err:
            resolve_target(tmp_path / "shop", tmp_path / "shop", target, _clean_env())
        reasons[target] = str(err.value)
        assert str(tmp_path / "shop" / "profiles.yml") in reasons[target] and f"'{target}'" in reasons[target]
        assert secret not in reasons[target]
    assert "not of type 'integer'" in reasons["typo"] and "nosuchadapter" in reasons["gone"]
    out = capfd.readouterr()
    assert secret not in out.out + out.err and "nosuchadapter" not in out.out


def test_artifacts_mode_reads_no_profile_and_says_so(duckdb_team):
    base, env, artifacts = duckdb_team
    shutil.copytree(artifacts["books"], base / "shop" / "target", dirs_exist_ok=True)
    engine = _engine(_team(base, "books", mode="artifacts"), base / "shop" / "target", env)
    r = calculate.metric_value(_metric_doc("completed_sales"), AUG, SEP, engine, "analyst")
    assert r.action == "abstain" and r.reason == "metric_not_computable"
    assert "artifacts mode" in r.answer and "dbt profile" in r.answer


# ------------------------------------------------------------------------------ PostgreSQL

def _postgres_bin() -> Path:
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all((Path(folder) / b).is_file() for b in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    pytest.fail("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (initdb, pg_ctl, "
                "postgres): install Debian's postgresql package (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(*cmd: str, **kw) -> subprocess.CompletedProcess:
    # initdb and postgres refuse to run as root: as root, the `postgres` system user runs them.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    out = subprocess.run([*prefix, *cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{cmd[0]}: {out.stdout[-2000:]}{out.stderr[-2000:]}"
    return out


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server of its own on 127.0.0.1 (password auth), with an empty database `shop`;
    stopped by its pid at teardown."""
    import psycopg2

    bindir = _postgres_bin()
    # Under /tmp itself: pytest's own tmp folder is root-only (0700), which `postgres` cannot enter.
    root = Path(tempfile.mkdtemp(prefix="canon-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    user, password = "canon_test", secrets.token_urlsafe(18)
    (root / "pwfile").write_text(password + "\n")
    if os.geteuid() == 0:
        for p in (root, sockets, root / "pwfile"):
            shutil.chown(p, "postgres")
    _as_postgres(str(bindir / "initdb"), "-D", str(data), "-U", user, "--pwfile", str(root / "pwfile"),
                 "--auth", "scram-sha-256", "-E", "UTF8", "--no-sync", timeout=120)
    (root / "pwfile").unlink()
    port = _free_port()
    _as_postgres(str(bindir / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(data), "-l", str(root / "server.log"),
                 "-o", f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off", timeout=120)
    pid = int((data / "postmaster.pid").read_text().splitlines()[0])
    try:
        con = psycopg2.connect(host="127.0.0.1", port=port, user=user, password=password, dbname="postgres")
        con.autocommit = True
        con.cursor().execute("create database shop")
        con.close()
        yield {"host": "127.0.0.1", "port": port, "user": user, "password": password, "dbname": "shop"}
    finally:
        os.kill(pid, signal.SIGINT)   # PostgreSQL's fast shutdown
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        shutil.rmtree(root, ignore_errors=True)


def _pg_env(pg: dict) -> dict[str, str]:
    return _clean_env(SHOP_PG_PORT=str(pg["port"]), SHOP_PG_USER=pg["user"], SHOP_PG_PASSWORD=pg["password"],
                      CANON_EMBEDDER="hashing")


@pytest.fixture(scope="module")
def pg_team(tmp_path_factory, postgres):
    """The project built into PostgreSQL by `canon build` in project mode (one dbt build)."""
    base = tmp_path_factory.mktemp("pg_team")
    config = _team(base, "pg")
    env = _pg_env(postgres)
    out = subprocess.run([str(BIN / "canon"), "build"], cwd=base, env={**env, ENV_CONFIG: str(config)},
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return base, config, env


def _pg_august(pg: dict) -> tuple[Decimal, list[Decimal]]:
    """The August figures by a direct query on PostgreSQL, from the seed's table."""
    import psycopg2

    con = psycopg2.connect(host=pg["host"], port=pg["port"], user=pg["user"], password=pg["password"],
                           dbname=pg["dbname"])
    try:
        cur = con.cursor()
        cur.execute("select coalesce(sum(amount), 0) from public.raw_orders "
                    "where status = 'completed' and ordered_at >= %s and ordered_at < %s", (AUG, SEP))
        total = cur.fetchone()[0]
        cur.execute("select amount from public.raw_orders where ordered_at >= %s and ordered_at < %s", (AUG, SEP))
        amounts = [r[0] for r in cur.fetchall()]
    finally:
        con.close()
    return total, amounts


def _ask(pg_team, question: str) -> dict:
    base, config, env = pg_team
    out = subprocess.run([str(BIN / "canon"), "ask", question, "--role", "analyst", "--json"], cwd=base,
                         env={**env, ENV_CONFIG: str(config)}, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert env["SHOP_PG_PASSWORD"] not in out.stdout + out.stderr
    return json.loads(out.stdout)


def test_canon_ask_gives_the_value_postgresql_gives(pg_team, postgres):
    total, _ = _pg_august(postgres)
    r = _ask(pg_team, "What was completed sales in August 2026?")
    assert r["action"] == "calculate", r["answer"]
    calc = r["calculation"]
    assert calc["kind"] == "metric_value" and calc["metric"] == "completed_sales"
    assert total > 0 and calc["value"] == float(total)
    assert f"{float(total):,.2f}" in r["answer"]
    assert '"public_marts"."orders"' in calc["sql"]


def test_the_median_is_standard_sql_on_postgresql(pg_team, postgres):
    """DuckDB's median() does not exist on PostgreSQL: the SQL is the ordered-set aggregate."""
    _, amounts = _pg_august(postgres)
    r = _ask(pg_team, "What was the median order amount in August 2026?")
    assert r["action"] == "calculate", r["answer"]
    assert "percentile_cont(0.5) within group" in r["calculation"]["sql"]
    assert r["calculation"]["value"] == pytest.approx(float(statistics.median(amounts)))


def test_a_refused_connection_is_unavailable_without_the_password(pg_team):
    base, config, env = pg_team
    wrong = {**env, "SHOP_PG_PASSWORD": secrets.token_urlsafe(18)}
    engine = _engine(config, base / "state-pg" / "dbt_artifacts", wrong)
    r = calculate.metric_value(_metric_doc("completed_sales"), AUG, SEP, engine, "analyst")
    assert r.action == "abstain" and r.reason == "semantic_layer_unavailable"
    assert "password authentication failed" in r.answer and "'pg'" in r.answer
    assert wrong["SHOP_PG_PASSWORD"] not in r.answer and env["SHOP_PG_PASSWORD"] not in r.answer


def test_no_password_is_stored_under_the_home(pg_team):
    base, _, env = pg_team
    secret = env["SHOP_PG_PASSWORD"].encode()
    for path in (base / "state-pg").rglob("*"):
        if path.is_file() and path.stat().st_size < 64 * 1024 * 1024:
            assert secret not in path.read_bytes(), path

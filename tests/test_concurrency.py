"""Concurrent readers (issue 18, item 3; docs/design.md, "Concurrent readers"):
any number of `canon ask | resolve | lineage | impact` processes run at once,
and while a writer holds canon.duckdb (a registry build, a `canon forget`), with
zero lock errors — readers open the snapshot every writer publishes, answers go
to their own log file — and a lock still in the way is waited for, then
reported as busy (exit 1), never as bad input (exit 2).

Every process here is the real CLI (`python -m canon.cli.main`) on a real
DuckDB registry and LanceDB index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from canon.ask.answer_log import AnswerLogFile
from canon.core import db
from canon.core.config import CanonPaths
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "dossier" / "corpus.jsonl"
QUESTION = "Which net revenue definition applies for 2026-08-31?"
N = 20

# A writer that rebuilds the registry and then keeps canon.duckdb's write lock until told to let go.
HOLD_WRITE_LOCK = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from canon.core import db
    from canon.registry.build import build_registry
    from canon.registry.contracts import load_contract

    home, corpus, contract, release = map(Path, sys.argv[1:5])
    with db.writer(home / "canon.duckdb")() as con:
        build_registry(con, corpus=corpus, corpus_contract=load_contract(contract), run_id="rebuild")
        print("holding", flush=True)
        while not release.exists():
            time.sleep(0.05)
""")


def _build(home: Path) -> None:
    """A workspace as a writer leaves it: registry, definitions, an index, the snapshot."""
    paths = CanonPaths.from_env(home).ensure()
    with db.writer(paths.canon_db)() as con:
        build_registry(con, corpus=CORPUS, corpus_contract=load_contract(ROOT / "contracts" / "knowledge.yml"),
                       run_id="build")
        registry.refresh_definitions(con)
        index.publish(con, paths.lancedb_dir, registry.load_documents(con), HashingEmbedder(),
                      policy_revision="p1", run_id="build")


@pytest.fixture()
def workspace(tmp_path):
    home = tmp_path / "home"
    _build(home)
    policy = tmp_path / "policy.yml"
    policy.write_text("revision: p1\nrevoke: []\n")
    env = {**os.environ, "CANON_HOME": str(home), "CANON_POLICY": str(policy), "PYTHONPATH": str(ROOT),
           "CANON_LOCK_WAIT_SECONDS": "120"}
    return {"home": home, "env": env, "tmp": tmp_path}


def _hold_write_lock(env, home: Path, release: Path) -> subprocess.Popen:
    """A process that rebuilds the registry and holds canon.duckdb's write lock until `release` exists."""
    return subprocess.Popen([sys.executable, "-c", HOLD_WRITE_LOCK, str(home), str(CORPUS),
                             str(ROOT / "contracts" / "knowledge.yml"), str(release)],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _canon(env, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "canon.cli.main", *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(procs, timeout=600) -> list[tuple[int, str, str]]:
    out = []
    for p in procs:
        so, se = p.communicate(timeout=timeout)
        out.append((p.returncode, so, se))
    return out


def _answer(stdout: str) -> dict:
    data = json.loads(stdout)
    data.pop("answer_id", None)
    return data


def _ask_many(env, n=N, *, role="analyst") -> list[tuple[int, str, str]]:
    return _finish([_canon(env, "ask", QUESTION, "--role", role, "--json") for _ in range(n)])


def _assert_all_answered(results, single: dict) -> None:
    for code, so, se in results:
        assert code == 0, se
        assert "lock" not in se.lower(), se
        assert _answer(so) == single


def _single(env) -> dict:
    (code, so, se), = _ask_many(env, 1)
    assert code == 0, se
    return _answer(so)


def test_twenty_concurrent_asks_all_answer(workspace):
    env = workspace["env"]
    single = _single(env)
    assert single["action"] == "answer"
    results = _ask_many(env)
    _assert_all_answered(results, single)
    # every answer was logged, none in canon.duckdb (readers never write it)
    paths = CanonPaths.from_env(workspace["home"])
    logged = {row[0] for row in AnswerLogFile(paths.answer_log_file).citing(single["evidence"][0]["doc_id"])}
    assert len(logged) == N + 1
    ids = {json.loads(so)["answer_id"] for _, so, _ in results}
    assert ids <= logged


def test_twenty_asks_resolves_and_lineages_while_a_writer_holds_the_registry(workspace):
    env, home = workspace["env"], workspace["home"]
    single = _single(env)
    resolved = _finish([_canon(env, "resolve", "metric.finance.net_revenue", "--as-of", "2026-08-31",
                               "--role", "analyst", "--json")])[0]
    assert resolved[0] == 0, resolved[2]
    release = workspace["tmp"] / "release"
    writer = _hold_write_lock(env, home, release)
    try:
        assert writer.stdout.readline().strip() == "holding", writer.stderr.read()
        # the writer really holds it: a plain read-only open of the live file fails
        with pytest.raises(duckdb.IOException, match="[Ll]ock"):
            duckdb.connect(str(home / "canon.duckdb"), read_only=True)
        procs = [_canon(env, "ask", QUESTION, "--role", "analyst", "--json") for _ in range(N)]
        procs += [_canon(env, "resolve", "metric.finance.net_revenue", "--as-of", "2026-08-31", "--role",
                         "analyst", "--json"),
                  _canon(env, "impact", "--doc-id", single["evidence"][0]["doc_id"], "--role", "analyst", "--json")]
        results = _finish(procs)
        assert writer.poll() is None  # still writing throughout
    finally:
        release.touch()
        writer.communicate(timeout=120)
    assert writer.returncode == 0
    _assert_all_answered(results[:N], single)
    code, so, se = results[N]
    assert code == 0 and "lock" not in se.lower() and json.loads(so) == json.loads(resolved[1])
    code, so, se = results[N + 1]
    assert code == 0 and "lock" not in se.lower() and json.loads(so)["count"] >= 1


def test_twenty_asks_during_a_forget(workspace):
    env = workspace["env"]
    single = _single(env)
    forgotten = "note.revenue.prompt_injection"   # not cited by the answer
    assert forgotten not in {e["doc_id"] for e in single["evidence"]}
    forget = _canon(env, "forget", "--doc-id", forgotten, "--json")
    time.sleep(0.5)
    results = _ask_many(env)
    (code, so, se), = _finish([forget])
    assert code == 0, se
    assert json.loads(so)["verified"] is True
    _assert_all_answered(results, single)


def test_a_lock_that_outlasts_the_wait_is_busy_exit_1_not_bad_input(workspace):
    """No snapshot (a workspace from before it existed): readers wait for the live
    file's lock, and report it busy — exit 1 — only after the bound."""
    env, home = dict(workspace["env"]), workspace["home"]
    db.snapshot_of(home / "canon.duckdb").unlink(missing_ok=True)
    release = workspace["tmp"] / "release"
    writer = _hold_write_lock(env, home, release)
    try:
        assert writer.stdout.readline().strip() == "holding", writer.stderr.read()
        env["CANON_LOCK_WAIT_SECONDS"] = "1"
        (code, _, se), = _finish([_canon(env, "resolve", "metric.finance.net_revenue", "--role", "analyst")])
        assert code == 1 and "busy" in se and "canon.duckdb" in se
        # a wait long enough for the writer to finish succeeds
        env["CANON_LOCK_WAIT_SECONDS"] = "120"
        waiting = _canon(env, "resolve", "metric.finance.net_revenue", "--as-of", "2026-08-31", "--role", "analyst")
        time.sleep(1.5)
        release.touch()
        (code, so, se), = _finish([waiting])
        assert code == 0, se
        assert writer.wait(timeout=120) == 0
    finally:
        release.touch()
        if writer.poll() is None:
            writer.kill()
        writer.communicate()

"""The benchmark's server section (bench/server.py) at a tiny size: a real workspace of a generated
corpus, `canon serve http` as a subprocess, real MCP clients over HTTP. Every call must be answered,
with the action in-process `ask` gives for the same question, and the figures must carry their keys.
No timing is asserted: the benchmark prints figures, CI does not gate on speed."""

from __future__ import annotations

import sqlite3

from bench import figures, gen_corpus, report
from bench.child import run_child
from bench.server import client_work


def test_server_section_answers_every_call_like_in_process(tmp_path):
    corpus = tmp_path / "corpus"
    gen_corpus.generate(corpus, 30, seed=42)
    r = run_child("server", {"corpus": str(corpus), "home": str(tmp_path / "home"), "reps": 1, "questions": 4,
                             "concurrency": [1, 2], "calls": 3}, timeout=240)
    assert r["embedder"].startswith("canon-hashing:")   # the server uses the revision's embedder, as in-process
    assert r["questions"]["n"] >= 1
    assert set(r["clients"]) == {"1", "2"}
    assert r["clients"]["2"]["calls"] == 2 * 3
    for g in r["clients"].values():
        assert g["errors"] == 0 and g["mismatches"] == 0, g
        assert g["answered"] == g["calls"] and g["answers_per_s"] > 0 and g["p95_ms"] > 0
    assert r["in_process"]["answered"] == r["questions"]["n"] and r["in_process"]["p95_ms"] > 0
    # every answer the server gave is in the workspace's answer log, with the principal and transport
    con = sqlite3.connect(tmp_path / "home" / "answer_log.sqlite")
    try:
        rows = dict(con.execute("SELECT transport, count(*) FROM answer_log GROUP BY transport").fetchall())
    finally:
        con.close()
    server_calls = sum(g["calls"] for g in r["clients"].values()) + r["warmup"]["calls"]
    assert rows.get("http") == server_calls

    F = report.Figures()
    figures.figures_server(F, r)
    rows_by_key = {x["key"]: x for x in F.rows}
    server_keys = [k for k in report.FIGURE_KEYS if k.startswith("server.")]
    assert server_keys and all(k in rows_by_key for k in server_keys)
    for k in server_keys:
        assert rows_by_key[k]["value"] is not None, k
    for k in ("server.clients_1.p95_ms", "server.clients_2.answers_per_s", "server.ratio_p95_1_client",
              "server.in_process_p95_ms", "server.server_peak_rss_mb"):
        assert rows_by_key[k]["value"] > 0, k
    assert rows_by_key["server.errors_at_max_clients"]["label"] == "errors at 2 clients"
    assert rows_by_key["server.errors_at_max_clients"]["status"] == "met"
    assert rows_by_key["server.action_mismatches"]["status"] == "met"


def test_concurrent_clients_ask_different_questions_at_once():
    work = client_work(["a", "b", "c", "d"], clients=2, calls=3)
    assert work == [["a", "b", "c"], ["c", "d", "a"]]

"""Section 7, cli (child side; the figures are bench/figures.py's): `canon ask` as a new process
on a large registry, as a user at a terminal runs it. One cold build (HashingEmbedder) of an
N-document corpus, then each question is a fresh `canon ask --json` process whose wall clock and
peak RSS (its own ru_maxrss, from wait4) are recorded. The process reads what its question needs
(canon/ask/scope.py), not the whole registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.pipeline import TimedEmbedder, pipeline, public
from bench.questions import governed_questions, peer_queries
from bench.settings import REPO, ROLE
from bench.workdir import fresh_dir
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry


def _canon() -> str:
    exe = Path(sys.executable).with_name("canon")
    return str(exe) if exe.exists() else "canon"


def _ask(question: str, day: str | None, env: dict[str, str]) -> dict[str, Any]:
    """One `canon ask` process: wall clock, its own peak RSS (wait4's rusage), exit code, action."""
    cmd = [_canon(), "ask", question, "--role", ROLE, "--json"] + (["--as-of", day] if day else [])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(REPO), env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    action = json.loads(stdout)["action"] if rc == 0 and stdout.strip() else None
    return {"question": question, "wall_s": wall, "rss_mb": usage.ru_maxrss / 1024, "exit": rc, "action": action,
            "stderr": stderr.decode(errors="replace")[-300:] if rc else ""}


def case_cli(p: dict[str, Any]) -> dict[str, Any]:
    corpus, ws = Path(p["corpus"]), Path(p["ws"])
    # The build is reused while the corpus is the one it was built from (bench/workdir.py's digest).
    digest = (corpus / ".digest").read_text() if (corpus / ".digest").exists() else ""
    stamp = ws / ".built-from"
    if not (ws / "canon.duckdb").exists() or not stamp.exists() or stamp.read_text() != digest or not digest:
        fresh_dir(ws)
        build = public(pipeline(corpus, ws, TimedEmbedder(HashingEmbedder()), run_id="cli"))
        stamp.write_text(digest)
    else:
        build = None
    con = registry.connect(ws / "canon.duckdb", read_only=True)
    try:
        docs = registry.load_document_heads(con, "kind = 'metric_definition'", [])
        total = con.execute("SELECT count(*) FROM documents WHERE deleted_at IS NULL").fetchall()[0][0]
    finally:
        con.close()
    questions = [(q, day.isoformat()) for q, _, day in governed_questions(docs, p["questions"], seed=p["seed"])]
    questions += [(q, None) for q in peer_queries(max(2, p["questions"] // 2))]
    env = dict(os.environ, CANON_HOME=str(ws), CANON_CORPUS=str(corpus))
    env.pop("CANON_POLICY", None)
    _ask(questions[0][0], questions[0][1], env)   # warm-up: the read snapshot, the OS page cache
    runs = [_ask(q, day, env) for q, day in questions]
    return {"documents": total, "build": build, "runs": runs}

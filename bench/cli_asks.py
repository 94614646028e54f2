"""Section 8, cli (parent side, standard library only): each question as a fresh `canon ask --json`
process, its wall clock and its own peak RSS (wait4's rusage). Run from the benchmark's parent,
which imports no Canon, so a process's peak RSS is its own (bench/cli_scale.py builds the registry
in a child of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.settings import REPO, ROLE


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


def run(questions: list[list], ws: str, corpus: str) -> list[dict[str, Any]]:
    env = dict(os.environ, CANON_HOME=ws, CANON_CORPUS=corpus)
    env.pop("CANON_POLICY", None)
    _ask(questions[0][0], questions[0][1], env)   # warm-up: the read snapshot, the OS page cache
    return [_ask(q, day, env) for q, day in questions]

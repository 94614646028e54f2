"""Section 7, the governed context server (child side; the figures are bench/figures.py's): `canon
serve http` as a subprocess on 127.0.0.1 against in-process `ask` on the same questions, in the same
run, on the same workspace and embedder (the HashingEmbedder the index was built with: the server
takes the embedder its served revision records, canon/ask/context.py `embedder_for`).

The in-process baseline is one warm context exactly as `canon ask` builds it (canon/cli/main.py:
the read-only Workspace, `ask_context`, the answer-log file). The server's 1-client passes alternate
with the in-process passes, so that load drift on a shared machine hits both; then C concurrent MCP
sessions (each its own streamable HTTP client with the bearer token) each make a fixed number of
`ask` calls. Every call's latency is recorded, and its action is compared with the in-process
action for the same question."""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import time
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.loopback import free_port, serving
from bench.pipeline import TimedEmbedder, pipeline, public
from bench.questions import governed_questions
from bench.settings import REPO, ROLE
from bench.timing import cpu_s, log, now, pct
from canon.ask.answer_log import AnswerLogFile
from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.core import db
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.revisions import served_revision
from canon.registry.workspace import Workspace

READY_TIMEOUT_S = 120.0
CALL_TIMEOUT_S = 300.0        # a call queued behind 31 others must not time out on a loaded machine
PRINCIPAL = "bench"


def _configure(home: Path, corpus: Path) -> None:
    """This process and the server read the same workspace and the same live policy (the corpus's
    policy.yml, as `make run` configures it); a CANON_POLICY of the caller's shell must not count."""
    os.environ["CANON_HOME"] = str(home)
    os.environ["CANON_CORPUS"] = str(corpus)
    os.environ.pop("CANON_POLICY", None)


def prepare(corpus: Path, home: Path) -> dict[str, Any]:
    """The workspace the server reads: registry, served index revision (HashingEmbedder) and the
    read snapshot. The build is incremental, so a workspace of an earlier run is reused (a no-op)."""
    home.mkdir(parents=True, exist_ok=True)
    build = pipeline(corpus, home, TimedEmbedder(HashingEmbedder()), run_id=f"server-{int(time.time())}")
    # The bench build writes canon.duckdb directly, which publishes no snapshot. The first read-only
    # open publishes it (canon/core/db.py open_for_reading), and reading the policy records its
    # sighting (canon/registry/live_policy.py), which republishes it: both done here, untimed, so no
    # timed call pays for a snapshot copy.
    ws = Workspace.open(home, read_only=True)
    try:
        ws.policy()
    finally:
        ws.close()
    snap = db.snapshot_of(home / "canon.duckdb")
    if not snap.exists():
        raise RuntimeError(f"{snap}: no read snapshot after the build")
    # The answer log of earlier runs would only grow: every run starts from an empty one.
    for suffix in ("", "-wal", "-shm"):
        Path(str(home / "answer_log.sqlite") + suffix).unlink(missing_ok=True)
    return {**public(build), "snapshot_mb": round(snap.stat().st_size / 1e6, 1)}


# ---------------------------------------------------------------- the server process


def write_tokens(path: Path, token: str) -> None:
    """The server-side tokens file (docs/contracts.md, "Context server"): one token for ROLE."""
    path.write_text(f"tokens:\n  - sha256: {hashlib.sha256(token.encode()).hexdigest()}\n"
                    f"    principal: {PRINCIPAL}\n    role: {ROLE}\n", encoding="utf-8")


def _proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _proc_peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, ValueError):
        pass
    return None


@contextmanager
def http_server(home: Path, tokens: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """`canon serve http` bound to 127.0.0.1 on a free port, until it accepts connections; stopped
    by its pid (SIGTERM, then SIGKILL) however the body ends."""
    port = free_port()
    log_path = home / "server.log"
    cmd = [sys.executable, "-m", "canon.cli.main", "serve", "http", "--host", "127.0.0.1", "--port", str(port),
           "--tokens", str(tokens)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=err)
    with serving(proc, port, READY_TIMEOUT_S, lambda: f"see {log_path}: "
                 f"{log_path.read_text(errors='replace')[-2000:]}") as url:
        yield url, proc


class Tally:
    """Every call of one pass: latencies of the successful ones, errors by kind, action mismatches."""

    def __init__(self) -> None:
        self.lat_ms: list[float] = []
        self.errors: dict[str, int] = {}
        self.mismatches = 0
        self.examples: list[str] = []

    def error(self, kind: str, question: str) -> None:
        self.errors[kind[:160]] = self.errors.get(kind[:160], 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind[:80]}: {question}")


async def _one_call(c: Client, q: str, expected: str, t: Tally) -> None:
    t0 = now()
    try:
        r = await c.call_tool("ask", {"question": q})
    except Exception as exc:  # noqa: BLE001 — HTTP, protocol or timeout failures are what is counted
        t.error(f"{type(exc).__name__}: {exc}", q)
        return
    ms = (now() - t0) * 1000
    data = r.structured_content or {}
    if r.is_error:
        t.error(f"tool error: {(data.get('error') or {}).get('message', '?')}", q)
        return
    t.lat_ms.append(ms)
    if data.get("action") != expected:
        t.mismatches += 1
        if len(t.examples) < 5:
            t.examples.append(f"action {data.get('action')} != in-process {expected}: {q}")


async def _client(stack: AsyncExitStack, url: str, token: str) -> Client:
    """One MCP session over its own HTTP client (closed with the stack), carrying the bearer token."""
    http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    return await stack.enter_async_context(Client(streamable_http_client(url, http_client=http),
                                                  read_timeout_seconds=CALL_TIMEOUT_S))


async def _clients_pass(url: str, token: str, work: list[list[str]], expected: dict[str, str]) -> dict[str, Any]:
    """One session per client, all opened (MCP initialize) before the clock starts; then each client
    makes its calls one after another, all clients at once."""
    t = Tally()
    async with AsyncExitStack() as stack:
        clients = [await _client(stack, url, token) for _ in work]

        async def run(c: Client, qs: list[str]) -> None:
            for q in qs:
                await _one_call(c, q, expected[q], t)

        t0, c0 = now(), cpu_s()
        async with anyio.create_task_group() as tg:
            for c, qs in zip(clients, work):
                tg.start_soon(run, c, qs)
        wall, client_cpu = now() - t0, cpu_s() - c0
    return {"lat_ms": t.lat_ms, "errors": t.errors, "mismatches": t.mismatches, "examples": t.examples,
            "calls": sum(len(qs) for qs in work), "wall_s": wall, "client_cpu_s": client_cpu}


def server_pass(url: str, token: str, work: list[list[str]], expected: dict[str, str], pid: int) -> dict[str, Any]:
    s0 = _proc_cpu_s(pid)
    out = anyio.run(_clients_pass, url, token, work, expected)
    s1 = _proc_cpu_s(pid)
    out["server_cpu_s"] = None if s0 is None or s1 is None else s1 - s0
    return out


def client_work(questions: list[str], clients: int, calls: int) -> list[list[str]]:
    """Each client's calls: the question set from its own offset, cycling, so that concurrent
    clients ask different questions at the same moment."""
    n = len(questions)
    return [[questions[(i * n // clients + j) % n] for j in range(calls)] for i in range(clients)]


def summary(lat: list[float], calls: int, wall_s: float, errors: dict[str, int], mismatches: int) -> dict[str, Any]:
    ok = len(lat)
    return {"calls": calls, "answered": ok, "errors": sum(errors.values()), "mismatches": mismatches,
            "answers_per_s": ok / wall_s if wall_s > 0 else None, "wall_s": wall_s,
            "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95), "max_ms": max(lat) if lat else None}


# ---------------------------------------------------------------- the case


def case_server(p: dict[str, Any]) -> dict[str, Any]:
    corpus, home, reps = Path(p["corpus"]), Path(p["home"]), p["reps"]
    concurrency = sorted(set(p["concurrency"]) | {1})
    _configure(home, corpus)
    t0 = now()
    build = prepare(corpus, home)
    log(f"server: workspace {home} ready in {now() - t0:.0f} s ({build['docs']} docs, {build['chunks']} chunks, "
        f"{'no-op, reused' if build['noop'] else 'built'})")

    # The in-process baseline, as `canon ask` builds its context (canon/cli/main.py _ask_command).
    ws = Workspace.open(home, read_only=True)
    try:
        docs, policy = ws.documents(), ws.policy()
        ctx = ask_context(ws.con, ws.paths.lancedb_dir, docs, policy, metric_values=ws.metric_engine(),
                          answer_store=AnswerLogFile(ws.paths.answer_log_file))
        rev = served_revision(ws.con)
        questions = [q for q, _, _ in governed_questions(docs, p["questions"], 2)]
        if not questions:
            raise RuntimeError(f"{corpus}: no governed question (no approved metric definition the {ROLE} may read)")
        log(f"server: in-process warm-up, {len(questions)} governed questions, embedder {rev['embedding_model_id']}")
        expected = {q: ask(ctx, q, ROLE).action for q in questions}   # the warm-up, and the reference actions

        def in_process_pass() -> dict[str, Any]:
            lat, changed = [], 0
            t_start = now()
            for q in questions:
                t = now()
                action = ask(ctx, q, ROLE).action
                lat.append((now() - t) * 1000)
                changed += action != expected[q]
            return {"lat_ms": lat, "wall_s": now() - t_start, "mismatches": changed}

        token = secrets.token_urlsafe(32)
        tokens = home / "bench-tokens.yml"
        write_tokens(tokens, token)
        res: dict[str, Any] = {"docs": build["docs"], "chunks": build["chunks"], "build": build,
                               "embedder": rev["embedding_model_id"], "index_revision": rev["revision_id"],
                               "questions": {"n": len(questions), "examples": questions[:3],
                                             "actions": _count(expected.values())},
                               "role": ROLE, "concurrency": concurrency}
        t0 = now()
        with http_server(home, tokens) as (url, proc):
            res["server_start_s"] = now() - t0
            log(f"server: listening at {url} after {res['server_start_s']:.1f} s; warm-up")
            warm = server_pass(url, token, [questions], expected, proc.pid)   # builds the server's warm state
            res["warmup"] = summary(warm["lat_ms"], warm["calls"], warm["wall_s"], warm["errors"], warm["mismatches"])
            blocks = []
            for r in range(reps):   # in-process and 1 client alternate: the same load drift hits both
                inp = in_process_pass()
                one = server_pass(url, token, [questions], expected, proc.pid)
                blocks.append({"in_process": inp, "one_client": one})
                log(f"server block {r + 1}/{reps}: in-process p95 {pct(inp['lat_ms'], 95):.1f} ms, "
                    f"1 client p95 {_fmt(pct(one['lat_ms'], 95))} ms, errors {sum(one['errors'].values())}, "
                    f"mismatches {one['mismatches']}")
            res["blocks"] = [_block_summary(b) for b in blocks]
            runs = {}
            for c in concurrency:
                if c == 1:   # the alternating blocks above are the 1-client figures
                    runs["1"] = _pooled([b["one_client"] for b in blocks])
                    continue
                out = server_pass(url, token, client_work(questions, c, p["calls"]), expected, proc.pid)
                runs[str(c)] = {**summary(out["lat_ms"], out["calls"], out["wall_s"], out["errors"],
                                          out["mismatches"]), "clients": c, "error_kinds": out["errors"],
                                "examples": out["examples"], "server_cpu_s": out["server_cpu_s"],
                                "client_cpu_s": out["client_cpu_s"], "lat_ms": _rounded(out["lat_ms"])}
                g = runs[str(c)]
                log(f"server {c} clients: {g['answered']}/{g['calls']} answered, {g['answers_per_s']:.1f} answers/s, "
                    f"p50 {_fmt(g['p50_ms'])} ms, p95 {_fmt(g['p95_ms'])} ms, errors {g['errors']}, "
                    f"mismatches {g['mismatches']}")
            res["server_peak_rss_mb"] = _proc_peak_rss_mb(proc.pid)
        res["clients"] = runs
        res["in_process"] = {**summary([x for b in blocks for x in b["in_process"]["lat_ms"]],
                                       len(questions) * reps, sum(b["in_process"]["wall_s"] for b in blocks), {},
                                       sum(b["in_process"]["mismatches"] for b in blocks))}
    finally:
        ws.close()
    return res


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def _rounded(lat: list[float]) -> list[float]:
    """Every call's latency, in call order, for results.json."""
    return [round(x, 2) for x in lat]


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _block_summary(b: dict[str, Any]) -> dict[str, Any]:
    inp, one = b["in_process"], b["one_client"]
    return {"in_process_p50_ms": pct(inp["lat_ms"], 50), "in_process_p95_ms": pct(inp["lat_ms"], 95),
            "in_process_mismatches": inp["mismatches"],
            "one_client_p50_ms": pct(one["lat_ms"], 50), "one_client_p95_ms": pct(one["lat_ms"], 95),
            "one_client_answers_per_s": len(one["lat_ms"]) / one["wall_s"], "one_client_errors": one["errors"],
            "one_client_mismatches": one["mismatches"], "server_cpu_s": one["server_cpu_s"],
            "client_cpu_s": one["client_cpu_s"], "calls": one["calls"],
            "in_process_lat_ms": _rounded(inp["lat_ms"]), "one_client_lat_ms": _rounded(one["lat_ms"])}


def _pooled(passes: list[dict[str, Any]]) -> dict[str, Any]:
    errors: dict[str, int] = {}
    for x in passes:
        for k, n in x["errors"].items():
            errors[k] = errors.get(k, 0) + n
    cpu = [x["server_cpu_s"] for x in passes]
    return {**summary([v for x in passes for v in x["lat_ms"]], sum(x["calls"] for x in passes),
                      sum(x["wall_s"] for x in passes), errors, sum(x["mismatches"] for x in passes)),
            "clients": 1, "error_kinds": errors, "examples": [e for x in passes for e in x["examples"]][:5],
            "server_cpu_s": None if None in cpu else sum(cpu),
            "client_cpu_s": sum(x["client_cpu_s"] for x in passes)}

"""`canon eval`: build a fresh index of a corpus in a temporary workspace with
the production code, answer every gold case, and measure what matters for
governed answers — and, side by side, the naive retrieval baselines
(canon/evaluation/baselines.py)."""

import datetime as dt
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from canon.ask.context import ask_context, make_embedder
from canon.ask.pipeline import Timings, ask
from canon.core.config import PROJECT_ROOT
from canon.core.errors import CanonInputError
from canon.evaluation.baselines import configurations
from canon.evaluation.gold import GoldCase, load_gold
from canon.evaluation.metrics import accuracy, leaks_of, recall
from canon.evaluation.report import gate_failures
from canon.index import publish as index
from canon.models.documents import Document, Status
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import Contract, load_contract
from canon.registry.policy import load_policy, project, visible


def evaluate(corpus: Path, gold_path: Path, *, contract: Contract | None = None, embedder=None,
             today: dt.date | None = None, workdir: Path | None = None,
             index_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """`index_options` go to `canon.index.publish.publish` (chunker, max_chars, overlap):
    a migration evaluates each configuration exactly as it would be served."""
    corpus = Path(corpus)
    if not corpus.exists():
        raise CanonInputError(corpus, "corpus not found")
    cases = load_gold(gold_path)
    contract = contract or load_contract(PROJECT_ROOT / "contracts" / "knowledge.yml")
    embedder = embedder or make_embedder()
    with tempfile.TemporaryDirectory(prefix="canon-eval-", dir=workdir) as tmp:
        tmp_path = Path(tmp)
        con = registry.connect(tmp_path / "canon.duckdb")
        try:
            run_id = str(uuid.uuid4())
            build = build_registry(con, corpus=corpus, corpus_contract=contract, run_id=run_id, today=today)
            registry.refresh_definitions(con)
            docs = registry.load_documents(con)
            policy_file = (corpus if corpus.is_dir() else corpus.parent) / "policy.yml"
            policy = load_policy(policy_file if policy_file.exists() else None)
            index.publish(con, tmp_path / "lancedb", project(docs, policy), embedder,
                          policy_revision=policy.revision, run_id=run_id, **(index_options or {}))
            ctx = ask_context(con, tmp_path / "lancedb", docs, policy, embedder=embedder)
            results = _run_cases(ctx, cases, docs, policy)
            results["configurations"] = configurations(ctx, cases, docs)
            log_rows = con.execute("SELECT role, * FROM answer_log").fetchall()
            results["summary"]["answer_log_rows"] = len(log_rows)
            # Each log row against what its own role may not see.
            results["summary"]["permission_leaks"] += sum(
                len(leaks_of(json.dumps([str(v) for v in row[1:]]), [d for d in docs if not visible(d, row[0], policy)],
                             [d for d in docs if visible(d, row[0], policy)]))
                for row in log_rows)
            results["summary"]["documents"] = len(docs)
            results["summary"]["quarantined"] = len(build.quarantined)
            results["summary"]["gate"] = gate_failures(results["summary"])
        finally:
            con.close()
    return results


ANSWERING = ("answer", "answer_conflict")


def _run_cases(ctx, cases: list[GoldCase], docs: list[Document], policy) -> dict[str, Any]:
    for c in cases[:3]:  # warm-up (model, caches, index files)
        ask(ctx, c.question, c.role, c.as_of)
    by_id = {d.doc_id: d for d in docs}
    out_cases, latencies, steps = [], [], []
    correct = recall_sum = recall_n = 0
    wrong_version = primaries = authoritative = wrong_primary = 0
    conflict_hit = conflict_n = leaks = 0
    per_action: dict[str, list[int]] = {}
    for c in cases:
        timings = Timings()
        t0 = time.perf_counter()
        resp = ask(ctx, c.question, c.role, c.as_of, timings=timings)
        latencies.append((time.perf_counter() - t0) * 1000)
        steps.append(timings.steps)
        data = resp.to_json_dict()
        ok = resp.action == c.expected_action
        correct += ok
        per_action.setdefault(c.expected_action, [0, 0])
        per_action[c.expected_action][0] += ok
        per_action[c.expected_action][1] += 1
        top3 = [e.doc_id for e in resp.evidence][:3]
        if c.gold_docs:
            recall_sum += recall(top3, c.gold_docs)
            recall_n += 1
        for e in resp.evidence:
            if e.use != "primary":
                continue
            primaries += 1
            d = by_id.get(e.doc_id)
            day = resp.as_of
            governed = d is not None and d.status == Status.approved
            # An observation (freshness snapshot) is authoritative for what it observed.
            authoritative += governed or (d is not None and d.status == Status.observed)
            if resp.action in ("answer", "answer_conflict") and (not governed or (day and not d.in_effect(day))):
                wrong_version += 1
        # The first gold document of a case expecting an answer is the one to answer from: an
        # answer whose primary evidence is another object's answers from a non-matching object.
        primary_ok = True
        if c.gold_docs and c.expected_action in ANSWERING and resp.action in ANSWERING:
            primary_ok = c.gold_docs[0] in {e.doc_id for e in resp.evidence if e.use == "primary"}
            wrong_primary += not primary_ok
        if c.expected_action == "answer_conflict":
            conflict_n += 1
            named = set(c.gold_docs) - {e.doc_id for e in resp.evidence if e.use == "primary"}
            conflict_hit += bool(named) and named <= {e.doc_id for e in resp.evidence if e.use == "conflict"}
        invisible = [d for d in docs if not visible(d, c.role, policy)]
        case_leaks = leaks_of(json.dumps(data), invisible, [d for d in docs if visible(d, c.role, policy)])
        leaks += len(case_leaks)
        out_cases.append({"id": c.id, "expected_action": c.expected_action, "gold_docs": c.gold_docs,
                          "passed": ok and (not c.gold_docs or recall(top3, c.gold_docs) == 1.0) and not case_leaks
                          and primary_ok,
                          "latency_ms": round(latencies[-1], 2), "response": data})
    answered = sum(1 for c in out_cases if c["response"]["action"] in ("answer", "answer_conflict"))
    lat = sorted(latencies)
    summary = {
        "cases": len(cases),
        "passed": sum(c["passed"] for c in out_cases),
        "action_accuracy": round(correct / len(cases), 4) if cases else 0.0,
        "recall_at_3": round(recall_sum / recall_n, 4) if recall_n else 1.0,
        "recall_cases": recall_n,
        "wrong_version_rate": round(wrong_version / answered, 4) if answered else 0.0,
        "wrong_primary_answers": wrong_primary,
        "authority_precision": round(authoritative / primaries, 4) if primaries else 1.0,
        "conflict_coverage": round(conflict_hit / conflict_n, 4) if conflict_n else 1.0,
        "permission_leaks": leaks,
        "clarification_accuracy": accuracy(per_action, "clarify"),
        "abstention_accuracy": accuracy(per_action, "abstain"),
        "denial_accuracy": accuracy(per_action, "deny"),
        "latency_ms_p50": round(statistics.median(lat), 2) if lat else 0.0,
        "latency_ms_p95": round(lat[max(0, int(round(0.95 * len(lat))) - 1)], 2) if lat else 0.0,
        "latency_steps_ms_mean": {k: round(statistics.fmean(s.get(k, 0.0) for s in steps), 3)
                                  for k in sorted({k for s in steps for k in s})},
    }
    return {"summary": summary, "cases": out_cases}

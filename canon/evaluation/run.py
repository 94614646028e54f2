"""`canon eval`: build a fresh index of a corpus in a temporary workspace with
the production code, answer every gold case, and measure what matters for
governed answers — and, side by side, the dossier's naive retrieval table."""

import datetime as dt
import json
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canon.ask.context import ask_context
from canon.ask.pipeline import Timings, ask
from canon.ask.understanding.parse import parse_question
from canon.core.config import PROJECT_ROOT
from canon.core.dates import parse_as_of
from canon.core.errors import CanonInputError
from canon.index import publish as index
from canon.models.documents import Document, Status
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import Contract, load_contract
from canon.registry.policy import load_policy, project, visible

# The release gold sets (name, corpus, gold): the dossier's 11 cases and Canon's harder set.
RELEASE_SETS = (
    ("dossier", PROJECT_ROOT / "tests/fixtures/dossier/corpus.jsonl", PROJECT_ROOT / "tests/fixtures/dossier/gold.json"),
    ("hard", PROJECT_ROOT / "tests/gold_hard/corpus", PROJECT_ROOT / "tests/gold_hard/gold.json"),
)
RELEASE_GATE = {"action_accuracy": 1.0, "permission_leaks": 0, "wrong_version_rate": 0.0, "recall_at_3": 0.95}


@dataclass
class GoldCase:
    id: str
    question: str
    role: str
    as_of: dt.date | None
    expected_action: str
    gold_docs: list[str]
    gold_answer: str = ""


def load_gold(path: Path) -> list[GoldCase]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CanonInputError(path, "gold file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CanonInputError(path, f"not valid JSON: {exc}") from None
    if isinstance(data, dict):
        data = data.get("cases", data.get("gold", []))
    if not isinstance(data, list):
        raise CanonInputError(path, "expected a list of gold cases")
    out = []
    for i, c in enumerate(data):
        try:
            out.append(GoldCase(id=str(c["id"]), question=c["question"], role=c["role"],
                                as_of=parse_as_of(c.get("as_of"), source=f"{path} case {c.get('id', i)}"),
                                expected_action=c["expected_action"], gold_docs=list(c.get("gold_docs") or []),
                                gold_answer=c.get("gold_answer", "")))
        except KeyError as exc:
            raise CanonInputError(path, f"case {i} lacks {exc.args[0]!r}", field=f"[{i}].{exc.args[0]}") from None
    return out


def _top_docs(hits, n: int = 3) -> list[str]:
    out: list[str] = []
    for h in hits:
        if h.doc_id not in out:
            out.append(h.doc_id)
    return out[:n]


def _recall(found: list[str], gold: list[str]) -> float:
    return len(set(found[:3]) & set(gold)) / len(gold) if gold else 1.0


def _constrained(hits, docs_by_id: dict[str, Document], case: GoldCase, catalog) -> list[str]:
    """The dossier's metadata constraints over retrieval candidates: approved and
    in effect first (by authority), and a source the question names is kept."""
    day = case.as_of
    parsed = parse_question(case.question, catalog, day)
    ordered = _top_docs(hits, 50)
    def governed(doc_id: str) -> bool:
        d = docs_by_id[doc_id]
        return d.status in (Status.approved, Status.observed) and (day is None or d.in_effect(day))
    # Hard constraints keep relevance order among what is approved and in effect.
    known = [i for i in ordered if i in docs_by_id]
    ranked = [i for i in known if governed(i)] + [i for i in known if not governed(i)]
    for ns in parsed.named_sources:
        named = [i for i in ordered if i in docs_by_id and (not ns.kinds or docs_by_id[i].kind in ns.kinds)
                 and docs_by_id[i].status != Status.approved]
        if named and named[0] not in ranked[:3]:
            ranked = ranked[:2] + [named[0]] + [i for i in ranked[2:] if i != named[0]]
    return ranked[:3]


def _leaks(resp_json: str, invisible: list[Document]) -> list[str]:
    found = []
    for d in invisible:
        probes = [d.doc_id, d.title] + [d.text[i:i + 40] for i in range(0, min(len(d.text), 200), 40) if len(d.text[i:i + 40]) >= 20]
        if any(p and p in resp_json for p in probes):
            found.append(d.doc_id)
    return found


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
    from canon.ask.context import make_embedder

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
            results["configurations"] = _configurations(ctx, cases, docs)
            log_rows = con.execute("SELECT role, * FROM answer_log").fetchall()
            results["summary"]["answer_log_rows"] = len(log_rows)
            # Each log row against what its own role may not see.
            results["summary"]["permission_leaks"] += sum(
                len(_leaks(json.dumps([str(v) for v in row[1:]]), [d for d in docs if not visible(d, row[0], policy)]))
                for row in log_rows)
            results["summary"]["documents"] = len(docs)
            results["summary"]["quarantined"] = len(build.quarantined)
            results["summary"]["gate"] = gate_failures(results["summary"])
        finally:
            con.close()
    return results


def _run_cases(ctx, cases: list[GoldCase], docs: list[Document], policy) -> dict[str, Any]:
    for c in cases[:3]:  # warm-up (model, caches, index files)
        ask(ctx, c.question, c.role, c.as_of)
    by_id = {d.doc_id: d for d in docs}
    out_cases, latencies, steps = [], [], []
    correct = recall_sum = recall_n = 0
    wrong_version = primaries = authoritative = 0
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
            recall_sum += _recall(top3, c.gold_docs)
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
        if c.expected_action == "answer_conflict":
            conflict_n += 1
            named = set(c.gold_docs) - {e.doc_id for e in resp.evidence if e.use == "primary"}
            conflict_hit += bool(named) and named <= {e.doc_id for e in resp.evidence if e.use == "conflict"}
        invisible = [d for d in docs if not visible(d, c.role, policy)]
        case_leaks = _leaks(json.dumps(data), invisible)
        leaks += len(case_leaks)
        out_cases.append({"id": c.id, "expected_action": c.expected_action, "gold_docs": c.gold_docs,
                          "passed": ok and (not c.gold_docs or _recall(top3, c.gold_docs) == 1.0) and not case_leaks,
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
        "authority_precision": round(authoritative / primaries, 4) if primaries else 1.0,
        "conflict_coverage": round(conflict_hit / conflict_n, 4) if conflict_n else 1.0,
        "permission_leaks": leaks,
        "clarification_accuracy": _acc(per_action, "clarify"),
        "abstention_accuracy": _acc(per_action, "abstain"),
        "denial_accuracy": _acc(per_action, "deny"),
        "latency_ms_p50": round(statistics.median(lat), 2) if lat else 0.0,
        "latency_ms_p95": round(lat[max(0, int(round(0.95 * len(lat))) - 1)], 2) if lat else 0.0,
        "latency_steps_ms_mean": {k: round(statistics.fmean(s.get(k, 0.0) for s in steps), 3)
                                  for k in sorted({k for s in steps for k in s})},
    }
    return {"summary": summary, "cases": out_cases}


def _acc(per_action: dict, action: str) -> float | None:
    hit, n = per_action.get(action, [0, 0])
    return round(hit / n, 4) if n else None


def _configurations(ctx, cases: list[GoldCase], docs: list[Document]) -> list[dict[str, Any]]:
    """The dossier's retrieval table on this corpus: recall@3 of BM25, vector and
    hybrid retrieval, each by relevance only and with governance constraints."""
    retr = ctx.retriever
    by_id = {d.doc_id: d for d in docs}
    with_gold = [c for c in cases if c.gold_docs]
    rows = []
    for mode, label in (("fts", "BM25 (LanceDB FTS)"), ("vector", "vector (embeddings)"), ("hybrid", "hybrid (RRF)")):
        plain = constrained = 0.0
        for c in with_gold:
            vec = retr.embed_query(c.question) if mode != "fts" else None
            hits = retr.search(c.question if mode != "vector" else None, vec, role=c.role, k=50, mode=mode)
            plain += _recall(_top_docs(hits), c.gold_docs)
            constrained += _recall(_constrained(hits, by_id, c, ctx.catalog), c.gold_docs)
        n = len(with_gold) or 1
        rows.append({"configuration": f"{label}, relevance only", "recall_at_3": round(plain / n, 3)})
        rows.append({"configuration": f"{label} + metadata constraints", "recall_at_3": round(constrained / n, 3)})
    gov = sum(_recall([e.doc_id for e in ask(ctx, c.question, c.role, c.as_of).evidence], c.gold_docs)
              for c in with_gold) / (len(with_gold) or 1)
    rows.append({"configuration": "Canon governed pipeline (resolve → graph → constraints)", "recall_at_3": round(gov, 3)})
    return rows


def gate_failures(summary: dict[str, Any]) -> list[str]:
    out = []
    if summary["action_accuracy"] < RELEASE_GATE["action_accuracy"]:
        out.append(f"action accuracy {summary['action_accuracy']} < 1.0")
    if summary["permission_leaks"] > 0:
        out.append(f"{summary['permission_leaks']} permission leak(s)")
    if summary["wrong_version_rate"] > 0:
        out.append(f"wrong-version rate {summary['wrong_version_rate']} > 0")
    if summary["recall_at_3"] < RELEASE_GATE["recall_at_3"]:
        out.append(f"recall@3 {summary['recall_at_3']} < 0.95")
    return out


def markdown_table(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = ["| metric | value |", "|---|---:|"]
    for k in ("cases", "passed", "action_accuracy", "recall_at_3", "wrong_version_rate", "authority_precision",
              "conflict_coverage", "permission_leaks", "clarification_accuracy", "abstention_accuracy",
              "denial_accuracy", "latency_ms_p50", "latency_ms_p95"):
        lines.append(f"| {k} | {s.get(k)} |")
    lines += ["", "| retrieval configuration | recall@3 |", "|---|---:|"]
    lines += [f"| {r['configuration']} | {r['recall_at_3']:.3f} |" for r in result["configurations"]]
    return "\n".join(lines)

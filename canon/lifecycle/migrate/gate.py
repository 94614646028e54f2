"""The release gate of a migration: both configurations answer the release
gold sets (each on a fresh index, the production pipeline), shown side by
side; the candidate must pass the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from canon.core.settings import load_settings
from canon.evaluation.run import evaluate
from canon.index.config import (
    IndexConfig,
)


def default_release_sets() -> list[tuple[str, Path, Path]]:
    """The configured release sets (the demo's two without a configuration), (name, corpus,
    gold), as the eval asset uses them; only those that ship here."""
    return [(s.name, s.corpus, s.gold) for s in load_settings().release_gate if s.gold.exists() and s.corpus.exists()]

def evaluate_pair(release_sets, current: IndexConfig, target: IndexConfig,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, corpus, gold in release_sets:
        pair = {}
        for side, cfg in (("current", current), ("candidate", target)):
            progress(f"eval {name}: {side} configuration …")
            pair[side] = evaluate(Path(corpus), Path(gold), embedder=cfg.embedder.build(),
                                  index_options=cfg.publish_options())
        out[name] = pair
    return out

_METRICS = ("cases", "passed", "action_accuracy", "recall_at_3", "wrong_version_rate", "authority_precision",
            "conflict_coverage", "permission_leaks", "clarification_accuracy", "abstention_accuracy",
            "denial_accuracy", "latency_ms_p50", "latency_ms_p95")

def side_by_side(evals: dict[str, Any], current_label: str, candidate_label: str) -> str:
    """The two eval tables of each release set, in adjacent columns."""
    parts = [f"current = {current_label}\n\ncandidate = {candidate_label}"]
    for name, pair in evals.items():
        cur, cand = pair["current"], pair["candidate"]
        lines = [f"### {name} ({cur['summary']['cases']} cases)", "",
                 "| metric | current | candidate |", "|---|---:|---:|"]
        lines += [f"| {k} | {cur['summary'].get(k)} | {cand['summary'].get(k)} |" for k in _METRICS]
        lines += [f"| release gate | {'PASS' if not cur['summary']['gate'] else 'FAIL'} "
                  f"| {'PASS' if not cand['summary']['gate'] else 'FAIL'} |", "",
                  "| retrieval configuration | current recall@3 | candidate recall@3 |", "|---|---:|---:|"]
        cand_rows = {r["configuration"]: r["recall_at_3"] for r in cand["configurations"]}
        lines += [f"| {r['configuration']} | {r['recall_at_3']:.3f} | {cand_rows.get(r['configuration'], float('nan')):.3f} |"
                  for r in cur["configurations"]]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)

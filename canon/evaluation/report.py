"""The release gate over an evaluation summary, and the summary as a markdown table."""

from __future__ import annotations

from typing import Any

RELEASE_GATE = {"action_accuracy": 1.0, "permission_leaks": 0, "wrong_version_rate": 0.0, "recall_at_3": 0.95,
                "wrong_primary_answers": 0}


def gate_failures(summary: dict[str, Any]) -> list[str]:
    out = []
    if summary["action_accuracy"] < RELEASE_GATE["action_accuracy"]:
        out.append(f"action accuracy {summary['action_accuracy']} < 1.0")
    if summary["permission_leaks"] > 0:
        out.append(f"{summary['permission_leaks']} permission leak(s)")
    if summary["wrong_version_rate"] > 0:
        out.append(f"wrong-version rate {summary['wrong_version_rate']} > 0")
    if summary.get("wrong_primary_answers", 0) > 0:
        out.append(f"{summary['wrong_primary_answers']} answer(s) from another object than the case's first gold "
                   "document")
    if summary["recall_at_3"] < RELEASE_GATE["recall_at_3"]:
        out.append(f"recall@3 {summary['recall_at_3']} < 0.95")
    return out


def markdown_table(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = ["| metric | value |", "|---|---:|"]
    for k in ("cases", "passed", "action_accuracy", "recall_at_3", "wrong_version_rate", "wrong_primary_answers",
              "authority_precision",
              "conflict_coverage", "permission_leaks", "clarification_accuracy", "abstention_accuracy",
              "denial_accuracy", "latency_ms_p50", "latency_ms_p95"):
        lines.append(f"| {k} | {s.get(k)} |")
    lines += ["", "| retrieval configuration | recall@3 |", "|---|---:|"]
    lines += [f"| {r['configuration']} | {r['recall_at_3']:.3f} |" for r in result["configurations"]]
    return "\n".join(lines)

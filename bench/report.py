"""The report: every figure with its target and status (Figures), the keys the results JSON always
carries, the table printed to stdout, and the commit the figures belong to. Standard library only."""

from __future__ import annotations

import subprocess
from typing import Any

from bench.settings import REPO
from bench.timing import spread


class Figures:
    """Every figure: key, section, label, value (median), spread, unit, target, status."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, key: str, section: str, label: str, samples: list[float] | float | None, unit: str = "",
            target: str = "", ok: bool | None = None, *, load: list[float] | None = None,
            rss: float | None = None, note: str = "", value: Any = None) -> None:
        if isinstance(samples, list):
            sp = spread(samples)
        elif samples is None:
            sp = spread([])
        else:
            sp = spread([samples])
        self.rows.append({"key": key, "section": section, "label": label,
                          "value": value if value is not None else sp["median"], "unit": unit,
                          "min": sp["min"], "max": sp["max"], "stdev": sp["stdev"], "reps": sp["n"],
                          "samples": sp["samples"], "target": target,
                          "status": ("met" if ok else "MISSED") if ok is not None else ("" if target == "" else "n/a"),
                          "load": load, "peak_rss_mb": rss, "note": note})

    def skip(self, key: str, section: str, label: str, target: str, why: str) -> None:
        self.rows.append({"key": key, "section": section, "label": label, "value": None, "unit": "", "min": None,
                          "max": None, "stdev": None, "reps": 0, "samples": [], "target": target,
                          "status": "skipped", "load": None, "peak_rss_mb": None, "note": why})


# Every key the JSON always carries (skipped figures have value null and status "skipped").
FIGURE_KEYS = [
    "limit.build_docs_per_s", "limit.build_chunks_per_s", "limit.model_only_chunks_per_s",
    "limit.model_only_pipeline_order_chunks_per_s", "limit.ratio_build_over_limit",
    "limit.ratio_build_over_limit_load_robust",
    "limit.ratio_build_over_pipeline_order", "limit.model_share_of_build", "limit.non_model_s",
    "limit.model_load_s", "limit.peak_rss_mb",
    "limit.backend.torch_chunks_per_s", "limit.backend.speedup_over_torch", "limit.backend.cpu_ratio_over_torch",
    "limit.backend.cosine_to_torch_min", "limit.backend.gold_unchanged",
    "structural.cold_s", "structural.cold_docs_per_s", "structural.cold_chunks_per_s",
    "structural.noop_s", "structural.noop_ratio", "structural.noop_embedded",
    "structural.one_change_s", "structural.one_change_embedded", "structural.acl_only_s",
    "structural.acl_only_embedded", "structural.revocation_s", "structural.peak_rss_mb",
    "query.docs.ask_p50_ms", "query.docs.ask_p95_ms", "query.docs.search_p95_ms", "query.docs.bare_hybrid_p95_ms",
    "query.docs.ratio_ask_over_bare_p95", "query.docs.ratio_search_over_bare_p95", "query.docs.peak_rss_mb",
    "query.chunks.ask_p50_ms", "query.chunks.ask_p95_ms", "query.chunks.search_p95_ms",
    "query.chunks.bare_hybrid_p95_ms", "query.chunks.ratio_ask_over_bare_p95",
    "query.chunks.ratio_search_over_bare_p95", "query.chunks.build_s", "query.chunks.peak_rss_mb",
    "metadata.synthetic_s", "metadata.synthetic_peak_rss_mb",
    "cli.ask_p95_s", "cli.ask_peak_rss_mb", "cli.ask_errors",
    "server.in_process_p50_ms", "server.in_process_p95_ms", "server.clients_1.answers_per_s",
    "server.clients_1.p95_ms", "server.ratio_p95_1_client", "server.errors_at_max_clients",
    "server.action_mismatches", "server.server_peak_rss_mb",
    "peers.llamaindex.ratio_cold", "peers.llamaindex.ratio_noop",
    "peers.dbtml.ratio_cold", "peers.dbtml.ratio_noop", "peers.dbtml.ratio_one_change",
    "peers.dbtml.ratio_ask_p95",
]



def complete(F: Figures, errors: dict[str, str]) -> None:
    """A row per failed section, and the keys of sections not run (status "not run")."""
    for name, err in errors.items():
        F.rows.append({"key": f"error.{name}", "section": "errors", "label": f"section {name} failed", "value": None,
                       "unit": "", "min": None, "max": None, "stdev": None, "reps": 0, "samples": [], "target": "",
                       "status": "ERROR", "load": None, "peak_rss_mb": None, "note": err})
    have = {r["key"] for r in F.rows}
    for k in FIGURE_KEYS:
        if k not in have:
            F.rows.append({"key": k, "section": "not run", "label": k, "value": None, "unit": "", "min": None,
                           "max": None, "stdev": None, "reps": 0, "samples": [], "target": "", "status": "not run",
                           "load": None, "peak_rss_mb": None, "note": ""})


def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        a = abs(v)
        return f"{v:.3f}" if a < 1 else f"{v:.2f}" if a < 10 else f"{v:.1f}" if a < 1000 else f"{v:.0f}"
    return str(v)


def print_table(F: Figures) -> None:
    head = f"{'figure':52s} {'median':>9s} {'min-max':>17s} {'unit':9s} {'target':24s} {'status':8s} {'load 1m':>7s}"
    section = None
    print()
    print(head)
    print("-" * len(head))
    for r in F.rows:
        if r["status"] == "not run":
            continue
        if r["section"] != section:
            section = r["section"]
            print(f"[{section}]")
        mm = f"{fmt(r['min'])}-{fmt(r['max'])}" if r["reps"] and r["reps"] > 1 else ""
        ld = fmt(r["load"][0]) if r.get("load") else "-"
        print(f"  {r['label'][:50]:50s} {fmt(r['value']):>9s} {mm:>17s} {r['unit'][:9]:9s} {r['target'][:24]:24s} "
              f"{r['status']:8s} {ld:>7s}")
        if r["note"]:
            print(f"      {r['note']}")



def git_state() -> dict[str, Any]:
    """The commit measured, and whether Canon's code differs from it (the figures belong to a commit)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=str(REPO), capture_output=True, text=True,
                                  timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"head": git("rev-parse", "--short", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--", "canon", "assets", "contracts"))}


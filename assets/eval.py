"""The release gate: after each index publish, the configured gold sets
(`release_gate.gold`; the demo's two sets in the demo configuration) are
answered by the production pipeline on a fresh index; blocking checks stop a
bad release. Without gold sets there is no release gate: definitions.py then
leaves the asset and its checks out."""

import json
from pathlib import Path

import dagster as dg

from assets.keys import EVAL_GROUP, EVAL_KEY, INDEX_KEY
from canon.evaluation.report import RELEASE_GATE, markdown_table
from canon.evaluation.run import evaluate
from canon.registry.contracts import load_contract
from canon.run_lineage import canon_table
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.paths import CanonPathsResource


def report_path(paths: CanonPathsResource) -> Path:
    return paths.canon.home / "eval" / "eval_report.json"


@dg.asset(key=EVAL_KEY, deps=[INDEX_KEY], group_name=EVAL_GROUP,
          description="The release gold sets answered on a fresh index with the production code.")
def eval_report(context: dg.AssetExecutionContext, embedder: EmbedderResource,
                lineage: OpenLineageResource, paths: CanonPathsResource) -> dg.MaterializeResult:
    emb = embedder.get_embedder()
    report, tables = {}, []
    with lineage.asset_run(context, inputs=[canon_table("documents")], outputs=[canon_table("eval_report")]):
        sets = paths.settings.release_gate
        if not sets:
            raise dg.Failure("no release gold sets are configured (release_gate.gold)")
        for s in sets:
            name, corpus, gold = s.name, s.corpus, s.gold
            if not gold.exists():
                raise dg.Failure(f"release gold set {name!r} missing: {gold}")
            result = evaluate(corpus, gold, contract=load_contract(s.contract), embedder=emb)
            report[name] = result
            tables.append(f"### {name} ({result['summary']['cases']} cases)\n\n{markdown_table(result)}")
    path = report_path(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str))
    s = {n: r["summary"] for n, r in report.items()}
    return dg.MaterializeResult(metadata={
        "eval_table": dg.MetadataValue.md("\n\n".join(tables)),
        "report": dg.MetadataValue.path(str(path)),
        **{f"{n}/{k}": v for n, sm in s.items() for k, v in sm.items() if isinstance(v, (int, float)) and v is not None},
    })


def _gate_check(name: str, description: str, failing):
    @dg.asset_check(asset=EVAL_KEY, name=name, description=description, blocking=True)
    def _check(paths: CanonPathsResource) -> dg.AssetCheckResult:
        report = json.loads(report_path(paths).read_text())
        problems = {n: failing(r["summary"]) for n, r in report.items()}
        bad = {n: p for n, p in problems.items() if p}
        return dg.AssetCheckResult(passed=not bad, metadata={
            "sets": dg.MetadataValue.json({n: p or "ok" for n, p in problems.items()})})
    return _check


eval_checks = [
    _gate_check("zero_permission_leaks", "No invisible document's id or text in any response or log.",
                lambda s: s["permission_leaks"] and f"{s['permission_leaks']} leak(s)"),
    _gate_check("zero_wrong_version_primaries", "No primary evidence that is not approved or not in effect.",
                lambda s: s["wrong_version_rate"] > 0 and f"wrong-version rate {s['wrong_version_rate']}"),
    _gate_check("action_accuracy_100", "Every release case gets the expected action.",
                lambda s: s["action_accuracy"] < RELEASE_GATE["action_accuracy"] and f"action accuracy {s['action_accuracy']}"),
    _gate_check("recall_at_3", f"Gold recall@3 ≥ {RELEASE_GATE['recall_at_3']}.",
                lambda s: s["recall_at_3"] < RELEASE_GATE["recall_at_3"] and f"recall@3 {s['recall_at_3']}"),
]

"""dbt models, versions and tests as Dagster assets and asset checks
(dagster-dbt), plus one source-freshness check per dbt source read from
sources.json (dagster-dbt does not turn `dbt source freshness` into checks)."""


import json
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets

from assets.dbt_translator import CanonDbtTranslator
from canon.run_lineage import dbt_relation
from canon.sources.dbt.artifact_store import publish_artifacts
from canon.sources.dbt.artifacts import read_sources_json
from resources.dbt import dbt_project, ensure_manifest
from resources.lineage_emitter import OpenLineageResource
from resources.settings import canon_paths


def _source_keys(manifest_path: Path) -> dict[str, dg.AssetKey]:
    manifest = json.loads(manifest_path.read_text())
    return {
        uid: dg.AssetKey(["raw", s["source_name"], s["name"]])
        for uid, s in manifest.get("sources", {}).items()
    }


def _relations(manifest_path: Path) -> dict[str, list]:
    """OpenLineage datasets for the dbt run: raw sources in, model relations out (with columns)."""
    manifest = json.loads(manifest_path.read_text())
    sources = [dbt_relation(s["relation_name"].replace('"', "")) for s in manifest.get("sources", {}).values()
               if s.get("relation_name")]
    models = [dbt_relation(n["relation_name"].replace('"', ""),
                           fields=[(c, v.get("data_type")) for c, v in (n.get("columns") or {}).items()] or None)
              for n in manifest.get("nodes", {}).values()
              if n.get("resource_type") == "model" and n.get("relation_name")]
    return {"sources": sources, "models": models}


def build_dbt_definitions() -> tuple[dg.AssetsDefinition, dg.AssetChecksDefinition]:
    manifest_path = ensure_manifest()
    translator = CanonDbtTranslator()
    relations = _relations(manifest_path)

    @dbt_assets(manifest=manifest_path, project=dbt_project(), dagster_dbt_translator=translator, name="dbt_models")
    def dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, lineage: OpenLineageResource):
        """`dbt build` (models, versions, tests); the artifacts are published as one set for Canon."""
        with lineage.asset_run(context, job_name="dbt_build", inputs=relations["sources"], outputs=relations["models"]):
            invocation = dbt.cli(["build"], context=context)
            yield from invocation.stream()
        store = canon_paths().dbt_artifacts_dir
        copied = publish_artifacts(invocation.target_path, store, names=("manifest.json", "semantic_manifest.json", "run_results.json"))
        # sources.json belongs to the same artifact set; `dbt source freshness` yields no Dagster events.
        freshness = dbt.cli(["source", "freshness"], manifest=manifest_path, raise_on_error=False)
        freshness.wait()
        copied += publish_artifacts(freshness.target_path, store, names=("sources.json",))
        context.log.info(f"published dbt artifacts: {', '.join(copied)}")

    source_keys = _source_keys(manifest_path)

    @dg.multi_asset_check(
        specs=[
            dg.AssetCheckSpec("source_freshness", asset=key, description="dbt source freshness from sources.json")
            for key in source_keys.values()
        ],
        name="dbt_source_freshness",
        can_subset=True,
    )
    def dbt_source_freshness(context: dg.AssetCheckExecutionContext, dbt: DbtCliResource):
        invocation = dbt.cli(["source", "freshness"], manifest=manifest_path, raise_on_error=False)
        invocation.wait()
        sources_json = Path(invocation.target_path) / "sources.json"
        if not sources_json.exists():
            raise dg.Failure(f"dbt source freshness wrote no sources.json in {invocation.target_path}")
        publish_artifacts(invocation.target_path, canon_paths().dbt_artifacts_dir, names=("sources.json",))
        results = {r["unique_id"]: r for r in read_sources_json(sources_json)}
        for uid, key in source_keys.items():
            if context.selected_asset_check_keys and dg.AssetCheckKey(key, "source_freshness") not in context.selected_asset_check_keys:
                continue
            r = results.get(uid)
            if r is None:
                yield dg.AssetCheckResult(asset_key=key, check_name="source_freshness", passed=False,
                                          metadata={"reason": "no freshness result (no loaded_at_field?)"})
                continue
            passed = r["status"] == "pass"
            yield dg.AssetCheckResult(
                asset_key=key, check_name="source_freshness", passed=passed,
                severity=dg.AssetCheckSeverity.WARN if r["status"] == "warn" else dg.AssetCheckSeverity.ERROR,
                metadata={
                    "status": r["status"],
                    "max_loaded_at": r["max_loaded_at"],
                    "age_minutes": round((r.get("age_seconds") or 0) / 60, 1),
                    "warn_after_minutes": r.get("warn_after_minutes"),
                    "error_after_minutes": r.get("error_after_minutes"),
                },
            )

    return dbt_models, dbt_source_freshness

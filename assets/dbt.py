"""dbt models, versions and tests as Dagster assets and asset checks
(dagster-dbt), one source-freshness check per dbt source read from
sources.json (dagster-dbt does not turn `dbt source freshness` into checks),
and the job a dbt project change starts.

Raw sources keep their three-part relation name as the asset key
(raw/commerce/order_lines), so the raw-loader assets (assets/demo_raw.py) and
dbt's sources are the same assets."""

import json
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, DbtProject, dbt_assets

from assets.keys import EVAL_GROUP
from canon.run_lineage import dbt_relation
from canon.sources.dbt.artifact_store import publish_artifacts
from canon.sources.dbt.artifacts import read_sources_json
from resources.lineage_emitter import OpenLineageResource
from resources.paths import CanonPathsResource
from resources.warehouse import DB_TAGS

DBT_JOB = "canon_dbt_job"


class CanonDbtTranslator(DagsterDbtTranslator):
    def __init__(self) -> None:
        super().__init__(settings=DagsterDbtTranslatorSettings(enable_asset_checks=True))

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str, project: Any) -> dg.AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        props = self.get_resource_props(manifest, unique_id)
        if props["resource_type"] == "source":
            return spec.replace_attributes(key=dg.AssetKey(["raw", props["source_name"], props["name"]]),
                                           group_name="raw")
        return spec.replace_attributes(group_name="dbt")


def _source_keys(manifest: dict) -> dict[str, dg.AssetKey]:
    return {
        uid: dg.AssetKey(["raw", s["source_name"], s["name"]])
        for uid, s in manifest.get("sources", {}).items()
    }


def _relations(manifest: dict) -> dict[str, list]:
    """OpenLineage datasets for the dbt run: raw sources in, model relations out (with columns)."""
    sources = [dbt_relation(s["relation_name"].replace('"', "")) for s in manifest.get("sources", {}).values()
               if s.get("relation_name")]
    models = [dbt_relation(n["relation_name"].replace('"', ""),
                           fields=[(c, v.get("data_type")) for c, v in (n.get("columns") or {}).items()] or None)
              for n in manifest.get("nodes", {}).values()
              if n.get("resource_type") == "model" and n.get("relation_name")]
    return {"sources": sources, "models": models}


class DbtDefinitions(NamedTuple):
    models: dg.AssetsDefinition
    source_freshness: dg.AssetChecksDefinition
    job: Any   # dg.define_asset_job(...): the job a dbt project change starts


def build_dbt_definitions(project: DbtProject) -> DbtDefinitions:
    """The dbt assets, checks and job, read from the project's manifest (call when the code location loads)."""
    manifest_path = Path(project.manifest_path)
    manifest = json.loads(manifest_path.read_text())
    relations = _relations(manifest)

    @dbt_assets(manifest=manifest_path, project=project, dagster_dbt_translator=CanonDbtTranslator(),
                name="dbt_models")
    def dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, lineage: OpenLineageResource,
                   paths: CanonPathsResource):
        """`dbt build` (models, versions, tests); the artifacts are published as one set for Canon."""
        with lineage.asset_run(context, job_name="dbt_build", inputs=relations["sources"], outputs=relations["models"]):
            invocation = dbt.cli(["build"], context=context)
            yield from invocation.stream()
        store = paths.canon.dbt_artifacts_dir
        copied = publish_artifacts(invocation.target_path, store, names=("manifest.json", "semantic_manifest.json", "run_results.json"))
        # sources.json belongs to the same artifact set; `dbt source freshness` yields no Dagster events.
        freshness = dbt.cli(["source", "freshness"], manifest=manifest_path, raise_on_error=False)
        freshness.wait()
        copied += publish_artifacts(freshness.target_path, store, names=("sources.json",))
        context.log.info(f"published dbt artifacts: {', '.join(copied)}")

    source_keys = _source_keys(manifest)

    @dg.multi_asset_check(
        specs=[
            dg.AssetCheckSpec("source_freshness", asset=key, description="dbt source freshness from sources.json")
            for key in source_keys.values()
        ],
        name="dbt_source_freshness",
        can_subset=True,
    )
    def dbt_source_freshness(context: dg.AssetCheckExecutionContext, dbt: DbtCliResource,
                             paths: CanonPathsResource):
        invocation = dbt.cli(["source", "freshness"], manifest=manifest_path, raise_on_error=False)
        invocation.wait()
        sources_json = Path(invocation.target_path) / "sources.json"
        if not sources_json.exists():
            raise dg.Failure(f"dbt source freshness wrote no sources.json in {invocation.target_path}")
        publish_artifacts(invocation.target_path, paths.canon.dbt_artifacts_dir, names=("sources.json",))
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

    dbt_job = dg.define_asset_job(
        DBT_JOB, selection=dg.AssetSelection.assets(dbt_models).downstream() - dg.AssetSelection.groups(EVAL_GROUP),
        tags=DB_TAGS,
        description="A dbt project change: dbt build → artifacts → registry → definitions → index.",
    )
    return DbtDefinitions(dbt_models, dbt_source_freshness, dbt_job)

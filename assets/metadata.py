"""dbt artifacts → DuckDB tables (`dbt_nodes`, `lineage_edges`,
`source_freshness`), and the effective-time `definitions` table with its checks."""


import dagster as dg
from dagster_duckdb import DuckDBResource

from canon.registry import checks as definition_checks
from canon.registry import store as registry
from canon.run_lineage import DatasetRef, canon_table
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.tables import store_bundle
from resources.lineage_emitter import OpenLineageResource
from resources.settings import canon_paths

DBT_TABLE_KEYS = {
    "dbt_nodes": dg.AssetKey(["canon", "dbt_nodes"]),
    "lineage_edges": dg.AssetKey(["canon", "lineage_edges"]),
    "source_freshness": dg.AssetKey(["canon", "source_freshness"]),
}
DEFINITIONS_KEY = dg.AssetKey(["canon", "definitions"])
REGISTRY_KEY = dg.AssetKey(["canon", "evidence_registry"])


def build_metadata_assets(dbt_models: dg.AssetsDefinition) -> list:
    @dg.multi_asset(
        name="dbt_artifact_tables",
        specs=[
            dg.AssetSpec(DBT_TABLE_KEYS["dbt_nodes"], deps=[dbt_models], group_name="metadata",
                         description="One row per dbt model / version / source / seed / metric / semantic model / exposure."),
            dg.AssetSpec(DBT_TABLE_KEYS["lineage_edges"], deps=[dbt_models], group_name="metadata",
                         description="Model-level edges from dbt's parent map, column-level edges where derivable."),
            dg.AssetSpec(DBT_TABLE_KEYS["source_freshness"], deps=[dbt_models], group_name="metadata",
                         description="dbt source freshness (sources.json): max_loaded_at, age and SLA per source."),
        ],
    )
    def dbt_artifact_tables(context: dg.AssetExecutionContext, canon_db: DuckDBResource, lineage: OpenLineageResource):
        outputs = [canon_table(n) for n in ("dbt_nodes", "lineage_edges", "source_freshness")]
        with lineage.asset_run(context, inputs=[DatasetRef("file://dbt_artifacts", "manifest.json")], outputs=outputs):
            bundle = read_artifacts(canon_paths().dbt_artifacts_dir)  # parse all before writing anything
            with canon_db.get_connection() as con:
                counts = store_bundle(con, bundle)
        common = {"artifact_revision": bundle.revision, "manifest_schema_version": bundle.schema_version}
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["dbt_nodes"], metadata={
            **common, "dagster/row_count": counts["dbt_nodes"]})
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["lineage_edges"], metadata={
            **common, "dagster/row_count": counts["lineage_edges"]})
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["source_freshness"], metadata={
            **common, "dagster/row_count": counts["source_freshness"],
            "sources": dg.MetadataValue.md(_freshness_md(bundle.freshness))})

    @dg.asset(key=DEFINITIONS_KEY, deps=[REGISTRY_KEY], group_name="metadata",
              description="Effective-time definitions: one row per evidence revision; "
                          "`SELECT * FROM definitions_as_of('2026-08-31')` gives what governs on a date.")
    def definitions(context: dg.AssetExecutionContext, canon_db: DuckDBResource,
                    lineage: OpenLineageResource) -> dg.MaterializeResult:
        with lineage.asset_run(context, inputs=[canon_table("documents")], outputs=[canon_table("definitions")]):
            with canon_db.get_connection() as con:
                registry.ensure_schema(con)
                n = registry.refresh_definitions(con)
                by_status = con.execute("SELECT status, count(*) FROM definitions GROUP BY 1 ORDER BY 1").fetchall()
        return dg.MaterializeResult(metadata={"dagster/row_count": n, **{f"status/{s}": c for s, c in by_status}})

    return [dbt_artifact_tables, definitions, *build_definition_checks()]


def _freshness_md(freshness: list[dict]) -> str:
    lines = ["| source | max_loaded_at | age (min) | warn after (min) | status |", "|---|---|---:|---:|---|"]
    for r in sorted(freshness, key=lambda r: r["source"]):
        lines.append(f"| {r['source']} | {r['max_loaded_at']} | {(r.get('age_seconds') or 0) / 60:.0f} | "
                     f"{r.get('warn_after_minutes') or ''} | {r['status']} |")
    return "\n".join(lines)


def _check(name: str, description: str, compute, *, severity=dg.AssetCheckSeverity.ERROR):
    @dg.asset_check(asset=DEFINITIONS_KEY, name=name, description=description, blocking=False)
    def _run(canon_db: DuckDBResource) -> dg.AssetCheckResult:
        with canon_db.get_connection() as con:
            docs = registry.load_documents(con)
            rows = compute(con, docs)
        return dg.AssetCheckResult(
            passed=not rows, severity=severity,
            metadata={"violations": len(rows), "details": dg.MetadataValue.json(rows[:50])},
        )
    return _run


def build_definition_checks() -> list:
    return [
        _check("no_overlapping_approved_revisions",
               "Two approved revisions of one object must not overlap in business time.",
               lambda con, docs: definition_checks.approved_overlaps(docs)),
        _check("supersedes_resolves", "Every `supersedes` points at a registered revision.",
               lambda con, docs: definition_checks.dangling_supersedes(docs)),
        _check("valid_interval", "valid_to must be after valid_from.",
               lambda con, docs: definition_checks.inverted_intervals(con)),
        _check("approved_metric_has_model", "Every approved metric has an implementing model version.",
               lambda con, docs: definition_checks.metrics_without_model(con, docs)),
        _check("lineage_edges_resolve", "Every lineage edge joins two known dbt nodes.",
               lambda con, docs: definition_checks.dangling_edges(con)),
    ]

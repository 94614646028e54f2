"""Canon's registry: the published dbt artifacts as tables (`dbt_nodes`,
`lineage_edges`, `source_freshness`), the evidence registry (dbt-rendered
documents and each configured documents source, each through its contract
gate) with its quarantine check, the effective-time `definitions` table with
its checks, and the jobs a documents change or new dbt artifacts start."""

import datetime as dt

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.keys import DBT_TABLE_KEYS, DEFINITIONS_KEY, EVAL_GROUP, INDEX_KEY, REGISTRY_KEY
from canon.ask.understanding import catalog_store
from canon.core.clock import utcnow
from canon.registry import checks as definition_checks
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.run_lineage import DatasetRef, canon_table
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_bundle
from canon.sources.dbt.tables import store_bundle
from resources.lineage_emitter import OpenLineageResource
from resources.paths import CONTRACTS_DIR, CanonPathsResource
from resources.warehouse import DB_TAGS

DOCUMENTS_JOB = "canon_documents_job"
ARTIFACTS_JOB = "canon_artifacts_job"
QUARANTINE_MAX_AGE_HOURS = 24


# ------------------------------------------------------------ dbt artifacts → tables

def build_dbt_artifact_tables(dbt_models: dg.AssetsDefinition | None) -> dg.AssetsDefinition:
    """The artifact tables, downstream of Canon's own dbt build when there is one (demo and
    project mode); in artifacts mode dbt runs elsewhere and they have no upstream asset."""
    deps = [dbt_models] if dbt_models is not None else []

    @dg.multi_asset(
        name="dbt_artifact_tables",
        specs=[
            dg.AssetSpec(DBT_TABLE_KEYS["dbt_nodes"], deps=deps, group_name="metadata",
                         description="One row per dbt model / version / source / seed / metric / semantic model / exposure."),
            dg.AssetSpec(DBT_TABLE_KEYS["lineage_edges"], deps=deps, group_name="metadata",
                         description="Model-level edges from dbt's parent map, column-level edges where derivable."),
            dg.AssetSpec(DBT_TABLE_KEYS["source_freshness"], deps=deps, group_name="metadata",
                         description="dbt source freshness (sources.json): max_loaded_at, age and SLA per source."),
        ],
    )
    def dbt_artifact_tables(context: dg.AssetExecutionContext, canon_db: DuckDBResource, lineage: OpenLineageResource,
                            paths: CanonPathsResource):
        outputs = [canon_table(n) for n in ("dbt_nodes", "lineage_edges", "source_freshness")]
        with lineage.asset_run(context, inputs=[DatasetRef("file://dbt_artifacts", "manifest.json")], outputs=outputs):
            bundle = read_artifacts(paths.canon.dbt_artifacts_dir)  # parse all before writing anything
            with canon_db.get_connection() as con:
                counts = store_bundle(con, bundle)
        common = {"artifact_revision": bundle.revision, "manifest_schema_version": bundle.schema_version}
        for why in bundle.missing.values():   # an absent artifact is no failure, but the run says what it lacks
            context.log.warning(why)
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["dbt_nodes"], metadata={
            **common, "dagster/row_count": counts["dbt_nodes"],
            "artifacts_read": dg.MetadataValue.json(bundle.files),
            "artifacts_missing": dg.MetadataValue.json(bundle.missing)})
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["lineage_edges"], metadata={
            **common, "dagster/row_count": counts["lineage_edges"]})
        yield dg.MaterializeResult(asset_key=DBT_TABLE_KEYS["source_freshness"], metadata={
            **common, "dagster/row_count": counts["source_freshness"],
            "sources": dg.MetadataValue.md(_freshness_md(bundle.freshness))})

    return dbt_artifact_tables


def _freshness_md(freshness: list[dict]) -> str:
    lines = ["| source | max_loaded_at | age (min) | warn after (min) | status |", "|---|---|---:|---:|---|"]
    for r in sorted(freshness, key=lambda r: r["source"]):
        lines.append(f"| {r['source']} | {r['max_loaded_at']} | {(r.get('age_seconds') or 0) / 60:.0f} | "
                     f"{r.get('warn_after_minutes') or ''} | {r['status']} |")
    return "\n".join(lines)


# ------------------------------------------------------------ the evidence registry

def _dbt_documents(paths: CanonPathsResource, default_roles: tuple[str, ...] | None = None):
    # default_roles None renders only meta.canon nodes (the demo); see canon/sources/dbt/documents.py.
    return documents_from_bundle(read_artifacts(paths.canon.dbt_artifacts_dir), default_roles=default_roles)


@dg.asset(
    key=REGISTRY_KEY,
    deps=list(DBT_TABLE_KEYS.values()),
    group_name="registry",
    description="Every evidence revision (dbt metrics, model versions, lineage, freshness, and the knowledge/ "
                "corpus) after its contract gate; failures go to the quarantine table with their reasons.",
)
def evidence_registry(context: dg.AssetExecutionContext, canon_db: DuckDBResource, lineage: OpenLineageResource,
                      paths: CanonPathsResource):
    # Each configured documents source under its own contract (canon/core/settings.py).
    documents = [(d.path, load_contract(d.contract)) for d in paths.documents]
    dbt_contract = load_contract(CONTRACTS_DIR / "dbt_artifacts.yml")
    outputs = [canon_table("documents"), canon_table("quarantine")]
    with lineage.asset_run(context, inputs=[canon_table("dbt_nodes"), canon_table("lineage_edges")], outputs=outputs):
        # The configured default_roles (none in the demo, whose rendered nodes all name their roles);
        # documents mode has no dbt evidence at all.
        settings = paths.settings
        dbt_docs = _dbt_documents(paths, settings.default_roles or None) if settings.has_dbt else None
        with canon_db.get_connection() as con:
            build = build_registry(
                con, documents=documents, dbt_documents=dbt_docs,
                dbt_contract=dbt_contract if dbt_docs is not None else None, run_id=context.run.run_id,
                today=dt.date.today(),
            )
            catalog_store.refresh_catalog(con)   # what a new `canon ask` process matches against
            kinds = con.execute(
                "SELECT kind, count(*) FROM documents WHERE deleted_at IS NULL GROUP BY 1 ORDER BY 1").fetchall()
            held, oldest = con.execute(
                "SELECT count(*), min(first_quarantined_at) FROM quarantine WHERE released_at IS NULL").fetchall()[0]
    reasons = "\n".join(f"- `{q.source_uri}`: {'; '.join(q.reasons)}" for q in build.quarantined) or "none"
    return dg.MaterializeResult(metadata={
        **build.summary(),
        "dagster/row_count": build.documents,
        "kinds": dg.MetadataValue.json(dict(kinds)),
        "quarantine_reasons": dg.MetadataValue.md(reasons),
        "quarantine_open": held,
        "quarantine_oldest_age_hours": round((utcnow() - oldest).total_seconds() / 3600, 2) if oldest else 0.0,
        "corpus": str(paths.corpus_dir or "none"),
        "documents_sources": dg.MetadataValue.json([{"path": str(p), "contract": c.label} for p, c in documents]),
    })


@dg.asset_check(asset=REGISTRY_KEY, name="quarantine_age", blocking=False,
                description=f"Nothing waits in quarantine for more than {QUARANTINE_MAX_AGE_HOURS} h.")
def quarantine_age(canon_db: DuckDBResource) -> dg.AssetCheckResult:
    with canon_db.get_connection() as con:
        rows = con.execute(
            "SELECT source_uri, reasons, first_quarantined_at FROM quarantine WHERE released_at IS NULL "
            "ORDER BY first_quarantined_at").fetchall()
    now = utcnow()
    oldest_h = max(((now - r[2]).total_seconds() / 3600 for r in rows), default=0.0)
    return dg.AssetCheckResult(
        passed=oldest_h <= QUARANTINE_MAX_AGE_HOURS,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"quarantined": len(rows), "oldest_age_hours": round(oldest_h, 2),
                  "entries": dg.MetadataValue.json([{"source_uri": r[0], "reasons": list(r[1])} for r in rows[:50]])},
    )


# ------------------------------------------------------------ effective-time definitions

@dg.asset(key=DEFINITIONS_KEY, deps=[REGISTRY_KEY], group_name="metadata",
          description="Effective-time definitions: one row per evidence revision; "
                      "`SELECT * FROM definitions_as_of('2026-08-31')` gives what governs on a date.")
def effective_definitions(context: dg.AssetExecutionContext, canon_db: DuckDBResource,
                          lineage: OpenLineageResource) -> dg.MaterializeResult:
    with lineage.asset_run(context, inputs=[canon_table("documents")], outputs=[canon_table("definitions")]):
        with canon_db.get_connection() as con:
            registry.ensure_schema(con)
            n = registry.refresh_definitions(con)
            by_status = con.execute("SELECT status, count(*) FROM definitions GROUP BY 1 ORDER BY 1").fetchall()
    return dg.MaterializeResult(metadata={"dagster/row_count": n, **{f"status/{s}": c for s, c in by_status}})


def _definition_check(name: str, description: str, compute, *, severity=dg.AssetCheckSeverity.ERROR):
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


definitions_checks = [
    _definition_check("no_overlapping_approved_revisions",
                      "Two approved revisions of one object must not overlap in business time.",
                      lambda con, docs: definition_checks.approved_overlaps(docs)),
    _definition_check("supersedes_resolves", "Every `supersedes` points at a registered revision.",
                      lambda con, docs: definition_checks.dangling_supersedes(docs)),
    _definition_check("supersedes_consistent",
                      "No supersedes cycle, and no approved revision supersedes one that starts later.",
                      lambda con, docs: definition_checks.contradicting_supersedes(docs)),
    _definition_check("valid_interval", "valid_to must be after valid_from.",
                      lambda con, docs: definition_checks.inverted_intervals(con)),
    _definition_check("approved_metric_has_model", "Every approved metric has an implementing model version.",
                      lambda con, docs: definition_checks.metrics_without_model(con, docs)),
    _definition_check("lineage_edges_resolve", "Every lineage edge joins two known dbt nodes.",
                      lambda con, docs: definition_checks.dangling_edges(con)),
]


# ------------------------------------------------------------ jobs

documents_job = dg.define_asset_job(
    DOCUMENTS_JOB, selection=dg.AssetSelection.assets(REGISTRY_KEY, DEFINITIONS_KEY, INDEX_KEY),
    tags=DB_TAGS,
    description="A knowledge/ change: registry (contract gate) → definitions → index. "
                "Only changed documents are re-chunked and embedded.",
)

artifacts_job = dg.define_asset_job(
    ARTIFACTS_JOB,
    selection=dg.AssetSelection.assets(*DBT_TABLE_KEYS.values()).downstream() - dg.AssetSelection.groups(EVAL_GROUP),
    tags=DB_TAGS,
    description="dbt artifacts published outside Canon: artifact tables → registry → definitions → index.",
)


@dg.asset_check(asset=REGISTRY_KEY, name="identity_takeovers", blocking=True,
                description="No file or source tried to take a doc_id or an object another one owns, or to clone "
                            "an id (canon.registry.claims): a takeover attempt blocks everything downstream.")
def identity_takeovers(canon_db: DuckDBResource) -> dg.AssetCheckResult:
    with canon_db.get_connection() as con:
        rows = definition_checks.identity_takeovers(con)
    return dg.AssetCheckResult(
        passed=not rows, severity=dg.AssetCheckSeverity.ERROR,
        metadata={"attempts": len(rows), "entries": dg.MetadataValue.json(rows[:50])},
    )

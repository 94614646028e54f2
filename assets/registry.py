"""The evidence registry asset: dbt-rendered documents and the knowledge/
corpus, each through its contract gate, into DuckDB; quarantine checks."""


import datetime as dt

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.metadata import DBT_TABLE_KEYS, REGISTRY_KEY
from canon.registry import checks as registry_checks
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.run_lineage import canon_table
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_artifacts
from resources.lineage_emitter import OpenLineageResource
from resources.settings import CONTRACTS_DIR, canon_paths, corpus_dir

QUARANTINE_MAX_AGE_HOURS = 24


def _dbt_documents():
    bundle = read_artifacts(canon_paths().dbt_artifacts_dir)
    nodes = bundle.nodes.to_pylist()
    edges = bundle.edges.to_pylist()
    return documents_from_artifacts(bundle.governed, nodes, edges, bundle.freshness, revision=bundle.revision)


@dg.asset(
    key=REGISTRY_KEY,
    deps=list(DBT_TABLE_KEYS.values()),
    group_name="registry",
    description="Every evidence revision (dbt metrics, model versions, lineage, freshness, and the knowledge/ "
                "corpus) after its contract gate; failures go to the quarantine table with their reasons.",
)
def evidence_registry(context: dg.AssetExecutionContext, canon_db: DuckDBResource, lineage: OpenLineageResource):
    corpus_contract = load_contract(CONTRACTS_DIR / "knowledge.yml")
    dbt_contract = load_contract(CONTRACTS_DIR / "dbt_artifacts.yml")
    outputs = [canon_table("documents"), canon_table("quarantine")]
    with lineage.asset_run(context, inputs=[canon_table("dbt_nodes"), canon_table("lineage_edges")], outputs=outputs):
        dbt_docs = _dbt_documents()
        with canon_db.get_connection() as con:
            build = build_registry(
                con, corpus=corpus_dir(), corpus_contract=corpus_contract, dbt_documents=dbt_docs,
                dbt_contract=dbt_contract, run_id=context.run.run_id, today=dt.date.today(),
            )
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
        "quarantine_oldest_age_hours": round((_utcnow() - oldest).total_seconds() / 3600, 2) if oldest else 0.0,
        "corpus": str(corpus_dir()),
    })


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


@dg.asset_check(asset=REGISTRY_KEY, name="quarantine_age", blocking=False,
                description=f"Nothing waits in quarantine for more than {QUARANTINE_MAX_AGE_HOURS} h.")
def quarantine_age(canon_db: DuckDBResource) -> dg.AssetCheckResult:
    with canon_db.get_connection() as con:
        rows = con.execute(
            "SELECT source_uri, reasons, first_quarantined_at FROM quarantine WHERE released_at IS NULL "
            "ORDER BY first_quarantined_at").fetchall()
    now = _utcnow()
    oldest_h = max(((now - r[2]).total_seconds() / 3600 for r in rows), default=0.0)
    return dg.AssetCheckResult(
        passed=oldest_h <= QUARANTINE_MAX_AGE_HOURS,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"quarantined": len(rows), "oldest_age_hours": round(oldest_h, 2),
                  "entries": dg.MetadataValue.json([{"source_uri": r[0], "reasons": list(r[1])} for r in rows[:50]])},
    )


@dg.asset_check(asset=REGISTRY_KEY, name="identity_takeovers", blocking=True,
                description="No file or source tried to take a doc_id or an object another one owns, or to clone "
                            "an id (canon.registry.claims): a takeover attempt blocks everything downstream.")
def identity_takeovers(canon_db: DuckDBResource) -> dg.AssetCheckResult:
    with canon_db.get_connection() as con:
        rows = registry_checks.identity_takeovers(con)
    return dg.AssetCheckResult(
        passed=not rows, severity=dg.AssetCheckSeverity.ERROR,
        metadata={"attempts": len(rows), "entries": dg.MetadataValue.json(rows[:50])},
    )

"""The knowledge index: every live registry revision chunked, embedded and
published to LanceDB as a new index revision recorded in DuckDB. The ACL it
carries is the registry's, projected through the live policy."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.metadata import DEFINITIONS_KEY
from canon.index import config as index_config
from canon.index import publish as index
from canon.index.build import build_index
from canon.ops import checks as ops_checks
from canon.registry.policy import load_policy
from canon.run_lineage import canon_table, index_revision
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.settings import canon_paths, policy_file

INDEX_KEY = dg.AssetKey(["canon", "knowledge_index"])


@dg.asset(
    key=INDEX_KEY, deps=[DEFINITIONS_KEY], group_name="index", kinds={"lancedb"},
    description="Entity-aligned chunks with real embeddings in LanceDB; each publish is a revision "
                "(building → ready) and queries pin the ready one. Unchanged documents embed nothing.",
)
def knowledge_index(context: dg.AssetExecutionContext, canon_db: DuckDBResource, embedder: EmbedderResource,
                    lineage: OpenLineageResource) -> dg.MaterializeResult:
    paths = canon_paths()
    policy = load_policy(policy_file())
    emb = embedder.get_embedder()
    with lineage.asset_run(context, inputs=[canon_table("documents")]) as run:
        with canon_db.get_connection() as con:
            # First sighting of this policy revision (the revocation-lag clock), if no sensor saw it.
            ops_checks.record_policy_revision(con, policy.revision, seen_by="knowledge_index")
            # After a `canon migrate` cut-over the active configuration (table, model, chunking) wins.
            emb, options = index_config.publish_setup(con, emb)
            result = build_index(con, paths.lancedb_dir, emb, policy, run_id=context.run.run_id, **options)
            rev = index.served_revision(con)
        run.add_output(index_revision(result.revision_id))
    return dg.MaterializeResult(metadata={
        "index_revision": result.revision_id,
        "lance_version": result.lance_version,
        "policy_revision": policy.revision,
        "embedding_model": emb.identity.model_id,
        "dagster/row_count": rev["row_count"] if rev else 0,
        "noop": result.noop,
        **{f"count/{k}": v for k, v in result.counts.items() if isinstance(v, (int, float, bool))},
    })

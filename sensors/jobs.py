"""The jobs the sensors start. Each covers one change's path and nothing more;
the nightly schedule runs the main job (everything, eval included)."""

import dagster as dg

from assets.eval import EVAL_KEY
from assets.index import INDEX_KEY
from assets.metadata import DBT_TABLE_KEYS, DEFINITIONS_KEY, REGISTRY_KEY
from sensors.common import DB_TAGS

DOCUMENTS_JOB = "canon_documents_job"
POLICY_JOB = "canon_policy_job"
DBT_JOB = "canon_dbt_job"
ARTIFACTS_JOB = "canon_artifacts_job"


def build_jobs(dbt_models: dg.AssetsDefinition) -> dict:
    no_eval = dg.AssetSelection.assets(EVAL_KEY)
    return {
        DOCUMENTS_JOB: dg.define_asset_job(
            DOCUMENTS_JOB, selection=dg.AssetSelection.assets(REGISTRY_KEY, DEFINITIONS_KEY, INDEX_KEY),
            tags=DB_TAGS,
            description="A knowledge/ change: registry (contract gate) → definitions → index. "
                        "Only changed documents are re-chunked and embedded.",
        ),
        POLICY_JOB: dg.define_asset_job(
            POLICY_JOB, selection=dg.AssetSelection.assets(INDEX_KEY),
            tags=DB_TAGS,
            description="The policy fast path: re-publish the index under the new policy.yml revision. "
                        "ACL attributes are rewritten in place; no text is re-embedded.",
        ),
        DBT_JOB: dg.define_asset_job(
            DBT_JOB, selection=dg.AssetSelection.assets(dbt_models).downstream() - no_eval,
            tags=DB_TAGS,
            description="A dbt project change: dbt build → artifacts → registry → definitions → index.",
        ),
        ARTIFACTS_JOB: dg.define_asset_job(
            ARTIFACTS_JOB, selection=dg.AssetSelection.assets(*DBT_TABLE_KEYS.values()).downstream() - no_eval,
            tags=DB_TAGS,
            description="dbt artifacts published outside Canon: artifact tables → registry → definitions → index.",
        ),
    }

"""The asset keys one domain names in another (dependencies, job selections,
sensors), kept here so no domain module imports another just for a key."""

import dagster as dg

# dbt artifacts as Canon's tables (assets/registry.py)
DBT_TABLE_KEYS = {
    "dbt_nodes": dg.AssetKey(["canon", "dbt_nodes"]),
    "lineage_edges": dg.AssetKey(["canon", "lineage_edges"]),
    "source_freshness": dg.AssetKey(["canon", "source_freshness"]),
}
# assets/registry.py
REGISTRY_KEY = dg.AssetKey(["canon", "evidence_registry"])
DEFINITIONS_KEY = dg.AssetKey(["canon", "definitions"])   # the effective-time definitions table
# assets/index.py
INDEX_KEY = dg.AssetKey(["canon", "knowledge_index"])
# assets/eval.py
EVAL_KEY = dg.AssetKey(["canon", "eval_report"])
# Jobs leave the release gate out by its group: a selection by key fails where the
# configuration has no release gate (and so no eval_report asset).
EVAL_GROUP = "eval"

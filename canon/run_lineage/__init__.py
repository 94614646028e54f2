"""OpenLineage run events for Canon jobs: datasets, facets, transports and the emitter.

The public API is re-exported here so callers write `from canon.run_lineage import LineageEmitter`.
"""

from canon.run_lineage.datasets import ColumnRef, DatasetRef, canon_table, dbt_relation, index_revision
from canon.run_lineage.emitter import DEFAULT_NAMESPACE, DEFAULT_PRODUCER, LineageEmitter, ParentRun, RunHandle
from canon.run_lineage.transport import ENV_VARS, TransportConfig, TransportKind, build_transport

__all__ = [
    "DEFAULT_NAMESPACE",
    "DEFAULT_PRODUCER",
    "ENV_VARS",
    "ColumnRef",
    "DatasetRef",
    "LineageEmitter",
    "ParentRun",
    "RunHandle",
    "TransportConfig",
    "TransportKind",
    "build_transport",
    "canon_table",
    "dbt_relation",
    "index_revision",
]

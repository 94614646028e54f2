"""OpenLineage run events for Dagster assets: a thin resource over canon.run_lineage.

Every field left unset falls back to the CANON_OPENLINEAGE_* environment
variables (then to canon's defaults: a JSONL file under CANON_HOME), so
`OpenLineageResource()` follows the environment and
`OpenLineageResource(url=dg.EnvVar("LINEAGE_URL"))` pins one setting.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Optional

import dagster as dg
from pydantic import Field

from canon.run_lineage import DatasetRef, LineageEmitter, ParentRun, RunHandle, TransportConfig


class OpenLineageResource(dg.ConfigurableResource):
    """Emits OpenLineage START / COMPLETE / FAIL events; delivery problems never fail an asset."""

    transport: Optional[str] = Field(
        default=None, description="file | console | http | none; unset: $CANON_OPENLINEAGE_TRANSPORT, else file"
    )
    url: Optional[str] = Field(default=None, description="http transport base URL; unset: $CANON_OPENLINEAGE_URL")
    endpoint: Optional[str] = Field(default=None, description="http path; unset: api/v1/lineage")
    api_key_env: Optional[str] = Field(
        default=None, description="NAME of the env var holding the bearer token (never the token itself)"
    )
    timeout_s: Optional[float] = Field(default=None, description="http timeout in seconds; unset: 5")
    path: Optional[str] = Field(
        default=None, description="file transport path inside CANON_HOME; unset: openlineage/events.jsonl"
    )
    namespace: str = Field(default="canon", description="OpenLineage job namespace")

    def transport_config(self) -> TransportConfig:
        return TransportConfig.from_env(
            kind=self.transport, url=self.url, endpoint=self.endpoint,
            api_key_env=self.api_key_env, timeout_s=self.timeout_s, path=self.path,
        )

    def get_emitter(self) -> LineageEmitter:
        return LineageEmitter(self.transport_config(), namespace=self.namespace, integration="DAGSTER")

    @contextmanager
    def asset_run(
        self,
        context: dg.AssetExecutionContext,
        *,
        inputs: Sequence[DatasetRef] = (),
        outputs: Sequence[DatasetRef] = (),
        job_name: str | None = None,
        job_facets: Mapping[str, object] | None = None,
    ) -> Iterator[RunHandle]:
        """One OpenLineage run for the executing asset, child of the Dagster run.

        The job is named after the asset key (`a/b`) unless `job_name` is given;
        the Dagster run becomes the `parent` run facet.
        """
        emitter = self.get_emitter()
        name = job_name or _asset_job_name(context)
        parent = ParentRun(namespace=self.namespace, job_name=context.run.job_name, run_id=context.run.run_id)
        try:
            with emitter.run(name, inputs=inputs, outputs=outputs, job_facets=job_facets, parent=parent) as handle:
                yield handle
        finally:
            emitter.close()


def _asset_job_name(context: dg.AssetExecutionContext) -> str:
    keys = list(context.selected_asset_keys)
    if len(keys) == 1:
        return keys[0].to_user_string()
    # A multi-asset: one run for the op that computes them all.
    return context.op_execution_context.op.name

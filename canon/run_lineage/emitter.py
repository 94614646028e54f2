"""Run-level lineage: one OpenLineage START and one COMPLETE / FAIL / ABORT per job run.

Events are built with openlineage-python's own classes and delivered by its
transports (canon/run_lineage/transport.py) through its `OpenLineageClient`.
Two rules shape this module (docs/design.md, "Lineage at two grains"):

* Lineage never fails the work it describes. A transport error (endpoint down,
  disk full, bad ambient OpenLineage config) becomes one warning per event.
* Secrets never travel in events: an event whose JSON would contain the value
  of the token's environment variable is withheld, and error text is redacted.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import DatasetFacet, JobFacet, OutputDatasetFacet, RunFacet
from openlineage.client.serde import Serde
from openlineage.client.uuid import generate_new_uuid

from canon.run_lineage.datasets import DatasetRef
from canon.run_lineage.facets import (
    error_facet,
    job_type_facet,
    output_statistics_facet,
    parent_facet,
    processing_engine_facet,
)
from canon.run_lineage.transport import TransportConfig, build_transport, redact_url

# One logger for the package: warnings about lost events are filtered on this name.
log = logging.getLogger("canon.run_lineage")

DEFAULT_NAMESPACE = "canon"
DEFAULT_PRODUCER = "https://github.com/canon/canon"

# Shorter values would match ordinary text and withhold harmless events.
_MIN_GUARDED_SECRET_LEN = 4
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


@dataclass(frozen=True)
class ParentRun:
    """The run that spawned this one (e.g. the Dagster run around an asset)."""

    namespace: str
    job_name: str
    run_id: str



# The client merges openlineage.yml / OPENLINEAGE__* settings into ours; these keys stay ours:
# no environment variables copied into run facets (a token could be one of them), no git
# remote (it may embed credentials), no renaming of our datasets by trimmers.
_PINNED_CLIENT_CONFIG: dict[str, Any] = {
    "facets": {"environment_variables": [], "source_code_location": {"disabled": True}},
    "dataset": {"reducing_enabled": False},
}



class LineageEmitter:
    """Emits OpenLineage run events for Canon jobs. Never raises on delivery problems."""

    def __init__(
        self,
        config: TransportConfig | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        producer: str = DEFAULT_PRODUCER,
        *,
        integration: str = "CANON",
    ) -> None:
        self.config = config if config is not None else TransportConfig.from_env()
        self.namespace = namespace
        self.producer = producer
        self.integration = integration
        self.emitted = 0      # accepted by the transport
        self.failed = 0       # transport raised; logged as a warning
        self.withheld = 0     # would have carried a secret; not sent
        self._client: OpenLineageClient | None
        try:
            transport = build_transport(self.config)
        except OSError as exc:  # e.g. CANON_HOME not writable: lineage is lost, the run is not
            log.warning("OpenLineage disabled: cannot prepare %s (%s)", self.config.target(), exc)
            self._client = None
            return
        try:
            self._client = OpenLineageClient(transport=transport, config=copy.deepcopy(_PINNED_CLIENT_CONFIG))
        except Exception as exc:  # a broken ambient openlineage.yml must not fail the run
            log.warning("OpenLineage disabled: the client could not be configured (%s: %s)",
                        type(exc).__name__, exc)
            self._client = None

    # -- public API -------------------------------------------------------

    @contextmanager
    def run(
        self,
        job_name: str,
        *,
        inputs: Sequence[DatasetRef] = (),
        outputs: Sequence[DatasetRef] = (),
        job_facets: Mapping[str, JobFacet] | None = None,
        run_facets: Mapping[str, RunFacet] | None = None,
        run_id: str | None = None,
        parent: ParentRun | None = None,
    ) -> Iterator["RunHandle"]:
        """START on enter; COMPLETE on normal exit; FAIL (errorMessage facet) when the body
        raises, ABORT on interrupts (KeyboardInterrupt, Dagster termination). Re-raises."""
        handle = RunHandle(
            self, job_name, _valid_run_id(run_id), inputs, outputs,
            job_facets or {}, run_facets or {}, parent,
        )
        self._send(handle, RunState.START)
        try:
            yield handle
        except Exception as exc:
            self._send(handle, RunState.FAIL, error=exc)
            raise
        except BaseException as exc:
            self._send(handle, RunState.ABORT, error=exc)
            raise
        else:
            self._send(handle, RunState.COMPLETE)

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close(timeout=0)
            except Exception:  # closing is best effort too
                log.debug("OpenLineage transport close failed", exc_info=True)

    # -- internals --------------------------------------------------------

    def _secrets(self) -> list[str]:
        name = self.config.api_key_env
        value = os.environ.get(name, "").strip() if name else ""
        return [value] if len(value) >= _MIN_GUARDED_SECRET_LEN else []

    def redact(self, text: str) -> str:
        for secret in self._secrets():
            text = text.replace(secret, "***")
        # Error text quotes URLs: keep their scheme, host and path only.
        return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)

    def _send(self, handle: "RunHandle", state: RunState, *, error: BaseException | None = None) -> bool:
        try:
            event = handle.build_event(state, error=error)
        except Exception as exc:  # a malformed facet loses this event, never the run
            self.failed += 1
            log.warning("OpenLineage %s event for job %s could not be built (%s); the run continues",
                        state.value, handle.job_name, self.redact(f"{type(exc).__name__}: {exc}")[:300])
            return False
        return self._emit(event)

    def _emit(self, event: RunEvent) -> bool:
        if self._client is None:
            return False
        state = event.eventType.value if event.eventType else "?"
        secrets = self._secrets()
        try:
            if secrets:
                body = Serde.to_json(event)
                if any(s in body for s in secrets):
                    self.withheld += 1
                    log.warning("OpenLineage %s event for job %s withheld: it contained the value of $%s",
                                state, event.job.name, self.config.api_key_env)
                    return False
            self._client.emit(event)
        except Exception as exc:
            self.failed += 1
            reason = self.redact(f"{type(exc).__name__}: {exc}")[:300]
            log.warning("OpenLineage %s event for job %s not delivered to %s (%s); the run continues",
                        state, event.job.name, self.config.target(), reason)
            return False
        self.emitted += 1
        return True


def _valid_run_id(run_id: str | None) -> str:
    if run_id is None:
        return str(generate_new_uuid())
    try:
        return str(uuid.UUID(str(run_id)))
    except ValueError:
        raise ValueError(f"OpenLineage runId must be a UUID, got {run_id!r}") from None


class RunHandle:
    """The body's view of a running job: add datasets and facets before the terminal event."""

    def __init__(
        self,
        emitter: LineageEmitter,
        job_name: str,
        run_id: str,
        inputs: Sequence[DatasetRef],
        outputs: Sequence[DatasetRef],
        job_facets: Mapping[str, JobFacet],
        run_facets: Mapping[str, RunFacet],
        parent: ParentRun | None,
    ) -> None:
        self.emitter = emitter
        self.job_name = job_name
        self.run_id = run_id
        self.parent = parent
        self.job_facets: dict[str, JobFacet] = dict(job_facets)
        self.run_facets: dict[str, RunFacet] = dict(run_facets)
        # Keyed by (namespace, name): adding a dataset twice replaces it, never duplicates it.
        self._inputs: dict[tuple[str, str], DatasetRef] = {}
        self._outputs: dict[tuple[str, str], DatasetRef] = {}
        self._output_facets: dict[tuple[str, str], dict[str, DatasetFacet]] = {}
        self._output_only_facets: dict[tuple[str, str], dict[str, OutputDatasetFacet]] = {}
        for ref in inputs:
            self.add_input(ref)
        for ref in outputs:
            self.add_output(ref)

    @property
    def inputs(self) -> list[DatasetRef]:
        return list(self._inputs.values())

    @property
    def outputs(self) -> list[DatasetRef]:
        return list(self._outputs.values())

    def add_input(self, ref: DatasetRef) -> None:
        self._inputs[ref.key] = ref

    def add_output(self, ref: DatasetRef) -> None:
        """Add (or replace, by namespace+name) an output; facets already set on it are kept."""
        self._outputs[ref.key] = ref

    def set_output_facets(
        self, facets: Mapping[str, DatasetFacet | OutputDatasetFacet], *, dataset: DatasetRef | None = None
    ) -> None:
        """Attach facets to one output (or to every output when `dataset` is None).

        OutputDatasetFacet subclasses (e.g. output statistics) go to `outputFacets`,
        other DatasetFacets to the dataset's `facets`.
        """
        keys = [dataset.key] if dataset is not None else list(self._outputs)
        if dataset is not None and dataset.key not in self._outputs:
            self.add_output(dataset)
        for key in keys:
            for name, facet in facets.items():
                if isinstance(facet, OutputDatasetFacet):
                    self._output_only_facets.setdefault(key, {})[name] = facet
                elif isinstance(facet, DatasetFacet):
                    self._output_facets.setdefault(key, {})[name] = facet
                else:
                    raise TypeError(f"facet {name!r} is not an OpenLineage dataset or output-dataset facet")

    def set_output_statistics(
        self, *, row_count: int | None = None, size_bytes: int | None = None,
        file_count: int | None = None, dataset: DatasetRef | None = None,
    ) -> None:
        stats = output_statistics_facet(
            row_count=row_count, size_bytes=size_bytes, file_count=file_count, producer=self.emitter.producer
        )
        self.set_output_facets({"outputStatistics": stats}, dataset=dataset)

    def set_run_facets(self, facets: Mapping[str, RunFacet]) -> None:
        self.run_facets.update(facets)

    # -- event construction -------------------------------------------------

    def build_event(self, state: RunState, *, error: BaseException | None = None) -> RunEvent:
        producer = self.emitter.producer
        run_facets: dict[str, RunFacet] = {"processing_engine": processing_engine_facet(producer)}
        if self.parent is not None:
            run_facets["parent"] = parent_facet(
                self.parent.namespace, self.parent.job_name, self.parent.run_id, producer
            )
        run_facets.update(self.run_facets)
        if error is not None:
            run_facets["errorMessage"] = error_facet(error, producer=producer, redact=self.emitter.redact)
        job_facets: dict[str, JobFacet] = {"jobType": job_type_facet(self.emitter.integration, producer)}
        job_facets.update(self.job_facets)
        return RunEvent(
            eventType=state,
            eventTime=datetime.now(timezone.utc).isoformat(),
            run=Run(runId=self.run_id, facets=run_facets),
            job=Job(namespace=self.emitter.namespace, name=self.job_name, facets=job_facets),
            inputs=[
                InputDataset(namespace=r.namespace, name=r.name, facets=r.dataset_facets(producer))
                for r in self._inputs.values()
            ],
            outputs=[
                OutputDataset(
                    namespace=r.namespace,
                    name=r.name,
                    facets={**r.dataset_facets(producer), **self._output_facets.get(k, {})},
                    outputFacets=dict(self._output_only_facets.get(k, {})),
                )
                for k, r in self._outputs.items()
            ],
            producer=producer,
        )

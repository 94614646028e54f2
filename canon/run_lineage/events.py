"""Run-level lineage: one OpenLineage START and one COMPLETE / FAIL / ABORT per job run.

Seed 004 ("Record lineage at two grains"): run-level events name the datasets a
job read and wrote so a catalogue that speaks OpenLineage shows Canon next to
the warehouse jobs; chunk-level lineage lives in tables, never in events.

Events are built with openlineage-python's own classes and delivered by its
transports (file in append mode = JSONL, console, http, noop), through its
`OpenLineageClient`. Two rules shape this module:

* Lineage never fails the work it describes. A transport error (endpoint down,
  disk full, bad ambient OpenLineage config) becomes one warning per event.
* Secrets never travel in events. The http token is read at send time from
  the environment variable *named* by `api_key_env`; it goes only into the
  Authorization header, and an event whose JSON would contain it is withheld.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import sys
import traceback
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from openlineage.client import OpenLineageClient
from openlineage.client import __version__ as OPENLINEAGE_CLIENT_VERSION
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    DatasetFacet,
    JobFacet,
    OutputDatasetFacet,
    RunFacet,
    column_lineage_dataset,
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
)
from openlineage.client.serde import Serde
from openlineage.client.transport.console import ConsoleConfig, ConsoleTransport
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport, TokenProvider
from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG
from openlineage.client.transport.noop import NoopConfig, NoopTransport
from openlineage.client.transport.transport import Transport
from openlineage.client.uuid import generate_new_uuid
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from canon import __version__ as CANON_VERSION
from canon.core.config import CanonPaths, inside_root
from canon.core.errors import CanonInputError

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "canon"
DEFAULT_PRODUCER = "https://github.com/canon/canon"

# FAIL events carry the error, not a novel: keep the message short and the tail of the trace.
MAX_ERROR_MESSAGE_CHARS = 2_000
MAX_STACK_TRACE_CHARS = 8_000
# Shorter values would match ordinary text and withhold harmless events.
_MIN_GUARDED_SECRET_LEN = 4

_ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TransportKind = Literal["file", "console", "http", "none"]

# Environment variables read by TransportConfig.from_env, by config field.
ENV_VARS: dict[str, str] = {
    "kind": "CANON_OPENLINEAGE_TRANSPORT",
    "path": "CANON_OPENLINEAGE_PATH",
    "url": "CANON_OPENLINEAGE_URL",
    "endpoint": "CANON_OPENLINEAGE_ENDPOINT",
    "timeout_s": "CANON_OPENLINEAGE_TIMEOUT_S",
    "retries": "CANON_OPENLINEAGE_RETRIES",
    "api_key_env": "CANON_OPENLINEAGE_API_KEY_ENV",
}


# --------------------------------------------------------------------------- config


class TransportConfig(BaseModel):
    """Where run events go. Defaults to a JSONL file under CANON_HOME."""

    # hide_input_in_errors: a token pasted into the wrong field must not be echoed back.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    kind: TransportKind = "file"
    # file: relative to CANON_HOME, or absolute but inside it. None = $CANON_HOME/openlineage/events.jsonl.
    path: Path | None = None
    # None = CANON_HOME from the environment (canon.core.config.CanonPaths).
    canon_home: Path | None = None
    # http: base url of the lineage service; the endpoint is joined onto it.
    url: str | None = None
    endpoint: str = "api/v1/lineage"
    timeout_s: float = Field(default=5.0, gt=0, le=300)
    # Retries per event (connect, read, 5xx). Small on purpose: a down endpoint must not stall runs.
    retries: int = Field(default=1, ge=0, le=10)
    # The NAME of an environment variable holding a bearer token, never the token.
    api_key_env: str | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _normalise_kind(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("api_key_env")
    @classmethod
    def _is_env_var_name(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_VAR_NAME.match(v):
            raise ValueError("must be the name of an environment variable holding the token, not the token itself")
        return v

    @field_validator("url")
    @classmethod
    def _plain_http_url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        v = v.strip()
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as http://localhost:5000")
        if parts.username is not None or parts.password is not None:
            # userinfo would surface in logs and error messages; tokens go through api_key_env.
            raise ValueError("must not carry credentials; name the token's environment variable in api_key_env")
        return v

    @model_validator(mode="after")
    def _complete_for_kind(self) -> "TransportConfig":
        if self.kind == "http" and not self.url:
            raise ValueError("the http transport needs a url (CANON_OPENLINEAGE_URL)")
        if self.kind == "file" or self.path is not None:
            self.file_path()  # refuses a path outside CANON_HOME now, not at the first event
        return self

    def home(self) -> Path:
        return (self.canon_home or CanonPaths.from_env().home).resolve()

    def file_path(self) -> Path:
        """The JSONL file for the file transport, guaranteed inside CANON_HOME."""
        home = self.home()
        candidate = self.path if self.path is not None else CanonPaths(home).openlineage_file
        return inside_root(home, Path(candidate), what="OpenLineage event file")

    def target(self) -> str:
        """Where events go, safe to log (no token, no credentials)."""
        if self.kind == "file":
            return str(self.file_path())
        if self.kind == "http":
            return _join_url(self.url or "", self.endpoint)
        return self.kind

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "TransportConfig":
        """Read CANON_OPENLINEAGE_* variables; non-None `overrides` win over the environment.

        Errors are CanonInputError naming the variable (or field) and the reason.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        source: dict[str, str] = {}
        for fld, var in ENV_VARS.items():
            raw = env.get(var)
            if raw is not None and raw.strip() != "":
                values[fld] = raw.strip()
                source[fld] = var
        for fld, value in overrides.items():
            if value is not None:
                values[fld] = value
                source[fld] = fld
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = str(err["loc"][0]) if err.get("loc") else ""
            where = source.get(loc, loc) or ", ".join(source.values()) or "defaults"
            reason = str(err["msg"]).removeprefix("Value error, ")
            raise CanonInputError("OpenLineage transport settings", reason, field=where) from None


def _join_url(url: str, endpoint: str) -> str:
    # urljoin("http://h/base", "api/v1/lineage") would drop "base": keep the base path.
    return url.rstrip("/") + "/" + endpoint.lstrip("/")


# --------------------------------------------------------------------------- datasets


class ColumnRef(NamedTuple):
    """One input column feeding an output column (ColumnLineageDatasetFacet.InputField)."""

    namespace: str
    name: str
    field: str
    # Optional DIRECT transformation subtype: IDENTITY, TRANSFORMATION, AGGREGATION.
    transformation: str | None = None


def _column_ref(value: Any) -> ColumnRef:
    if isinstance(value, ColumnRef):
        return value
    if isinstance(value, Mapping):
        return ColumnRef(value["namespace"], value["name"], value["field"], value.get("transformation"))
    if isinstance(value, (tuple, list)) and len(value) in (3, 4):
        return ColumnRef(*value)
    raise TypeError(f"column lineage input must be ColumnRef, (namespace, name, field) or a mapping, got {value!r}")


@dataclass(frozen=True)
class DatasetRef:
    """A dataset as OpenLineage names it, with an optional schema and column lineage.

    fields:          [(column, type)] (or bare column names) -> SchemaDatasetFacet
    column_lineage:  {output column: [ColumnRef | (namespace, name, field)]} -> ColumnLineageDatasetFacet
    facets:          any further dataset facets, by facet key
    """

    namespace: str
    name: str
    fields: Sequence[tuple[str, str | None] | str] | None = None
    column_lineage: Mapping[str, Sequence[Any]] | None = None
    facets: Mapping[str, DatasetFacet] | None = None

    def __post_init__(self) -> None:
        if not self.namespace or not self.name:
            raise ValueError("a dataset needs a namespace and a name")
        if self.fields is not None:
            norm = tuple((f, None) if isinstance(f, str) else (str(f[0]), None if f[1] is None else str(f[1]))
                         for f in self.fields)
            object.__setattr__(self, "fields", norm)
        if self.column_lineage is not None:
            norm_cl = {str(k): tuple(_column_ref(v) for v in vs) for k, vs in self.column_lineage.items()}
            object.__setattr__(self, "column_lineage", norm_cl)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def column(self, field_name: str, transformation: str | None = None) -> ColumnRef:
        """This dataset's column, for another dataset's column_lineage."""
        return ColumnRef(self.namespace, self.name, field_name, transformation)

    def dataset_facets(self, producer: str) -> dict[str, DatasetFacet]:
        facets: dict[str, DatasetFacet] = {}
        if self.fields is not None:
            facets["schema"] = schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(name=n, type=t, ordinal_position=i)
                    for i, (n, t) in enumerate(self.fields, start=1)
                ],
                producer=producer,
            )
        if self.column_lineage:
            facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    out: column_lineage_dataset.Fields(
                        inputFields=[
                            column_lineage_dataset.InputField(
                                namespace=c.namespace,
                                name=c.name,
                                field=c.field,
                                transformations=(
                                    [column_lineage_dataset.Transformation(type="DIRECT", subtype=c.transformation)]
                                    if c.transformation else []
                                ),
                            )
                            for c in cols
                        ]
                    )
                    for out, cols in self.column_lineage.items()
                },
                producer=producer,
            )
        facets.update(self.facets or {})
        return facets


def _split_relation(relation_name: str) -> list[str]:
    """Split `"db"."schema"."table"` (or unquoted) on dots outside double quotes."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = False
    i = 0
    while i < len(relation_name):
        c = relation_name[i]
        if c == '"':
            if quoted and relation_name[i + 1:i + 2] == '"':  # "" inside quotes is a literal quote
                buf.append('"')
                i += 2
                continue
            quoted = not quoted
        elif c == "." and not quoted:
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
        i += 1
    parts.append("".join(buf).strip())
    return parts


def dbt_relation(
    relation_name: str,
    *,
    fields: Sequence[tuple[str, str | None] | str] | None = None,
    column_lineage: Mapping[str, Sequence[Any]] | None = None,
    warehouse_file: str | os.PathLike[str] | None = None,
) -> DatasetRef:
    """A dbt model or source: namespace `duckdb://<warehouse file name>`, name `db.schema.table`.

    The namespace uses the file *name*, not its path, so it does not change
    when CANON_HOME moves.
    """
    file_name = Path(warehouse_file).name if warehouse_file is not None else CanonPaths.from_env().warehouse_db.name
    parts = _split_relation(relation_name)
    if len(parts) == 2:  # schema.table: the database is the warehouse file itself
        parts = [Path(file_name).stem, *parts]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"dbt relation name {relation_name!r} is not database.schema.table")
    return DatasetRef(f"duckdb://{file_name}", ".".join(parts), fields, column_lineage)


def canon_table(
    name: str,
    *,
    fields: Sequence[tuple[str, str | None] | str] | None = None,
    column_lineage: Mapping[str, Sequence[Any]] | None = None,
) -> DatasetRef:
    """A table in Canon's own store: namespace `canon`, name `canon.<table>`."""
    table = name.removeprefix("canon.")
    if not table:
        raise ValueError("canon_table needs a table name")
    return DatasetRef("canon", f"canon.{table}", fields, column_lineage)


def index_revision(rev_id: str, *, fields: Sequence[tuple[str, str | None] | str] | None = None) -> DatasetRef:
    """One published LanceDB index revision: namespace `lancedb://canon`, name `chunks@<rev>`."""
    if not rev_id:
        raise ValueError("index_revision needs a revision id")
    return DatasetRef("lancedb://canon", f"chunks@{rev_id}", fields)


@dataclass(frozen=True)
class ParentRun:
    """The run that spawned this one (e.g. the Dagster run around an asset)."""

    namespace: str
    job_name: str
    run_id: str


# --------------------------------------------------------------------------- transports


class _EnvTokenProvider(TokenProvider):
    """Bearer token read from the environment at send time; never stored on the config."""

    def __init__(self, env_name: str) -> None:
        super().__init__({})
        self.env_name = env_name

    def get_bearer(self) -> str | None:
        token = os.environ.get(self.env_name, "").strip()
        return f"Bearer {token}" if token else None

    def __repr__(self) -> str:
        return f"_EnvTokenProvider(env_name={self.env_name!r})"


class _StdoutTransport(ConsoleTransport):
    """The client's console transport logs at INFO, which no default logging setup shows.

    Printing keeps "console" visible in a terminal and in Dagster's captured stdout.
    """

    def emit(self, event: Any) -> None:
        sys.stdout.write(Serde.to_json(event) + "\n")
        sys.stdout.flush()


def build_transport(config: TransportConfig) -> Transport:
    if config.kind == "file":
        path = config.file_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        # append=True: one JSON object per line in one file (the default writes a file per event).
        return FileTransport(FileConfig(log_file_path=str(path), append=True))
    if config.kind == "console":
        return _StdoutTransport(ConsoleConfig())
    if config.kind == "http":
        retry = {**DEFAULT_RETRY_CONFIG, "total": config.retries, "connect": config.retries,
                 "read": config.retries, "backoff_factor": 0.2}
        return HttpTransport(
            HttpConfig(
                url=(config.url or "").rstrip("/") + "/",
                endpoint=config.endpoint.lstrip("/"),
                timeout=config.timeout_s,
                auth=_EnvTokenProvider(config.api_key_env) if config.api_key_env else TokenProvider({}),
                retry=retry,
            )
        )
    return NoopTransport(NoopConfig())


# The client merges openlineage.yml / OPENLINEAGE__* settings into ours; these keys stay ours:
# no environment variables copied into run facets (a token could be one of them), no git
# remote (it may embed credentials), no renaming of our datasets by trimmers.
_PINNED_CLIENT_CONFIG: dict[str, Any] = {
    "facets": {"environment_variables": [], "source_code_location": {"disabled": True}},
    "dataset": {"reducing_enabled": False},
}


# --------------------------------------------------------------------------- emitter


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
        return text

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


def _trim_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit // 4]
    tail = text[-(limit - len(head)) :]
    return f"{head}\n... [{len(text) - len(head) - len(tail)} characters trimmed] ...\n{tail}"


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
        stats = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
            rowCount=row_count, size=size_bytes, fileCount=file_count, producer=self.emitter.producer
        )
        self.set_output_facets({"outputStatistics": stats}, dataset=dataset)

    def set_run_facets(self, facets: Mapping[str, RunFacet]) -> None:
        self.run_facets.update(facets)

    # -- event construction -------------------------------------------------

    def build_event(self, state: RunState, *, error: BaseException | None = None) -> RunEvent:
        producer = self.emitter.producer
        run_facets: dict[str, RunFacet] = {
            "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                version=CANON_VERSION, name="canon",
                openlineageAdapterVersion=OPENLINEAGE_CLIENT_VERSION, producer=producer,
            ),
        }
        if self.parent is not None:
            run_facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=self.parent.run_id),
                job=parent_run.Job(namespace=self.parent.namespace, name=self.parent.job_name),
                producer=producer,
            )
        run_facets.update(self.run_facets)
        if error is not None:
            run_facets["errorMessage"] = self._error_facet(error)
        job_facets: dict[str, JobFacet] = {
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="BATCH", integration=self.emitter.integration, jobType="JOB", producer=producer
            ),
        }
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

    def _error_facet(self, error: BaseException) -> error_message_run.ErrorMessageRunFacet:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        return error_message_run.ErrorMessageRunFacet(
            message=self.emitter.redact(_trim_middle(message, MAX_ERROR_MESSAGE_CHARS)),
            programmingLanguage="PYTHON",
            stackTrace=self.emitter.redact(_trim_middle(trace, MAX_STACK_TRACE_CHARS)),
            producer=self.emitter.producer,
        )

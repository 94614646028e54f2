"""The facets Canon attaches to every run event: engine, parent run, job type, error, output statistics.

FAIL events carry the error, not a novel: the message and trace are trimmed in
the middle and passed through the emitter's redaction before they are sent.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable

from openlineage.client import __version__ as OPENLINEAGE_CLIENT_VERSION
from openlineage.client.facet_v2 import (
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
)

from canon import __version__ as CANON_VERSION

MAX_ERROR_MESSAGE_CHARS = 2_000
MAX_STACK_TRACE_CHARS = 8_000


def processing_engine_facet(producer: str) -> processing_engine_run.ProcessingEngineRunFacet:
    return processing_engine_run.ProcessingEngineRunFacet(
        version=CANON_VERSION, name="canon",
        openlineageAdapterVersion=OPENLINEAGE_CLIENT_VERSION, producer=producer,
    )


def parent_facet(namespace: str, job_name: str, run_id: str, producer: str) -> parent_run.ParentRunFacet:
    return parent_run.ParentRunFacet(
        run=parent_run.Run(runId=run_id),
        job=parent_run.Job(namespace=namespace, name=job_name),
        producer=producer,
    )


def job_type_facet(integration: str, producer: str) -> job_type_job.JobTypeJobFacet:
    return job_type_job.JobTypeJobFacet(
        processingType="BATCH", integration=integration, jobType="JOB", producer=producer
    )


def output_statistics_facet(
    *, row_count: int | None, size_bytes: int | None, file_count: int | None, producer: str
) -> output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet:
    return output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
        rowCount=row_count, size=size_bytes, fileCount=file_count, producer=producer
    )


def _trim_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit // 4]
    tail = text[-(limit - len(head)) :]
    return f"{head}\n... [{len(text) - len(head) - len(tail)} characters trimmed] ...\n{tail}"


def error_facet(
    error: BaseException, *, producer: str, redact: Callable[[str], str]
) -> error_message_run.ErrorMessageRunFacet:
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return error_message_run.ErrorMessageRunFacet(
        message=redact(_trim_middle(message, MAX_ERROR_MESSAGE_CHARS)),
        programmingLanguage="PYTHON",
        stackTrace=redact(_trim_middle(trace, MAX_STACK_TRACE_CHARS)),
        producer=producer,
    )

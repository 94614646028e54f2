"""Builds the ask context for a workspace: the same production objects serve
the CLI, the evaluation and the Dagster eval asset."""

import functools
import os
from pathlib import Path
from typing import Callable

import duckdb

from canon.ask.answer_log import AnswerLogFile
from canon.ask.pipeline import AskContext, Retriever
from canon.core.errors import CanonInputError
from canon.core.fiscal_calendar import FiscalCalendar
from canon.core.settings import load_settings
from canon.index import revisions as index_store
from canon.index import served as index_served
from canon.index.config import recorded_embedder
from canon.index.embedding.factory import (
    BACKENDS,
    DEFAULT_BACKEND,
    check_backend,
    default_backend_for,
    default_embedder,
)
from canon.index.embedding.hashing import HashingEmbedder
from canon.models.documents import Document
from canon.registry.policy import Policy


def embedder_for(model_id: str, con: duckdb.DuckDBPyConnection | None = None):
    """The embedder that produced a revision: query vectors must come from the same model."""
    if model_id.startswith("canon-hashing:"):
        return HashingEmbedder(dimensions=int(model_id.split(":")[2]))
    if con is not None:  # a model configured by `canon migrate` (path, max_seq_length) is recorded there
        emb = recorded_embedder(con, model_id)
        if emb is not None:
            return emb
    backend = default_backend_for(model_id)
    if backend is not None:
        return default_embedder(backend)
    raise CanonInputError("index_revisions", f"the served revision was embedded with {model_id}, but this machine's "
                          f"default model is {default_embedder().identity.model_id} (a model file or an "
                          "onnxruntime/torch/onnx version changed): run the index build, which re-embeds, or "
                          "`canon migrate --embedding-model default`", field="embedding_model_id")


def make_embedder(kind: str | None = None, model_path: str | None = None, backend: str | None = None):
    """`kind` sentence-transformers (default) or hashing; `backend` onnx-int8
    or torch; environment: CANON_EMBEDDER, CANON_EMBEDDING_MODEL,
    CANON_EMBEDDING_BACKEND. Unless a backend is named, the bundled model runs
    as int8 ONNX and another model path on PyTorch (which runs any
    sentence-transformers model; `canon migrate --embedding-model` reads a
    path the same way)."""
    kind = kind or os.environ.get("CANON_EMBEDDER", "sentence-transformers")
    if kind == "hashing":
        return HashingEmbedder()
    if kind != "sentence-transformers":
        raise CanonInputError("embedder", f"unknown embedder provider {kind!r}; expected sentence-transformers "
                              "or hashing", field="provider")
    backend = backend or os.environ.get("CANON_EMBEDDING_BACKEND")
    model_path = model_path or os.environ.get("CANON_EMBEDDING_MODEL")
    if model_path:
        return BACKENDS[check_backend(backend or "torch")](model_path=model_path)
    return default_embedder(check_backend(backend or DEFAULT_BACKEND))


def build_retriever(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, docs: list[Document] | None,
                    embedder=None, *, doc_of: Callable[[str], Document | None] | None = None) -> Retriever | None:
    """`docs`: the registry's documents, whose served chunks are looked up once; or
    None and `doc_of` (doc_id -> its document), for a context that holds only some
    documents (canon/ask/scope.py): each cited document's chunks are then looked up
    when it is cited."""
    if not index_store.has_schema(con):
        return None
    rev = index_store.served_revision(con)
    if rev is None:
        return None
    emb = embedder or embedder_for(rev["embedding_model_id"], con)
    # The stale-index rule shared with the index_revision_fresh check (canon/index/served.py).
    if docs is not None:
        indexed = index_served.indexed_versions(con, rev["revision_id"])
        by_id = {d.doc_id: d for d in docs}
        held_of, doc_of = indexed.get, by_id.get
    else:
        def held_of(doc_id: str):
            return index_served.indexed_versions(con, rev["revision_id"], doc_ids=[doc_id]).get(doc_id)

    def chunks_of(doc_id: str, content_hash: str) -> list[str]:
        # Only when the served revision holds the registry's live text: otherwise
        # the evidence was read live from the registry (stale index).
        doc = doc_of(doc_id)
        held = held_of(doc_id)
        if doc is None or index_served.stale_reason(doc, held) is not None:
            return []
        return list(held.chunk_ids)

    return Retriever(
        # Every query of this retriever searches the revision it reports (`revision_id`, the one
        # `chunks_of` reads): pinned once here, so no DuckDB read per query.
        search=functools.partial(_search, lancedb_dir, con, revision=rev),
        embed_query=lambda text: emb.embed([text])[0],
        revision_id=rev["revision_id"],
        chunks_of=chunks_of,
    )


def _search(*args, **kwargs):
    # Imported at the first search: most questions name their object and never retrieve,
    # and `import lancedb` is a second of a new `canon ask` process.
    from canon.index import search as index_search

    return index_search.search(*args, **kwargs)


# `calendar` left at this: the fiscal year the configuration names (canon/core/settings.py).
CONFIGURED = "configured"


def configured_calendar(calendar: FiscalCalendar | None | str = CONFIGURED) -> FiscalCalendar | None:
    return load_settings().calendar if calendar == CONFIGURED else calendar


def ask_context(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, docs: list[Document], policy: Policy, *,
                embedder=None, metric_values=None, log_answers: bool = True,
                answer_store: AnswerLogFile | None = None,
                calendar: FiscalCalendar | None | str = CONFIGURED) -> AskContext:
    """`answer_store`: where answers are logged; None logs into `con`'s `answer_log` table.
    `calendar`: the fiscal year questions are read in (default: the configured one)."""
    return AskContext(docs=docs, policy=policy, con=con,
                      retriever=build_retriever(con, lancedb_dir, docs, embedder),
                      metric_values=metric_values, log_answers=log_answers, answer_store=answer_store,
                      calendar=configured_calendar(calendar))

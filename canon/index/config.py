"""The index configuration: which embedder and chunking shape an index, and
which configuration is active (docs/design.md, "Migrating an embedding model
under contract").

A cut-over or rollback records the *active configuration* (settings
`index.active_config`) that routine publishes and query embedding follow, and
every migration records how to rebuild each embedder it used
(`index.embedder_spec:<model_id>`), because a model path or max_seq_length is
not recoverable from a model_id.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from canon.core import ids
from canon.core.errors import CanonInputError
from canon.index.chunking import DEFAULT_CHUNKER
from canon.index.embedding.factory import BACKENDS, check_backend, default_backend_for, default_embedder
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.embedding.local_model import default_model_path
from canon.index.revisions import DEFAULT_TABLE, served_revision
from canon.registry import store as registry

ACTIVE_KEY = "index.active_config"
SPEC_PREFIX = "index.embedder_spec:"


@dataclass(frozen=True)
class EmbedderSpec:
    """How to construct an embedder again (its identity alone cannot: a model
    path or max_seq_length is not recoverable from a model_id)."""

    kind: str = "sentence-transformers"     # or "hashing" (the deterministic test embedder)
    model_path: str | None = None           # None: the bundled all-MiniLM-L6-v2
    max_seq_length: int | None = None       # None: the model's own
    dimensions: int | None = None           # hashing only
    backend: str = "onnx-int8"              # sentence-transformers only: or "torch"

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> "EmbedderSpec":
        """A spec stored in the registry; records written before backends
        existed were all PyTorch."""
        return cls(**{"backend": "torch", **d})

    def build(self):
        key = self
        if key not in _BUILT:
            if self.kind == "hashing":
                _BUILT[key] = HashingEmbedder(dimensions=self.dimensions or 384)
            elif self.kind == "sentence-transformers":
                check_backend(self.backend)
                if self.model_path is None and self.max_seq_length is None:
                    _BUILT[key] = default_embedder(self.backend)
                else:
                    _BUILT[key] = BACKENDS[self.backend](model_path=self.model_path,
                                                         max_seq_length=self.max_seq_length)
            else:
                raise CanonInputError("embedder", f"unknown embedder kind {self.kind!r}", field="kind")
        return _BUILT[key]

    @classmethod
    def of(cls, embedder) -> "EmbedderSpec":
        if isinstance(embedder, HashingEmbedder):
            return cls("hashing", dimensions=embedder.identity.dimensions)
        for backend, klass in BACKENDS.items():
            if isinstance(embedder, klass):
                path = embedder.model_path
                with_default = path == default_model_path()
                return cls("sentence-transformers", None if with_default else path, embedder.max_seq_length,
                           backend=backend)
        raise CanonInputError("embedder", f"cannot record how to rebuild a {type(embedder).__name__}")

    @classmethod
    def parse(cls, text: str) -> "EmbedderSpec":
        """`--embedding-model`: `default` (the bundled model, int8 ONNX),
        `torch` (the bundled model on PyTorch), `onnx-int8:PATH`, a
        sentence-transformers path or name (PyTorch), or `hashing[:DIMS]`
        (the test embedder)."""
        t = text.strip()
        if not t:
            raise CanonInputError("--embedding-model", "empty model name", field="embedding_model")
        if t == "hashing" or t.startswith("hashing:"):
            dims = t.partition(":")[2] or "384"
            if not dims.isdigit() or int(dims) < 8:
                raise CanonInputError("--embedding-model", f"hashing dimensions must be an integer >= 8, got {dims!r}",
                                      field="embedding_model")
            return cls("hashing", dimensions=int(dims))
        if t == "default":
            return cls()
        if t in BACKENDS:
            return cls(backend=t)
        if t.startswith("onnx-int8:"):
            path = t.partition(":")[2].strip()
            if not path:
                raise CanonInputError("--embedding-model", "onnx-int8: needs a model folder, e.g. onnx-int8:/models/x",
                                      field="embedding_model")
            return cls("sentence-transformers", path, backend="onnx-int8")
        return cls("sentence-transformers", t, backend="torch")


_BUILT: dict[EmbedderSpec, Any] = {}


@dataclass(frozen=True)
class IndexConfig:
    """Everything that shapes an index: the embedder and the chunking."""

    embedder: EmbedderSpec = field(default_factory=EmbedderSpec)
    chunker: str = DEFAULT_CHUNKER
    max_chars: int = 1000
    overlap: int = 150

    def publish_options(self) -> dict[str, Any]:
        return {"chunker": self.chunker, "max_chars": self.max_chars, "overlap": self.overlap}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "IndexConfig":
        return cls(EmbedderSpec.from_record(d["embedder"]), d["chunker"], int(d["max_chars"]), int(d["overlap"]))

    def label(self, model_id: str) -> str:
        return f"{model_id} · {self.chunker} {self.max_chars}/{self.overlap}"


def table_for(model_id: str, cfg: IndexConfig) -> str:
    """The candidate table: named by the identity it holds, so re-running the
    same migration reuses (and incrementally updates) the same table."""
    return "chunks_" + ids.h(model_id, cfg.chunker, str(cfg.max_chars), str(cfg.overlap), n=12)


def _get(con, key: str) -> str | None:
    try:
        return registry.get_setting(con, key)
    except duckdb.CatalogException:
        return None


def record_spec(con: duckdb.DuckDBPyConnection, model_id: str, spec: EmbedderSpec) -> None:
    registry.ensure_schema(con)
    registry.set_setting(con, SPEC_PREFIX + model_id, json.dumps(asdict(spec)))


def recorded_embedder(con: duckdb.DuckDBPyConnection, model_id: str):
    """The embedder recorded for `model_id` by a migration, or None."""
    raw = _get(con, SPEC_PREFIX + model_id)
    if raw is None:
        return None
    emb = EmbedderSpec.from_record(json.loads(raw)).build()
    return emb if emb.identity.model_id == model_id else None


def spec_for_model_id(con, model_id: str, fallback=None) -> EmbedderSpec:
    raw = _get(con, SPEC_PREFIX + model_id)
    if raw is not None:
        return EmbedderSpec.from_record(json.loads(raw))
    if model_id.startswith("canon-hashing:"):
        return EmbedderSpec("hashing", dimensions=int(model_id.split(":")[2]))
    if fallback is not None and fallback.identity.model_id == model_id:
        return EmbedderSpec.of(fallback)
    backend = default_backend_for(model_id)
    if backend is not None:
        return EmbedderSpec(backend=backend)
    raise CanonInputError("index_revisions", f"the served revision was embedded with {model_id}, which this "
                          "machine cannot rebuild; pass --embedding-model to migrate", field="embedding_model_id")


def active_config(con: duckdb.DuckDBPyConnection) -> tuple[IndexConfig, str] | None:
    """(configuration, table) set by the last cut-over or rollback, or None
    when no migration ever ran (the defaults and table `chunks` apply)."""
    raw = _get(con, ACTIVE_KEY)
    if raw is None:
        return None
    d = json.loads(raw)
    return IndexConfig.from_dict(d["config"]), d["table"]


def serving_config(con: duckdb.DuckDBPyConnection, fallback_embedder=None) -> tuple[IndexConfig, str]:
    """The configuration of what is served now."""
    act = active_config(con)
    if act is not None:
        return act
    rev = served_revision(con)
    if rev is None:
        spec = EmbedderSpec.of(fallback_embedder) if fallback_embedder is not None else EmbedderSpec()
        return IndexConfig(spec), DEFAULT_TABLE
    return IndexConfig(spec_for_model_id(con, rev["embedding_model_id"], fallback_embedder)), rev["lance_table"]


def publish_setup(con: duckdb.DuckDBPyConnection, embedder) -> tuple[Any, dict[str, Any]]:
    """(embedder, publish kwargs) for a routine publish: after a cut-over the
    active configuration wins, so a nightly publish never reverts a migration."""
    act = active_config(con)
    if act is None:
        return embedder, {}
    cfg, table = act
    return cfg.embedder.build(), {"table": table, **cfg.publish_options()}


def target_config(current: IndexConfig, *, embedding_model: str | None = None, max_seq_length: int | None = None,
                  chunker_max_chars: int | None = None, chunker_overlap: int | None = None) -> IndexConfig:
    spec = current.embedder
    if embedding_model is not None:
        spec = EmbedderSpec.parse(embedding_model)
    if max_seq_length is not None:
        if spec.kind != "sentence-transformers":  # both backends take it
            raise CanonInputError("--max-seq-length", "applies to sentence-transformers models only; "
                                  f"the target embedder is {spec.kind}", field="max_seq_length")
        if max_seq_length < 8:
            raise CanonInputError("--max-seq-length", f"must be >= 8, got {max_seq_length}", field="max_seq_length")
        spec = dataclasses.replace(spec, max_seq_length=max_seq_length)
    max_chars = chunker_max_chars if chunker_max_chars is not None else current.max_chars
    if max_chars < 50:
        raise CanonInputError("--chunker-max-chars", f"must be >= 50, got {max_chars}", field="chunker_max_chars")
    overlap = chunker_overlap if chunker_overlap is not None else current.overlap
    if chunker_overlap is None and overlap >= max_chars // 2:
        overlap = max_chars * 15 // 100  # keep the default ratio when only the size changed
    if not 0 <= overlap < max_chars // 2:
        raise CanonInputError("--chunker-overlap", f"must be in [0, {max_chars // 2}), got {overlap}",
                              field="chunker_overlap")
    return IndexConfig(spec, current.chunker, max_chars, overlap)


def target_label(cfg: IndexConfig, model_id: str) -> dict[str, Any]:
    return {"model_id": model_id, **cfg.to_dict()}

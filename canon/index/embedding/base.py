"""Embedders with an explicit, stable identity.

An embedding is only reusable by the exact model that made it, so every
embedder carries an `EmbeddingIdentity` whose `model_id` goes into
`ids.embedding_key(chunk_id, model_id)`: changing provider, model, dimensions,
normalisation or our implementation recomputes the vectors (docs/design.md,
"Migrating an embedding model under contract"), and query vectors can be
checked against the identity the served index revision recorded.

Implementations live one per module beside this one: hashing.py (tests),
torch.py (sentence-transformers on PyTorch), onnx.py (the int8 default);
factory.py picks between them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from canon.core.errors import CanonRunError


class EmbeddingError(CanonRunError):
    """An embedder returned something that must not be published."""


@dataclass(frozen=True)
class EmbeddingIdentity:
    provider: str
    model: str
    dimensions: int
    normalize: bool
    implementation_version: str

    @property
    def model_id(self) -> str:
        """Stable across machines and runs (no absolute paths), changes when
        any part that shapes the vectors changes."""
        norm = "norm" if self.normalize else "raw"
        return f"{self.provider}:{self.model}:{self.dimensions}:{norm}:{self.implementation_version}"

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "model_id": self.model_id}, sort_keys=True)


@runtime_checkable
class Embedder(Protocol):
    @property
    def identity(self) -> EmbeddingIdentity: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


def validate_vectors(vectors: object, n: int, dims: int) -> np.ndarray:
    """Check cardinality, dimensions and finiteness before anything is
    published; returns a C-contiguous float32 (n, dims) array."""
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embedder returned values that are not numeric vectors: {exc}") from exc
    if arr.ndim != 2:
        raise EmbeddingError(f"embedder returned an array of shape {arr.shape}; expected ({n}, {dims})")
    if arr.shape[0] != n:
        raise EmbeddingError(f"embedder returned {arr.shape[0]} vectors for {n} texts")
    if arr.shape[1] != dims:
        raise EmbeddingError(f"embedder returned {arr.shape[1]}-dimensional vectors; its identity declares {dims}")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise EmbeddingError(f"embedder returned non-finite values (NaN/inf) in {int(bad.sum())} vector(s), e.g. rows {rows}")
    return np.ascontiguousarray(arr)

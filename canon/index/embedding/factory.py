"""The backends a sentence-transformers model runs on, and the shared
per-process default embedders (so a model loads once per process).

The default is int8 ONNX (`canon.index.embedding.onnx`): less CPU than PyTorch
with the gold sets unchanged. `torch` runs the same model through
sentence-transformers, and serves any model the ONNX export does not support.
"""

from __future__ import annotations

from canon.core.errors import CanonInputError
from canon.index.embedding.onnx import OnnxInt8Embedder
from canon.index.embedding.torch import SentenceTransformerEmbedder

DEFAULT_BACKEND = "onnx-int8"
BACKENDS = {"onnx-int8": OnnxInt8Embedder, "torch": SentenceTransformerEmbedder}

_DEFAULTS: dict[str, object] = {}


def check_backend(backend: str, where: str = "embedder") -> str:
    if backend not in BACKENDS:
        raise CanonInputError(where, f"unknown embedding backend {backend!r}; expected one of {', '.join(BACKENDS)}",
                              field="backend")
    return backend


def default_embedder(backend: str = DEFAULT_BACKEND):
    """The production embedder: the bundled all-MiniLM-L6-v2 on `backend`."""
    if backend not in _DEFAULTS:
        _DEFAULTS[backend] = BACKENDS[check_backend(backend)]()
    return _DEFAULTS[backend]


def default_backend_for(model_id: str) -> str | None:
    """The backend on which the bundled model has identity `model_id`, if any
    (an index built before int8 became the default was embedded by PyTorch,
    and stays servable)."""
    return next((b for b in BACKENDS if default_embedder(b).identity.model_id == model_id), None)

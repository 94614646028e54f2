"""A deterministic embedder for fast tests and pipeline wiring: lexical overlap, not meaning."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from canon.index.embedding.base import EmbeddingIdentity

_TOKEN = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Deterministic feature hashing of word unigrams and bigrams.

    For fast unit tests and pipeline wiring only: it captures lexical overlap,
    not meaning. Never a default.
    """

    IMPLEMENTATION = "canon-hashing-1"

    def __init__(self, dimensions: int = 384):
        if dimensions < 8:
            raise ValueError("dimensions must be >= 8")
        self._identity = EmbeddingIdentity(
            provider="canon-hashing", model="hashing-uni-bi", dimensions=dimensions,
            normalize=True, implementation_version=self.IMPLEMENTATION,
        )

    @property
    def identity(self) -> EmbeddingIdentity:
        return self._identity

    def _vector(self, text: str) -> np.ndarray:
        d = self._identity.dimensions
        v = np.zeros(d, dtype=np.float32)
        toks = _TOKEN.findall(text.lower())
        feats = toks + [f"{a} {b}" for a, b in zip(toks, toks[1:])]
        for f in feats:
            digest = hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest()
            idx = int.from_bytes(digest[:4], "little") % d
            sign = 1.0 if digest[4] & 1 else -1.0
            v[idx] += sign
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._identity.dimensions), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)

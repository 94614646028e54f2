"""Embedder identities and vector validation (the real model is exercised in
test_index.py::test_real_sentence_transformer_paraphrase_ranks_source_first)."""

from __future__ import annotations

import numpy as np
import pytest

from canon.index.embedding.base import EmbeddingError, EmbeddingIdentity, validate_vectors
from canon.index.embedding.factory import default_embedder
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.embedding.local_model import default_model_path
from canon.index.embedding.onnx import OnnxInt8Embedder
from canon.index.embedding.torch import SentenceTransformerEmbedder


def test_hashing_embedder_is_deterministic_and_normalised():
    e = HashingEmbedder(dimensions=64)
    a = e.embed(["VAT is excluded from net revenue", "shipping is included"])
    b = HashingEmbedder(dimensions=64).embed(["VAT is excluded from net revenue", "shipping is included"])
    assert a.dtype == np.float32 and a.shape == (2, 64)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert e.embed([]).shape == (0, 64)
    assert e.identity.model_id == HashingEmbedder(dimensions=64).identity.model_id
    assert e.identity.model_id != HashingEmbedder(dimensions=32).identity.model_id


def test_model_id_covers_every_identity_field():
    base = EmbeddingIdentity("p", "m", 8, True, "1")
    variants = [EmbeddingIdentity("q", "m", 8, True, "1"), EmbeddingIdentity("p", "n", 8, True, "1"),
                EmbeddingIdentity("p", "m", 9, True, "1"), EmbeddingIdentity("p", "m", 8, False, "1"),
                EmbeddingIdentity("p", "m", 8, True, "2")]
    assert len({base.model_id, *(v.model_id for v in variants)}) == 6


@pytest.mark.parametrize("vectors,msg", [
    (np.zeros((2, 4)), "2 vectors for 3 texts"),
    (np.zeros((3, 5)), "5-dimensional"),
    (np.array([[0, 0, 0, 1], [0, np.nan, 0, 0], [1, 0, 0, 0]]), "non-finite"),
    (np.array([[0, 0, 0, 1], [0, np.inf, 0, 0], [1, 0, 0, 0]]), "non-finite"),
    (np.zeros(12), "shape"),
])
def test_validate_vectors_rejects_bad_output(vectors, msg):
    with pytest.raises(EmbeddingError, match=msg):
        validate_vectors(vectors, 3, 4)


def test_validate_vectors_returns_float32():
    out = validate_vectors([[1, 0], [0, 1]], 2, 2)
    assert out.dtype == np.float32 and out.flags["C_CONTIGUOUS"]


def test_sentence_transformer_identity_without_loading_the_model():
    e = SentenceTransformerEmbedder()
    ident = e.identity
    assert e._model is None, "identity must not load the model"
    assert ident.dimensions == 384 and ident.normalize
    assert ident.provider == "sentence-transformers"
    assert ident.model.startswith("all-MiniLM-L6-v2@")
    assert "/" not in ident.model_id.split(":")[1], "no machine-specific path in the model id"
    assert SentenceTransformerEmbedder(max_seq_length=128).identity.model_id != ident.model_id
    assert default_embedder() is default_embedder()
    assert isinstance(default_embedder(), OnnxInt8Embedder), "int8 ONNX is the default backend"
    assert isinstance(default_embedder("torch"), SentenceTransformerEmbedder)
    assert default_embedder("torch").identity == ident


def test_make_embedder_picks_the_backend(monkeypatch):
    """The bundled model defaults to int8 ONNX; a model path to PyTorch (any model runs there)
    unless a backend is named; bad names are refused, not silently replaced."""
    from canon.ask.context import make_embedder
    from canon.core.errors import CanonInputError
    from resources.embedder import EmbedderResource

    for var in ("CANON_EMBEDDER", "CANON_EMBEDDING_MODEL", "CANON_EMBEDDING_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    assert make_embedder() is default_embedder()
    assert make_embedder(backend="torch") is default_embedder("torch")
    assert isinstance(make_embedder("hashing"), HashingEmbedder)
    assert isinstance(EmbedderResource(backend="torch").get_embedder(), SentenceTransformerEmbedder)
    assert isinstance(EmbedderResource().get_embedder(), OnnxInt8Embedder)
    path = default_model_path()
    monkeypatch.setenv("CANON_EMBEDDING_MODEL", path)
    assert type(make_embedder()) is SentenceTransformerEmbedder
    monkeypatch.setenv("CANON_EMBEDDING_BACKEND", "onnx-int8")
    emb = make_embedder()
    assert type(emb) is OnnxInt8Embedder and emb.model_path == path
    monkeypatch.setenv("CANON_EMBEDDING_BACKEND", "cuda")
    with pytest.raises(CanonInputError, match="unknown embedding backend 'cuda'"):
        make_embedder()
    with pytest.raises(CanonInputError, match="unknown embedder provider 'openai'"):
        make_embedder("openai")


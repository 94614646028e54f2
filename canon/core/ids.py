"""Content-derived identities (docs/contracts.md, "Identity"): the same input and the same code
always give the same id, and any change of content or configuration gives a
new one, so re-running on unchanged input is a no-op."""

from __future__ import annotations

from hashlib import sha256


def h(*parts: str, n: int = 20) -> str:
    return sha256("|".join(parts).encode("utf-8")).hexdigest()[:n]


def content_hash(text: str) -> str:
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()


def doc_version(doc_id: str, raw: bytes) -> str:
    return h(doc_id, sha256(raw).hexdigest())


def chunk_id(doc_ver: str, chunker: str, start: int, end: int) -> str:
    return h(doc_ver, chunker, str(start), str(end))


def embedding_key(chunk: str, model_id: str) -> str:
    return h(chunk, model_id)

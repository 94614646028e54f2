"""The pipeline under test, as `make run` materializes it, and the embedder wrapper that times the
model inside it. Runs in the cases' child processes only (bench/child.py): it imports Canon.

`pipeline` is one production build through the functions the assets call; `case_peer_step` is one
such build as a process of its own, the unit bench/peers.py times against the peers' steps (whose
wall clock includes imports: this module imports what a build needs and nothing of the ask path)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.settings import CONTRACT, TODAY
from bench.timing import cpu_s, now
from canon.ask.understanding import catalog_store
from canon.index.build import build_index
from canon.index.embedding.factory import DEFAULT_BACKEND, default_embedder
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.embedding.torch import SentenceTransformerEmbedder
from canon.index.revisions import served_revision
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy, project


class TimedEmbedder:
    """Forwards to an embedder and measures the time spent inside it (and the texts it saw)."""

    def __init__(self, inner, record: bool = False):
        self.inner = inner
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.calls = 0
        self.texts: list[str] | None = [] if record else None

    @property
    def identity(self):
        return self.inner.identity

    def embed(self, texts: list[str]):
        t, c = now(), cpu_s()
        out = self.inner.embed(texts)
        self.seconds += now() - t
        self.cpu_seconds += cpu_s() - c
        self.calls += 1
        if self.texts is not None:
            self.texts.extend(texts)
        return out


def make_embedder(kind: str):
    """"st": the production default (all-MiniLM-L6-v2, int8 ONNX); "torch": the same model on
    PyTorch (the baseline the backend is measured against); else the HashingEmbedder."""
    if kind in ("st", "torch"):
        return default_embedder(DEFAULT_BACKEND if kind == "st" else "torch")
    return HashingEmbedder()


def model_alone(emb):
    """The fastest way the embedder's model can encode a list of texts: PyTorch's own length-sorted
    batched encode (same batch size, same threads); the ONNX backend's `embed` (one text per run,
    no padding: its own fastest path); the HashingEmbedder's `embed`."""
    if isinstance(emb, SentenceTransformerEmbedder):
        model = emb._load()
        return lambda texts: model.encode(texts, batch_size=emb.batch_size, show_progress_bar=False,
                                          convert_to_numpy=True, normalize_embeddings=True)
    if hasattr(emb, "_load"):
        emb._load()
    return emb.embed


def token_lengths(emb, texts: list[str]) -> tuple[list[int], int] | None:
    if isinstance(emb, SentenceTransformerEmbedder):
        model = emb._load()
        return [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True)["input_ids"]], model.max_seq_length
    if hasattr(emb, "token_ids"):   # untruncated lengths: its own tokenizer cuts at seq_length
        # tokenizers (a native library) is loaded only with the ONNX model, as in production
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(str(Path(emb.model_path) / "tokenizer.json"))
        tok.no_truncation()
        return [len(e.ids) for e in tok.encode_batch(texts)], emb.seq_length
    return None


def pipeline(corpus: Path, ws: Path, embedder, *, run_id: str, keep_docs: bool = False) -> dict[str, Any]:
    """One production build, stage by stage, through the functions the assets call:
    evidence_registry (canon.registry.build.build_registry: only changed files are read and
    gated, canon.registry.corpus_cache), definitions (registry.refresh_definitions), knowledge_index
    (canon.index.build.build_index: a no-op when no input changed, else the registry's live
    documents projected through the live policy -> canon.index.publish.publish)."""
    st: dict[str, float] = {}
    t0 = now()
    con = registry.connect(ws / "canon.duckdb")
    try:
        contract = load_contract(CONTRACT)
        build = build_registry(con, corpus=corpus, corpus_contract=contract, run_id=run_id, today=TODAY)
        t3 = now()
        bt = build.timings
        st["read_s"] = bt.get("scan_s", 0.0) + bt.get("read_s", 0.0)    # walk + stat + read/parse changed files
        st["gate_s"] = bt.get("check_s", 0.0) + bt.get("decide_s", 0.0)
        st["registry_s"] = (t3 - t0) - st["read_s"] - st["gate_s"]      # sync + quarantine + file cache
        diff = build.diffs[contract.source.system].as_metadata()
        registry.refresh_definitions(con)
        t_def = now()
        st["definitions_s"] = t_def - t3
        catalog_store.refresh_catalog(con)   # as the registry asset does (canon/ask/scope.py reads it)
        t4 = now()
        st["ask_catalog_s"] = t4 - t_def
        policy = load_policy(corpus / "policy.yml")
        model_before = getattr(embedder, "seconds", 0.0)
        model_cpu_before = getattr(embedder, "cpu_seconds", 0.0)
        res = build_index(con, ws / "lancedb", embedder, policy, run_id=run_id)
        t6 = now()
        st["publish_s"] = t6 - t4   # includes loading + projecting the registry when it is not a no-op
        st["model_s"] = getattr(embedder, "seconds", 0.0) - model_before
        st["model_cpu_s"] = getattr(embedder, "cpu_seconds", 0.0) - model_cpu_before
        docs = project(registry.load_documents(con), policy) if keep_docs else None
        served = served_revision(con)
    finally:
        con.close()
    st["total_s"] = t6 - t0
    out = {**st, "docs": res.documents, "quarantined": len(build.quarantined), "chunks": res.chunks,
           "embedded": res.embedded, "reused": res.reused, "deleted": res.deleted,
           "rewritten_metadata_only": res.rewritten_metadata_only, "noop": res.noop,
           "revision_id": res.revision_id, "served_revision": served["revision_id"] if served else None,
           "registry_diff": diff, "files": build.corpus_files}
    if keep_docs:
        out["_documents"] = docs
    return out


def disk_mb(ws: Path) -> dict[str, float]:
    def du(p: Path) -> float:
        if p.is_file():
            return p.stat().st_size / 1e6
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6 if p.exists() else 0.0
    return {"lancedb_mb": round(du(ws / "lancedb"), 1), "duckdb_mb": round(du(ws / "canon.duckdb"), 1)}


def public(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if not k.startswith("_")}


def case_peer_step(p: dict[str, Any]) -> dict[str, Any]:
    """Child of bench/peers.py: one Canon build step (a new process, as the peers' steps are)."""
    emb = TimedEmbedder(make_embedder(p["embedder"]))
    t0 = time.perf_counter()
    r = pipeline(Path(p["corpus"]), Path(p["ws"]), emb, run_id=p["run_id"])
    return {**public(r), "in_process_s": time.perf_counter() - t0}

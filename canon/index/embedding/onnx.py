"""The default embedder: a sentence-transformers BERT model on onnxruntime, int8.

Why: on a small CPU the PyTorch model is the whole cost of a build. The same
model exported to ONNX, with BERT operator fusion and per-channel dynamic int8
weights, encodes faster with less CPU (measure it with bench `--only limit`)
while the gold sets keep their actions and recall@3.

Why not sentence-transformers' own ONNX backend: it needs `optimum-onnx`, and
every release of that requires transformers < 4.58 (Canon pins 5.x). So the
export is done here, from the local model files, with parts already pinned:

1. `torch.onnx.export` (TorchScript exporter, opset 17) of the Transformer
   module's `last_hidden_state`, dynamic batch and sequence axes;
2. `onnxruntime.transformers.optimizer` fuses attention, LayerNorm and GELU;
3. `onnxruntime.quantization.quantize_dynamic`: int8 weights per output
   channel, `reduce_range` (7-bit) so CPUs without VNNI cannot saturate.

Pooling (mean over the attention mask) and L2 normalisation run in numpy, as
the model's `modules.json` declares; tokenisation uses the model's own
`tokenizer.json` with its `max_seq_length`, the same ids sentence-transformers
feeds the PyTorch model (tests compare them).

The export runs once per machine and model, under a file lock,
into `CANON_MODEL_CACHE` (default `~/.cache/canon/models`), named by the
embedder identity, written to a temporary name and renamed; it is reused only
for the model files it was made from (stamps, else a content digest). Before it is kept
its vectors are compared with the PyTorch model's on reference sentences; an
export that drifts is refused with the figures, never served.

Each text is encoded on its own: dynamic quantisation scales activations per
tensor, so in a padded batch one text's vector would depend on its batch-mates.
Alone, a text always gets the same vector, whether it is a chunk at build time
or the question at ask time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

from canon.core import file_lock, ids
from canon.core.errors import CanonInputError
from canon.index.embedding.base import EmbeddingError, EmbeddingIdentity
from canon.index.embedding.local_model import (
    LocalModel,
    default_model_path,
    local_model_name,
    model_files,
    read_local_model,
)
from canon.index.embedding.torch import SentenceTransformerEmbedder

RECIPE = "canon-ort-int8-1"
OPSET = 17
# The export is refused below this cosine to the PyTorch vectors on the
# reference sentences (measured on all-MiniLM-L6-v2: min 0.98 over 1,675 chunks).
MIN_COSINE = 0.95
REFERENCE_SENTENCES = (
    "Net revenue is gross revenue minus refunds, discounts and chargebacks.",
    "Which definition of active customer applies for 2026-08-31?",
    "The orders model is built from the raw Stripe payments and Shopify orders sources.",
    "Runbook: when the freshness check fails, page the data-platform on-call and pause the nightly job.",
    "fct_orders.amount_usd",
    "Restricted memo: the pricing change is not public until the board approves it.",
    # Longer than any max_seq_length: truncation must cut where sentence-transformers cuts.
    " ".join(f"Order {i} settled on 2026-08-{1 + i % 28:02d} with refunds netted against credit notes."
             for i in range(60)),
)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def default_cache_dir() -> Path:
    explicit = os.environ.get("CANON_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "canon" / "models"


def _check_supported(path: Path) -> LocalModel:
    """The model folder's description, if it is a BERT model with mean pooling
    (what the export and the numpy pooling reproduce); otherwise a clear refusal."""
    local = read_local_model(path)
    if local is None or not local.modules:
        raise CanonInputError(str(path), "not a local sentence-transformers model folder (no modules.json)")
    types = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in local.modules]
    if types[:2] != ["Transformer", "Pooling"] or any(t not in ("Normalize",) for t in types[2:]):
        raise CanonInputError(str(path / "modules.json"), f"the onnx-int8 backend supports Transformer, Pooling "
                              f"[, Normalize] only; this model has {types}: use the torch backend")
    if not local.mean_pooling:
        raise CanonInputError(str(path / local.pooling_config), "the onnx-int8 backend reproduces mean pooling "
                              "only; use the torch backend for this model")
    cfg = local.transformer_config
    if cfg.get("model_type") != "bert":
        raise CanonInputError(str(path / "config.json"), f"model_type {cfg.get('model_type')!r}: the onnx-int8 "
                              "export fuses BERT graphs only; use the torch backend for this model")
    if not (path / "tokenizer.json").is_file():
        raise CanonInputError(str(path), "no tokenizer.json (a fast tokenizer file is needed)")
    if local.dimensions is None:
        raise CanonInputError(str(path / local.pooling_config), "no embedding dimension in the Pooling config")
    if local.lower_case:
        raise CanonInputError(str(path / "sentence_bert_config.json"), "do_lower_case: the onnx-int8 backend "
                              "does not reproduce sentence-transformers' lowercasing; use the torch backend")
    if local.default_prompt:
        raise CanonInputError(str(path / "config_sentence_transformers.json"), f"default_prompt_name "
                              f"{local.default_prompt!r}: the onnx-int8 backend adds no prompts; use the torch backend")
    return local


class OnnxInt8Embedder:
    """A local BERT sentence-transformers model (default: the bundled
    all-MiniLM-L6-v2) exported to int8 ONNX and run on onnxruntime's CPU
    provider."""

    def __init__(self, model_path: str | os.PathLike | None = None, max_seq_length: int | None = None,
                 cache_dir: str | os.PathLike | None = None, threads: int | None = None,
                 onnx_file: str | os.PathLike | None = None):
        """`onnx_file` runs an already exported file as is (the export's own
        verification); otherwise the cached export of this identity is used."""
        self.model_path = str(model_path) if model_path is not None else default_model_path()
        self.max_seq_length = max_seq_length
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._explicit_file = Path(onnx_file) if onnx_file is not None else None
        self.threads = threads or len(os.sched_getaffinity(0))
        self._lock = threading.Lock()
        self._session = None
        self._tokenizer = None
        self._identity: EmbeddingIdentity | None = None

    # ------------------------------------------------------------ identity
    @property
    def identity(self) -> EmbeddingIdentity:
        if self._identity is None:
            path = Path(self.model_path)
            local = _check_supported(path)
            # As sentence-transformers: the configured length, else the model's, else its positions.
            seq = (self.max_seq_length or local.max_seq_length
                   or int(local.transformer_config.get("max_position_embeddings", 512)))
            self._seq_length = int(seq)
            # The exporter, the optimizer/quantizer and the runtime all shape the
            # vectors: a change of any pinned version re-embeds.
            versions = f"ort={_version('onnxruntime')};torch={_version('torch')};onnx={_version('onnx')}"
            self._identity = EmbeddingIdentity(
                provider="onnxruntime", model=local_model_name(path, local.fingerprint), dimensions=local.dimensions,
                normalize=True, implementation_version=f"{RECIPE};max_seq={seq};{versions}",
            )
        return self._identity

    @property
    def seq_length(self) -> int:
        """Tokens per text after truncation (part of the identity)."""
        self.identity
        return self._seq_length

    @property
    def onnx_file(self) -> Path:
        return self.cache_dir / f"{ids.h(self.identity.model_id, n=16)}.int8.onnx"

    # ------------------------------------------------------------ loading
    def _load(self):
        with self._lock:
            if self._session is None:
                # Deferred: onnxruntime is heavy to import and only needed once a model is served.
                import onnxruntime as ort
                from tokenizers import Tokenizer

                target = self._explicit_file or ensure_exported(self)
                so = ort.SessionOptions()
                so.intra_op_num_threads = self.threads
                so.inter_op_num_threads = 1
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # Busy-waiting threads would take CPU from dbt and Dagster on a small machine.
                so.add_session_config_entry("session.intra_op.allow_spinning", "0")
                try:
                    session = ort.InferenceSession(str(target), so, providers=["CPUExecutionProvider"])
                except Exception as exc:  # onnxruntime raises its own untyped errors for unreadable files
                    raise EmbeddingError(f"{target}: onnxruntime cannot load this model file ({exc}); delete it "
                                         "and the next run exports it again") from exc
                tok = Tokenizer.from_file(str(Path(self.model_path) / "tokenizer.json"))
                tok.enable_truncation(max_length=self.seq_length)
                tok.no_padding()
                self._inputs = [i.name for i in session.get_inputs()]
                self._tokenizer, self._session = tok, session
        return self._session

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        self._load()
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def embed(self, texts: list[str]) -> np.ndarray:
        dims = self.identity.dimensions
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        session = self._load()
        out = np.empty((len(texts), dims), dtype=np.float32)
        for i, enc in enumerate(self._tokenizer.encode_batch(list(texts))):
            ids = np.asarray([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64)}
            hidden = session.run(None, {k: feed[k] for k in self._inputs})[0][0]
            out[i] = hidden.mean(axis=0)  # one unpadded text: the masked mean is the plain mean
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise EmbeddingError("onnx-int8 embedder produced a zero vector")
        return out / norms


# ---------------------------------------------------------------- export

LOCK_TIMEOUT_S = 900.0


def _source_stamp(model_path: Path) -> dict[str, list[int]]:
    return {rel: [f.stat().st_size, f.stat().st_mtime_ns] for rel, f in model_files(model_path)}


def _source_digest(model_path: Path) -> str:
    """Every byte of the model folder: what the export was made from."""
    h = hashlib.sha256()
    for rel in _source_stamp(model_path):
        h.update(rel.encode())
        with open(model_path / rel, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _cached_export_matches(target: Path, model_path: Path) -> bool:
    """The cached file was exported from these very model files. The name
    (from the identity) tells weights apart by size only, so a fine-tuned copy
    of the same size in a folder of the same name must not reuse it: file
    stamps first (cheap), the content digest when they moved."""
    report = _read_report(target)
    if not target.is_file() or report is None:
        return False
    if report.get("source_stamp") == _source_stamp(model_path):
        return True
    return report.get("source_digest") == _source_digest(model_path)


def _read_report(target: Path) -> dict | None:
    try:
        return json.loads(target.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return None


def ensure_exported(emb: OnnxInt8Embedder) -> Path:
    """The int8 model file for `emb`, exporting it once under a file lock."""
    target, model_path = emb.onnx_file, Path(emb.model_path)
    if _cached_export_matches(target, model_path):
        return target
    lock = target.with_suffix(".lock")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock.touch()
    except OSError as exc:
        raise CanonInputError(str(target.parent), f"cannot write the ONNX model cache ({exc.strerror}); set "
                              "CANON_MODEL_CACHE to a writable folder") from exc

    def busy(holder: str) -> EmbeddingError:
        return EmbeddingError(f"{lock}: another process (pid {holder}) has been exporting the ONNX model for over "
                              f"{LOCK_TIMEOUT_S:.0f} s; if none is running, delete this lock file")

    # A concurrent process exports; this one waits, then reuses its file.
    with file_lock.exclusive(lock, timeout=LOCK_TIMEOUT_S, busy=busy):
        if not _cached_export_matches(target, model_path):
            for stale in target.parent.glob(".export-*"):  # left by a killed export: none runs while we hold the lock
                shutil.rmtree(stale, ignore_errors=True)
            export_int8(model_path, target, emb.seq_length)
    return target


def export_int8(model_path: Path, target: Path, max_seq_length: int) -> dict:
    """Export, fuse, quantise and verify; the file appears at `target` only if
    it passed. Returns the verification figures (also written beside it)."""
    cfg = _check_supported(model_path).transformer_config
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as tmp, _quiet():
        fp32 = Path(tmp) / "model.onnx"
        fused = Path(tmp) / "model_fused.onnx"
        quant = Path(tmp) / "model_int8.onnx"
        reference = _export_fp32(model_path, fp32, max_seq_length)
        _fuse(fp32, fused, cfg)
        _quantize(fused, quant)
        got = OnnxInt8Embedder(model_path, max_seq_length, onnx_file=quant).embed(list(REFERENCE_SENTENCES))
        cosines = (got * reference).sum(axis=1)
        report = {"model": str(model_path), "recipe": RECIPE, "exported_by_pid": os.getpid(), "opset": OPSET, "max_seq_length": max_seq_length,
                  "cosine_to_torch_min": round(float(cosines.min()), 5),
                  "cosine_to_torch_mean": round(float(cosines.mean()), 5)}
        if cosines.min() < MIN_COSINE:
            raise EmbeddingError(f"the int8 ONNX export of {model_path} drifted from the PyTorch model: cosine "
                                 f"min {cosines.min():.4f} < {MIN_COSINE} on the reference sentences; not used")
        report.update(source_stamp=_source_stamp(model_path), source_digest=_source_digest(model_path))
        sidecar = Path(tmp) / "report.json"
        sidecar.write_text(json.dumps(report, indent=1, sort_keys=True))
        # The model first, its report last: a crash in between leaves a pair that
        # does not match, which the next run exports again.
        os.replace(quant, target)
        os.replace(sidecar, target.with_suffix(".json"))
    return report


@contextlib.contextmanager
def _quiet():
    """The exporter's tracer warnings and the quantizer's advice (logged on the
    root logger) say nothing a Canon user can act on: kept out of run logs."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


def _export_fp32(model_path: Path, out: Path, max_seq_length: int) -> np.ndarray:
    """torch.onnx export of the Transformer module; returns the PyTorch
    reference vectors of REFERENCE_SENTENCES for the verification."""
    import torch  # deferred: heavy, and only the one-time export needs it

    st = SentenceTransformerEmbedder(model_path, max_seq_length=max_seq_length)
    reference = st.embed(list(REFERENCE_SENTENCES))
    model = st._load()
    hf = model[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    names = ("input_ids", "attention_mask", "token_type_ids")
    sample = model.tokenizer(["an export sample", "a second, longer export sample sentence"], padding=True,
                             return_tensors="pt")
    axes = {n: {0: "batch", 1: "sequence"} for n in (*names, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(LastHiddenState(hf), tuple(sample[n] for n in names), str(out), input_names=list(names),
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=OPSET, dynamo=False)
    return reference


def _fuse(src: Path, out: Path, cfg: dict) -> None:
    from onnxruntime.transformers.optimizer import optimize_model  # deferred: heavy, export only

    fused = optimize_model(str(src), model_type="bert", num_heads=int(cfg["num_attention_heads"]),
                           hidden_size=int(cfg["hidden_size"]), opt_level=1)
    fused.save_model_to_file(str(out))


def _quantize(src: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic  # deferred: heavy, export only

    quantize_dynamic(str(src), str(out), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                     extra_options={"DefaultTensorType": 1})  # float: for tensors whose type inference is silent

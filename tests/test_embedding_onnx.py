"""The int8 ONNX backend (the default embedder) against the PyTorch model it
is exported from: same tokens, near-identical vectors, one vector per text
whatever its batch, a verified export made once under a lock, and clear
refusals for models the export does not reproduce."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from canon.core.errors import CanonInputError
from canon.index.embedding import onnx as embedding_onnx
from canon.index.embedding.base import EmbeddingError
from canon.index.embedding.factory import default_embedder
from canon.index.embedding.local_model import default_model_path
from canon.index.embedding.onnx import OnnxInt8Embedder
from canon.index.embedding.torch import SentenceTransformerEmbedder

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [
    "Net revenue excludes value-added tax and shipping charges.",
    "  leading and trailing blanks, Ünïcode café — and an em dash  ",
    "fct_orders.amount_usd",
    "Which definition of active customer applies for 2026-08-31?",
    "word " * 400,   # longer than max_seq_length: truncated like sentence-transformers does
    "",
    "Tabs\tand\nnew lines; 12.5% of EUR 1,000.00",
]


@pytest.fixture(scope="module")
def onnx_emb():
    return default_embedder()


@pytest.fixture(scope="module")
def torch_emb():
    return default_embedder("torch")


def test_identity_is_its_own_and_needs_no_export(tmp_path, torch_emb):
    e = OnnxInt8Embedder(cache_dir=tmp_path)
    ident = e.identity
    assert list(tmp_path.iterdir()) == [], "the identity must not export or load anything"
    assert ident.provider == "onnxruntime" and ident.dimensions == 384 and ident.normalize
    assert ident.model == torch_emb.identity.model, "same model files, same model name@fingerprint"
    assert ident.model_id != torch_emb.identity.model_id, "other vectors, other identity: a switch re-embeds"
    assert "max_seq=256" in ident.implementation_version and "ort=" in ident.implementation_version
    assert OnnxInt8Embedder(max_seq_length=128, cache_dir=tmp_path).identity.model_id != ident.model_id
    assert "/" not in ident.model_id.split(":")[1], "no machine-specific path in the model id"


def test_tokens_equal_sentence_transformers(onnx_emb, torch_emb):
    st = torch_emb._load()
    feats = st.preprocess(TEXTS)
    for i, text in enumerate(TEXTS):
        mask = feats["attention_mask"][i].tolist()
        want = [t for t, m in zip(feats["input_ids"][i].tolist(), mask) if m]
        assert onnx_emb.token_ids([text])[0] == want, text[:40]
    assert len(onnx_emb.token_ids([TEXTS[4]])[0]) == 256


def test_vectors_match_pytorch_and_are_normalised(onnx_emb, torch_emb):
    a, b = onnx_emb.embed(TEXTS), torch_emb.embed(TEXTS)
    assert a.dtype == np.float32 and a.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.97, cos
    assert onnx_emb.embed([]).shape == (0, 384)


def test_a_text_gets_one_vector_whatever_its_batch(onnx_emb):
    alone = np.stack([onnx_emb.embed([t])[0] for t in TEXTS])
    together = onnx_emb.embed(TEXTS)
    reversed_ = onnx_emb.embed(TEXTS[::-1])[::-1]
    assert np.array_equal(alone, together) and np.array_equal(together, reversed_)


def test_paraphrase_ranking_survives_quantisation(onnx_emb):
    docs = ["Net revenue excludes value-added tax and shipping charges.",
            "Restart the ingestion job when the warehouse load is late.",
            "Employees receive twenty-five vacation days per year.",
            "Amounts are converted to US dollars using the daily exchange rate."]
    d = onnx_emb.embed(docs)
    for question, want in [("Which currency conversion do we apply to amounts?", 3),
                           ("Is sales tax left out of net revenue?", 0),
                           ("what to do if the loader is delayed", 1)]:
        assert int(np.argmax(d @ onnx_emb.embed([question])[0])) == want, question


_EXPORT = textwrap.dedent("""
    import json, os, sys
    from canon.index.embedding import onnx as embedding_onnx
    exported = []
    real_export = embedding_onnx.export_int8
    embedding_onnx.export_int8 = lambda *a, **k: exported.append(1) or real_export(*a, **k)
    e = embedding_onnx.OnnxInt8Embedder(cache_dir=sys.argv[1])
    path = embedding_onnx.ensure_exported(e)
    print(json.dumps({"pid": os.getpid(), "path": str(path), "exported": len(exported),
                      "vector": e.embed(["net revenue"])[0][:8].tolist()}))
""")


def test_two_processes_export_once_and_share_the_file(tmp_path):
    """A fresh cache, two processes at once: one exports under the lock, the
    other waits and reuses its file; the report records the verification."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _EXPORT, str(tmp_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(o["exported"] for o in outs) == [0, 1], "exactly one process exports; the other waits"
    assert outs[0]["path"] == outs[1]["path"] and outs[0]["vector"] == outs[1]["vector"]
    target = Path(outs[0]["path"])
    report = json.loads(target.with_suffix(".json").read_text())
    assert report["exported_by_pid"] == next(o["pid"] for o in outs if o["exported"])
    assert report["cosine_to_torch_min"] >= embedding_onnx.MIN_COSINE
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == \
        sorted([target.name, target.with_suffix(".json").name]), "no temporary export left behind"
    assert OnnxInt8Embedder(cache_dir=tmp_path).onnx_file == target


def test_an_export_that_drifts_is_refused_and_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_onnx, "MIN_COSINE", 1.01)   # no real export reaches it
    e = OnnxInt8Embedder(cache_dir=tmp_path)
    with pytest.raises(EmbeddingError, match="drifted from the PyTorch model: cosine min"):
        e.embed(["anything"])
    assert not e.onnx_file.exists() and not list(tmp_path.glob(".export-*"))


def _model_copy(tmp_path: Path) -> Path:
    """The bundled model's config files, weights linked, to edit one setting."""
    src = Path(default_model_path())
    dst = tmp_path / "model"
    for f in src.rglob("*"):
        if f.is_file():
            (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            if f.suffix == ".json" or f.suffix == ".txt":
                (dst / f.relative_to(src)).write_bytes(f.read_bytes())
            else:
                os.symlink(f, dst / f.relative_to(src))
    return dst


@pytest.mark.parametrize("edit,file,reason", [
    (lambda d: _patch(d / "1_Pooling/config.json", pooling_mode_mean_tokens=False, pooling_mode_cls_token=True),
     "1_Pooling/config.json", "mean pooling only"),
    (lambda d: _patch(d / "config.json", model_type="xlm-roberta"), "config.json", "fuses BERT graphs only"),
    (lambda d: (d / "tokenizer.json").unlink(), "", "no tokenizer.json"),
    (lambda d: (d / "modules.json").unlink(), "", "no modules.json"),
    (lambda d: _patch(d / "sentence_bert_config.json", do_lower_case=True), "sentence_bert_config.json",
     "lowercasing"),
    (lambda d: _patch(d / "config_sentence_transformers.json", default_prompt_name="query",
                      prompts={"query": "query: "}), "config_sentence_transformers.json", "adds no prompts"),
])
def test_unsupported_models_are_refused_naming_the_file(tmp_path, edit, file, reason):
    model = _model_copy(tmp_path)
    edit(model)
    with pytest.raises(CanonInputError, match=reason) as err:
        OnnxInt8Embedder(model, cache_dir=tmp_path / "cache").identity
    assert err.value.path == (str(model / file) if file else str(model))
    assert not (tmp_path / "cache").exists(), "refused before anything is exported"
    assert SentenceTransformerEmbedder(model).identity.dimensions == 384, "the torch backend still takes it"


def _patch(path: Path, **changes) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_an_unwritable_cache_names_the_folder_and_the_setting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(CanonInputError, match="CANON_MODEL_CACHE") as err:
        OnnxInt8Embedder(cache_dir=blocker / "models").embed(["x"])
    assert str(blocker / "models") in str(err.value)


def test_release_gold_sets_hold_on_the_int8_backend():
    """The condition the issue sets for the faster backend: actions and recall@3 on both release gold
    sets unchanged from PyTorch, the release gate passing (the comparison `canon migrate` gates on)."""
    from canon.index.config import EmbedderSpec, IndexConfig
    from canon.lifecycle.migrate import default_release_sets
    from canon.lifecycle.migrate import evaluate_pair as _evaluate_pair

    sets = default_release_sets()
    assert {name for name, _, _ in sets} == {"dossier", "hard"}
    pair = _evaluate_pair(sets, IndexConfig(EmbedderSpec(backend="torch")), IndexConfig(), lambda _msg: None)
    for name, sides in pair.items():
        torch_s, int8_s = sides["current"]["summary"], sides["candidate"]["summary"]
        assert int8_s["gate"] == [], (name, int8_s["gate"])
        for metric in ("cases", "passed", "action_accuracy", "recall_at_3", "permission_leaks"):
            assert int8_s[metric] == torch_s[metric], (name, metric)


def test_a_corrupt_cached_export_names_the_file_and_the_fix(tmp_path):
    e = OnnxInt8Embedder(cache_dir=tmp_path)
    tmp_path.mkdir(exist_ok=True)
    e.onnx_file.write_bytes(b"not an onnx model")   # damaged after a good export: its report still matches
    e.onnx_file.with_suffix(".json").write_text(json.dumps(
        {"source_stamp": embedding_onnx._source_stamp(Path(e.model_path))}))
    with pytest.raises(EmbeddingError, match="cannot load this model file") as err:
        e.embed(["net revenue"])
    assert str(e.onnx_file) in str(err.value) and "delete it" in str(err.value)


def test_a_cached_export_is_reused_only_for_the_files_it_was_made_from(tmp_path):
    """Export names tell weights apart by size only: a same-sized fine-tune in a folder of
    the same name must not reuse another model's export; a touched but identical copy may."""
    a = _model_copy(tmp_path / "a")
    b = _model_copy(tmp_path / "b")
    weights = b / "model.safetensors"
    data = bytearray(weights.read_bytes())
    weights.unlink()
    data[-100] ^= 0xFF   # other weights, same size
    weights.write_bytes(bytes(data))
    ea, eb = OnnxInt8Embedder(a, cache_dir=tmp_path / "c"), OnnxInt8Embedder(b, cache_dir=tmp_path / "c")
    assert ea.onnx_file == eb.onnx_file, "same name, same sizes: the same cache file name"
    target = ea.onnx_file
    target.parent.mkdir()
    target.write_bytes(b"stands in for an export of a")
    target.with_suffix(".json").write_text(json.dumps({
        "source_stamp": embedding_onnx._source_stamp(a), "source_digest": embedding_onnx._source_digest(a)}))
    assert embedding_onnx._cached_export_matches(target, a)
    assert not embedding_onnx._cached_export_matches(target, b)
    os.utime(a / "config.json", ns=(1, 1))   # stamps differ, content does not
    assert embedding_onnx._cached_export_matches(target, a)


def test_a_model_saved_by_sentence_transformers_6_is_read_like_sentence_transformers(tmp_path, torch_emb):
    """6.x writes `pooling_mode: "mean"`, `embedding_dimension` and the length in the tokenizer
    config; the backend must read them as sentence-transformers does."""
    saved = tmp_path / "saved"
    torch_emb._load().save(str(saved))
    assert "pooling_mode" in json.loads((saved / "1_Pooling/config.json").read_text())
    e = OnnxInt8Embedder(saved, cache_dir=tmp_path / "cache")
    assert e.identity.dimensions == 384
    assert e.seq_length == SentenceTransformerEmbedder(saved)._load().max_seq_length == 256

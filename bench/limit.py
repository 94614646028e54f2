"""Section 1, against the limit (child side; the figures are bench/figures.py's): the cold build with
the production embedder against that model alone on the exact texts the build embeds, same threads,
repetitions alternating so load drift hits both; beside it the same texts on PyTorch (speed-up, CPU
ratio, cosine) and both release gold sets with each backend."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from bench.pipeline import TimedEmbedder, make_embedder, model_alone, pipeline, public, token_lengths
from bench.settings import CONTRACT, TODAY
from bench.timing import cpu_s, log, now
from bench.workdir import fresh_dir
from canon.index.chunking import chunk_document
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.sources.corpus.reader import read_corpus


def case_limit(p: dict[str, Any]) -> dict[str, Any]:
    """Cold build vs the model alone on the same embed texts; repetitions alternate the order."""
    corpus, work, reps, kind = Path(p["corpus"]), Path(p["work"]), p["reps"], p["embedder"]
    inner = make_embedder(kind)
    res: dict[str, Any] = {"embedder": kind, "model_id": inner.identity.model_id}
    t = now()
    encode = model_alone(inner)   # loads the model (the ONNX backend: exports it once per machine)
    res["model_load_s"] = now() - t
    # The speed-up of the default backend over PyTorch, on the same texts in the same repetitions.
    baseline = make_embedder("torch") if kind == "st" else None
    base_encode = model_alone(baseline) if baseline is not None else None
    if kind != "hashing":
        import torch  # heavy: only the real model's runs load it
        res["torch_threads"] = torch.get_num_threads()
        res["encode_batch_size"] = (baseline or inner).batch_size   # the PyTorch one, whichever it is
    res["publish_batch_size"] = 64  # canon.index.publish.publish's default: texts per embedder.embed call

    # The exact texts a cold publish embeds, in its order: the registry's documents (doc_id order, as
    # registry.load_documents returns them), chunks in order. Checked against what the build embeds.
    docs = sorted(gate(read_corpus(corpus), load_contract(CONTRACT), today=TODAY).documents, key=lambda d: d.doc_id)
    texts = [ch.embed_text for d in docs for ch in chunk_document(d)]
    res["texts"] = len(texts)
    res["text_chars_mean"] = round(statistics.mean(len(x) for x in texts), 1) if texts else 0
    lengths = token_lengths(inner, texts)
    if lengths is not None:
        lens, max_seq = lengths
        res["wordpieces_mean"] = round(statistics.mean(lens), 1)
        res["truncated_texts"] = sum(n > max_seq for n in lens)
        res["max_seq_length"] = max_seq

    def limit_sorted(fn=encode) -> tuple[float, float, Any]:   # one call over everything (torch sorts by length)
        t0, c0 = now(), cpu_s()
        vectors = fn(texts)
        return now() - t0, cpu_s() - c0, vectors

    def limit_pipeline_order() -> float:   # the groups publish hands the embedder, in its order
        t0 = now()
        for i in range(0, len(texts), 64):
            encode(texts[i:i + 64])
        return now() - t0

    # warm-up: a small build and one encode, untimed
    log(f"limit: warm-up ({kind})")
    pipeline(Path(p["warm_corpus"]), fresh_dir(work / "warm"), TimedEmbedder(inner), run_id="warm")
    encode(texts[:64])
    if base_encode is not None:
        base_encode(texts[:64])
    builds, sorted_s, sorted_cpu, order_s, torch_s, torch_cpu = [], [], [], [], [], []
    identical = same_set = None
    for r in range(reps):
        steps = ["limit", "build"] if r % 2 == 0 else ["build", "limit"]
        for step in steps:
            if step == "limit":
                w, c, vectors = limit_sorted()
                sorted_s.append(w)
                sorted_cpu.append(c)
                if base_encode is not None:
                    w, c, base_vectors = limit_sorted(base_encode)
                    torch_s.append(w)
                    torch_cpu.append(c)
                    log(f"limit rep {r + 1}/{reps}: PyTorch baseline {w:.1f} s")
                    if r == 0:   # the vectors of the timed passes: no extra pass for the comparison
                        res["cosine_to_torch"] = cosine_summary(vectors, base_vectors)
                if r == 0:  # once: it only explains a gap, and it costs a full model pass
                    order_s.append(limit_pipeline_order())
                log(f"limit rep {r + 1}/{reps}: model alone {sorted_s[-1]:.1f} s sorted"
                    + (f", {order_s[-1]:.1f} s in publish's groups" if r == 0 else "") + f" ({len(texts)} texts)")
            else:
                emb = TimedEmbedder(inner, record=(r == 0))
                b = pipeline(corpus, fresh_dir(work / "ws"), emb, run_id=f"cold{r}")
                if r == 0:
                    identical = emb.texts == texts
                    same_set = sorted(emb.texts) == sorted(texts)
                builds.append(public(b))
                log(f"limit rep {r + 1}/{reps}: cold build {b['total_s']:.1f} s ({b['chunks']} chunks, "
                    f"model {b['model_s']:.1f} s)")
    if kind == "st":
        res["gold"] = gold_by_backend(log)
    res.update(builds=builds, limit_sorted_s=sorted_s, limit_sorted_cpu_s=sorted_cpu, limit_pipeline_order_s=order_s,
               torch_sorted_s=torch_s, torch_sorted_cpu_s=torch_cpu,
               texts_identical=identical, texts_same_set=same_set, docs=builds[0]["docs"] if builds else 0,
               chunks=builds[0]["chunks"] if builds else 0)
    shutil.rmtree(work, ignore_errors=True)
    return res


def cosine_summary(a, b) -> dict[str, float]:
    """Row-wise cosine of two sets of unit vectors (both embedders normalise)."""
    cos = (np.asarray(a) * np.asarray(b)).sum(axis=1)
    return {"min": float(cos.min()), "p1": float(np.percentile(cos, 1)), "median": float(np.median(cos))}


def gold_by_backend(progress) -> dict[str, Any]:
    """Both release gold sets, evaluated with the PyTorch model and with the default backend (the
    comparison `canon migrate` gates on): the backend is kept only if actions and recall@3 hold."""
    # heavy (~70 MB of modules: evaluation, ask, migration): loaded after the timed passes and only
    # for the real model, so neither the timed passes nor a --quick run carry it in their peak RSS
    from canon.index.config import EmbedderSpec, IndexConfig
    from canon.lifecycle.migrate import default_release_sets, evaluate_pair

    pair = evaluate_pair(default_release_sets(), IndexConfig(EmbedderSpec(backend="torch")), IndexConfig(),
                          progress)
    keys = ("cases", "passed", "action_accuracy", "recall_at_3", "permission_leaks")
    return {name: {"torch": {k: sides["current"]["summary"][k] for k in keys},
                   "default": {k: sides["candidate"]["summary"][k] for k in keys},
                   "gate_default": sides["candidate"]["summary"]["gate"]} for name, sides in pair.items()}

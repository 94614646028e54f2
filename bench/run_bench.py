"""Canon's performance benchmark: `make bench`.

    .venv/bin/python bench/run_bench.py [--quick] [--docs 10000] [--real-docs 1000] [--chunks 100000]
                                        [--reps 3] [--queries 100] [--seed 42] [--peers] [--only SECTIONS]
                                        [--profile]

Sections (`--only limit,structural,...`):
  limit       the real all-MiniLM-L6-v2 (the default: int8 ONNX) on --real-docs documents: cold build
              (read -> gate -> registry -> chunks -> embeddings -> LanceDB publish) against the model
              alone on the exact same embed texts, same threads. Target build/limit >= 0.85. Beside
              it, the same texts on PyTorch (speed-up, CPU ratio, cosine) and both release gold sets
              with each backend: the int8 default holds only while actions and recall@3 are unchanged.
  structural  the deterministic HashingEmbedder on --docs documents: cold build, no-op rebuild
              (<= 3 % of cold, 0 embedded), one changed body (embeds exactly its chunks), an ACL-only
              change (0 embedded, seconds), a policy revocation enforced by the next ask (no publish).
  query       warm `ask` and hybrid search p50/p95 at --docs documents and at --chunks chunks, split
              per ask step, against LanceDB's own hybrid query on the same table, filter and depth.
              Target p95 <= 50 ms and <= 1.7x the bare query.
  metadata    bench/metadata_bench.py (the 5,500-node manifest): <= 10 s, <= 1 GB.
  peers       only with --peers: dbt-ml 0.8.0 and LlamaIndex via ../shared/bench/*/run_bench.sh on the
              peers' own corpus (gen_synth.py, same N and seed), against Canon on the same files
              (see bench/peers.py). Off by default so `make bench` from a fresh clone stays bounded;
              it installs the peers into their own venvs under $CANON_HOME/bench/peers.

Every case runs in its own child process (peak RSS is per case: the child's ru_maxrss) with a
warm-up before its timed repetitions; figures are medians with min-max spread, and the machine's
load average is recorded beside each case. `--quick` (CI smoke): HashingEmbedder everywhere, 300
documents, 1 repetition, no real model. Writes $CANON_HOME/bench/results.json (CANON_HOME defaults
to <repo>/var) and prints a table with the target beside each figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
for _p in (str(REPO), str(BENCH)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import gen_corpus  # noqa: E402

# The gate's "effective date too far in the future" rule depends on today; a fixed day makes the
# same seed admit the same documents on any day the benchmark runs.
TODAY = dt.date(2026, 11, 30)
CONTRACT = REPO / "contracts" / "knowledge.yml"
ROLE = "analyst"
SEARCH_K = 10
CANDIDATES = 40          # what canon.index.search fetches per list for k=10: max(4k, 40)
CHUNKS_PER_DOC = 1.6     # measured on the generated corpus (synth share 0.5): sizing of the --chunks corpus

# dbt-ml's tools/bench_search.py and LlamaIndex's query_bench.py ask these (same terms, same seed 7).
PEER_TERMS = ["net revenue", "gross margin", "churn rate", "refund rate", "freshness SLA", "credit notes",
              "settlement_date", "fx rate conversion", "lineage order_lines", "backfill partition",
              "late-arriving refunds", "reconciliation general ledger", "cohort analysis", "primary key",
              "VAT exclusion", "on-call owner", "quarantined null records", "audit lineage", "inventory turnover"]
PEER_QUALS = ["definition", "for 2026-08-31", "which model", "owner", "caveats", "grain", "how is it computed",
              "policy"]


def peer_queries(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(PEER_TERMS)} {rng.choice(PEER_QUALS)}" for _ in range(n)]


# ====================================================================== small helpers

def now() -> float:
    return time.perf_counter()


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def cpu_s() -> float:
    """CPU seconds of this process, all threads (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)  # KiB on Linux


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (p95 of 100 values = the 95th smallest, as the peers compute it)."""
    if not values:
        return None
    v = sorted(values)
    return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]


def spread(samples: list[float]) -> dict[str, Any]:
    s = [x for x in samples if x is not None]
    if not s:
        return {"median": None, "min": None, "max": None, "stdev": None, "n": 0, "samples": []}
    return {"median": statistics.median(s), "min": min(s), "max": max(s),
            "stdev": statistics.pstdev(s) if len(s) > 1 else 0.0, "n": len(s), "samples": s}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {loadavg()[0] if loadavg() else '?'}] {msg}", file=sys.stderr,
          flush=True)


def fresh_dir(p: Path) -> Path:
    shutil.rmtree(p, ignore_errors=True)
    p.mkdir(parents=True)
    return p


def canon_home() -> Path:
    return Path(os.environ.get("CANON_HOME", str(REPO / "var")))


# ====================================================================== the pipeline under test

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
        from canon.index.embedding.factory import DEFAULT_BACKEND, default_embedder
        return default_embedder(DEFAULT_BACKEND if kind == "st" else "torch")
    from canon.index.embedding.base import HashingEmbedder
    return HashingEmbedder()


def model_alone(emb):
    """The fastest way the embedder's model can encode a list of texts: PyTorch's own length-sorted
    batched encode (same batch size, same threads); the ONNX backend's `embed` (one text per run,
    no padding: its own fastest path); the HashingEmbedder's `embed`."""
    from canon.index.embedding.base import SentenceTransformerEmbedder
    if isinstance(emb, SentenceTransformerEmbedder):
        model = emb._load()
        return lambda texts: model.encode(texts, batch_size=emb.batch_size, show_progress_bar=False,
                                          convert_to_numpy=True, normalize_embeddings=True)
    if hasattr(emb, "_load"):
        emb._load()
    return emb.embed


def token_lengths(emb, texts: list[str]) -> tuple[list[int], int] | None:
    from canon.index.embedding.base import SentenceTransformerEmbedder
    if isinstance(emb, SentenceTransformerEmbedder):
        model = emb._load()
        return [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True)["input_ids"]], model.max_seq_length
    if hasattr(emb, "token_ids"):   # untruncated lengths: its own tokenizer cuts at seq_length
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
    from canon.registry import store as registry
    from canon.registry.contracts import load_contract
    from canon.index.build import build_index
    from canon.index.revisions import served_revision
    from canon.registry.policy import load_policy, project
    from canon.registry.build import build_registry

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
        t4 = now()
        st["definitions_s"] = t4 - t3
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


# ====================================================================== section 1: against the limit

def case_limit(p: dict[str, Any]) -> dict[str, Any]:
    """Cold build vs the model alone on the same embed texts; repetitions alternate the order."""
    from canon.index.chunking import chunk_document
    from canon.registry.contracts import load_contract
    from canon.sources.corpus.reader import read_corpus
    from canon.registry.gate import gate

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
        import torch
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
    import numpy as np
    cos = (np.asarray(a) * np.asarray(b)).sum(axis=1)
    return {"min": float(cos.min()), "p1": float(np.percentile(cos, 1)), "median": float(np.median(cos))}


def gold_by_backend(progress) -> dict[str, Any]:
    """Both release gold sets, evaluated with the PyTorch model and with the default backend (the
    comparison `canon migrate` gates on): the backend is kept only if actions and recall@3 hold."""
    from canon.index.config import EmbedderSpec, IndexConfig
    from canon.lifecycle.migrate import default_release_sets
    from canon.lifecycle.migrate import evaluate_pair as _evaluate_pair

    pair = _evaluate_pair(default_release_sets(), IndexConfig(EmbedderSpec(backend="torch")), IndexConfig(),
                          progress)
    keys = ("cases", "passed", "action_accuracy", "recall_at_3", "permission_leaks")
    return {name: {"torch": {k: sides["current"]["summary"][k] for k in keys},
                   "default": {k: sides["candidate"]["summary"][k] for k in keys},
                   "gate_default": sides["candidate"]["summary"]["gate"]} for name, sides in pair.items()}


# ====================================================================== section 2: structural

def _doc_files(corpus: Path, sub: str) -> list[Path]:
    return sorted((corpus / sub).rglob("*.md")) if (corpus / sub).exists() else []


def _chunks_of_doc(docs, doc_id: str) -> int:
    from canon.index.chunking import chunk_document
    d = next(d for d in docs if d.doc_id == doc_id)
    return len(chunk_document(d))


def _front_matter_id(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.startswith("doc_id:"):
            return line.split(":", 1)[1].strip().strip("'")
    raise ValueError(f"{path}: no doc_id")


def case_structural(p: dict[str, Any]) -> dict[str, Any]:
    from canon.index.embedding.base import HashingEmbedder

    corpus, work, reps = Path(p["corpus"]), Path(p["work"]), p["reps"]
    emb = TimedEmbedder(HashingEmbedder())
    res: dict[str, Any] = {"embedder": emb.identity.model_id}
    ws = work / "index"
    if p.get("setup_only"):  # --only query: just the index the query figures read
        b = pipeline(corpus, fresh_dir(ws), emb, run_id="setup")
        log(f"structural setup for the query section: {b['docs']} docs, {b['chunks']} chunks in {b['total_s']:.0f} s")
        return {"setup": public(b), "index_dir": str(ws)}
    log("structural: warm-up build")
    pipeline(Path(p["warm_corpus"]), fresh_dir(work / "warm"), emb, run_id="warm")
    shutil.rmtree(work / "warm", ignore_errors=True)

    cold = []
    for r in range(reps):
        b = pipeline(corpus, fresh_dir(ws), emb, run_id=f"cold{r}")
        cold.append(public(b))
        log(f"structural cold {r + 1}/{reps}: {b['total_s']:.1f} s, {b['docs']} docs, {b['chunks']} chunks "
            "(" + ", ".join(f"{k[:-2]} {b[k]:.1f}" for k in STAGES) + ")")
    res["cold"] = cold

    pipeline(corpus, ws, emb, run_id="noop-warm")  # warm-up
    noop = []
    for r in range(reps):
        noop.append(public(pipeline(corpus, ws, emb, run_id=f"noop{r}")))
        log(f"structural no-op {r + 1}/{reps}: {noop[-1]['total_s']:.2f} s, embedded {noop[-1]['embedded']}")
    res["noop"] = noop

    # One changed document: a multi-section prose page (Canon's own wiki pages, else any file).
    prose = _doc_files(corpus, "analytical/wiki") or _doc_files(corpus, "synth") or _doc_files(corpus, "")
    picks = [prose[(i * 7919) % len(prose)] for i in range(reps)]
    changes = []
    for r, path in enumerate(picks):
        doc_id = _front_matter_id(path)
        gen_corpus.mutate_body(path, f"rep{r}")
        b = pipeline(corpus, ws, emb, run_id=f"change{r}", keep_docs=True)
        expected = _chunks_of_doc(b["_documents"], doc_id)
        changes.append({**public(b), "doc_id": doc_id, "expected_embedded": expected,
                        "ok": b["embedded"] == expected})
        log(f"structural one change {r + 1}/{reps}: {b['total_s']:.2f} s, embedded {b['embedded']} "
            f"(its chunks: {expected}), deleted {b['deleted']}")
    res["one_change"] = changes

    # ACL-only: allowed_roles of one document edited (text, status and dates untouched).
    acl_files = _doc_files(corpus, "analytical/metrics") or prose
    acl_picks = [acl_files[(i * 104729 + 3) % len(acl_files)] for i in range(reps)]
    acls = []
    for r, path in enumerate(acl_picks):
        doc_id = _front_matter_id(path)
        gen_corpus.mutate_roles(path, ["analyst", "auditor", f"reviewer_{r}"])
        b = pipeline(corpus, ws, emb, run_id=f"acl{r}", keep_docs=True)
        expected = _chunks_of_doc(b["_documents"], doc_id)
        acls.append({**public(b), "doc_id": doc_id, "expected_rewritten": expected,
                     "ok": b["embedded"] == 0 and b["rewritten_metadata_only"] == expected})
        log(f"structural ACL-only {r + 1}/{reps}: {b['total_s']:.2f} s, embedded {b['embedded']}, "
            f"rewritten {b['rewritten_metadata_only']} (its chunks: {expected})")
    res["acl_only"] = acls

    res["disk_after_cold_and_changes"] = disk_mb(ws)
    res["revocation"] = revocation_check(corpus, ws, emb.inner, b["_documents"])
    log(f"structural revocation: {res['revocation']}")
    res["index_dir"] = str(ws)
    return res


def build_retriever(ws: Path, con, emb, docs):
    """canon.ask.pipeline.Retriever over the served revision, wired by canon.ask.context as the CLI wires it."""
    from canon.ask.context import build_retriever as production_retriever
    return production_retriever(con, ws / "lancedb", docs, emb)


def governed_questions(docs, n: int, seed: int) -> list[tuple[str, str, dt.date]]:
    """(question, object_id, date) about approved metric revisions the analyst may read, with the
    domain named (object names repeat across domains) and a date inside the revision."""
    rng = random.Random(f"governed:{seed}")
    pool = sorted((d for d in docs if d.kind == "metric_definition" and d.status.value == "approved"
                   and ROLE in d.allowed_roles and d.object_id.startswith("metric.")), key=lambda d: d.doc_id)
    rng.shuffle(pool)
    forms = ["What is the {dom} {name} definition for {day}?", "How was {dom} {name} defined on {day}?",
             "Which model supports {dom} {name} on {day}?", "Where does {dom} {name} come from as of {day}?"]
    out = []
    for d in pool[:n]:
        _, dom, mid = d.object_id.split(".", 2)
        end = d.valid_to or (d.valid_from + dt.timedelta(days=200))
        day = d.valid_from + dt.timedelta(days=rng.randint(0, max(0, (end - d.valid_from).days - 1)))
        out.append((rng.choice(forms).format(dom=dom, name=mid.replace("_", " "), day=day.isoformat()),
                    d.object_id, day))
    return out


def revocation_check(corpus: Path, ws: Path, emb, docs) -> dict[str, Any]:
    """Ask as the analyst, revoke the object in policy.yml, ask again at once: deny, no publish."""
    from canon.registry import store as registry
    from canon.ask.pipeline import AskContext, ask
    from canon.index.revisions import served_revision
    from canon.registry.policy import load_policy

    policy_path = corpus / "policy.yml"
    original = policy_path.read_text(encoding="utf-8")
    con = registry.connect(ws / "canon.duckdb")
    try:
        served_before = served_revision(con)["revision_id"]
        ctx = AskContext(docs=docs, policy=load_policy(policy_path), con=con,
                         retriever=build_retriever(ws, con, emb, docs))
        chosen = None
        for q, obj, day in governed_questions(docs, 60, 1):
            if ask(ctx, q, ROLE).action == "answer":
                chosen = (q, obj)
                break
        if chosen is None:
            return {"ok": False, "reason": "no governed question answered before the revocation"}
        q, obj = chosen
        before = ask(ctx, q, ROLE).action
        t0 = now()
        gen_corpus.revoke(policy_path, ROLE, object_id=obj, revision="bench-revoked")
        ctx.policy = load_policy(policy_path)       # the live policy, read at query time
        after = ask(ctx, q, ROLE)
        seconds = now() - t0
        served_after = served_revision(con)["revision_id"]
        leaked = obj in json.dumps(after.model_dump(mode="json"))
    finally:
        policy_path.write_text(original, encoding="utf-8")
        con.close()
    return {"question": q, "object_id": obj, "action_before": before, "action_after": after.action,
            "seconds_edit_to_deny": seconds, "republished": served_before != served_after,
            "object_id_in_response": leaked,
            "ok": before != "deny" and after.action == "deny" and served_before == served_after and not leaked}


# ====================================================================== section 3: queries

def bare_hybrid(tbl, text: str, vec, flt: str, cols: list[str], depth: int, k: int):
    """LanceDB's own hybrid query (its RRF reranker) with the same prefilter, columns and depth."""
    return (tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns="text")
            .vector(vec).text(text).distance_type("cosine").where(flt, prefilter=True)
            .select(cols).limit(depth).to_list()[:k])


def case_query(p: dict[str, Any]) -> dict[str, Any]:
    import lancedb

    from canon.index import publish as index
    from canon.index import search as index_search
    from canon.registry import store as registry
    from canon.ask.pipeline import RETRIEVE_COLUMNS, AskContext, Timings, ask
    from canon.registry.contracts import load_contract
    from canon.sources.corpus.reader import read_corpus
    from canon.registry.gate import gate
    from canon.index.rows import RETURN_COLUMNS
    from canon.index.revisions import served_revision
    from canon.registry.policy import load_policy

    corpus, ws, passes = Path(p["corpus"]), Path(p["ws"]), p["reps"]
    emb = make_embedder("hashing")
    res: dict[str, Any] = {"label": p["label"]}
    if p.get("build"):
        # The big table: read -> gate -> publish (no registry: ask reads the documents it is given).
        fresh_dir(ws)
        t0 = now()
        g = gate(read_corpus(corpus), load_contract(CONTRACT), today=TODAY)
        t1 = now()
        con = registry.connect(ws / "canon.duckdb")
        r = index.publish(con, ws / "lancedb", g.documents, TimedEmbedder(emb), policy_revision="bench",
                          run_id="big")
        con.close()
        t2 = now()
        docs = g.documents
        res["build"] = {"docs": len(docs), "chunks": r.chunks, "read_gate_s": t1 - t0, "publish_s": t2 - t1,
                        "total_s": t2 - t0, **disk_mb(ws)}
        log(f"query[{p['label']}]: built {r.chunks} chunks from {len(docs)} docs in {t2 - t0:.0f} s")
    con = registry.connect(ws / "canon.duckdb")
    if not p.get("build"):
        docs = registry.load_documents(con)
    policy = load_policy(corpus / "policy.yml")
    rev = served_revision(con)
    tbl = lancedb.connect(str(ws / "lancedb")).open_table(rev["lance_table"])
    tbl.checkout(int(rev["lance_version"]))
    res["chunks"] = tbl.count_rows()
    res["docs"] = len(docs)
    ctx = AskContext(docs=docs, policy=policy, con=con, retriever=build_retriever(ws, con, emb, docs))
    flt = index_search.build_prefilter(ROLE)
    cols = list(RETURN_COLUMNS)

    queries = peer_queries(p["queries"])
    gov = [q for q, _, _ in governed_questions(docs, max(1, p["queries"] // 2), 2)]
    vecs = [emb.embed([q])[0] for q in queries]

    def one_pass(record_actions: bool) -> dict[str, Any]:
        lat: dict[str, list[float]] = {"ask": [], "ask_peer": [], "ask_governed": [], "search": [], "search_ids": [],
                                        "bare": [], "bare_k": []}
        lat["ask_unattributed"] = []   # ask time outside every Timings step
        steps: dict[str, list[float]] = {}
        actions: dict[str, int] = {}
        errors: dict[str, int] = {}
        error_examples: list[str] = []
        overlap = []

        def timed_ask(q: str, bucket: str):
            tm = Timings()
            t0 = now()
            try:
                resp = ask(ctx, q, ROLE, timings=tm)
            except Exception as exc:  # a Canon bug must not stop the benchmark: counted, reported, not timed
                key = f"{type(exc).__name__}: {exc}"[:160]
                errors[key] = errors.get(key, 0) + 1
                if len(error_examples) < 5:
                    error_examples.append(q)
                return
            ms = (now() - t0) * 1000
            lat["ask_unattributed"].append(ms - sum(tm.steps.values()))
            lat["ask"].append(ms)
            lat[bucket].append(ms)
            for s, v in tm.steps.items():
                steps.setdefault(s, []).append(v)
            if record_actions:
                actions[resp.action] = actions.get(resp.action, 0) + 1

        for q, v in zip(queries, vecs):   # interleaved: the three see the same machine state
            t0 = now()
            b = bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)
            lat["bare"].append((now() - t0) * 1000)
            t0 = now()
            bare_hybrid(tbl, q, v, flt, cols, SEARCH_K, SEARCH_K)
            lat["bare_k"].append((now() - t0) * 1000)
            t0 = now()
            hits = index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid")
            lat["search"].append((now() - t0) * 1000)
            t0 = now()   # the hybrid query as ask runs it: served revision pinned once, ids only
            index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid", revision=rev,
                                columns=RETRIEVE_COLUMNS)
            lat["search_ids"].append((now() - t0) * 1000)
            if record_actions:
                a, c = {r["chunk_id"] for r in b}, {h.chunk_id for h in hits}
                overlap.append(len(a & c) / max(1, len(a | c)))
            timed_ask(q, "ask_peer")
        for q in gov:
            timed_ask(q, "ask_governed")
        out = {k: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "mean_ms": statistics.mean(v) if v else None,
                   "n": len(v)} for k, v in lat.items()}
        out["steps"] = {k: {"p50_ms": pct(v, 50), "p95_ms": pct(v, 95), "mean_ms": statistics.mean(v), "n": len(v)}
                        for k, v in sorted(steps.items())}
        out["ask_errors"] = errors
        out["ask_error_examples"] = error_examples
        if record_actions:
            out["actions"] = dict(sorted(actions.items()))
            out["bare_vs_search_jaccard_top10"] = round(statistics.mean(overlap), 3) if overlap else None
        return out

    log(f"query[{p['label']}]: warm-up")
    for q, v in list(zip(queries, vecs))[:5]:
        bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)
        index_search.search(ws / "lancedb", con, q, v, role=ROLE, k=SEARCH_K, mode="hybrid")
        try:
            ask(ctx, q, ROLE)
        except Exception:
            pass  # counted in the timed passes
    runs = []
    for r in range(passes):
        runs.append(one_pass(record_actions=(r == 0)))
        log(f"query[{p['label']}] pass {r + 1}/{passes}: ask p95 {runs[-1]['ask']['p95_ms']:.1f} ms, search p95 "
            f"{runs[-1]['search']['p95_ms']:.1f} ms, bare hybrid p95 {runs[-1]['bare']['p95_ms']:.1f} ms")
    con.close()
    res["passes"] = runs
    res["queries"] = {"peer": len(queries), "governed": len(gov), "examples": queries[:3] + gov[:2]}
    if p.get("ann"):
        res["ann"] = ann_probe(ws, rev, queries, vecs, flt, cols)
    return res


def ann_probe(ws: Path, rev: dict, queries: list[str], vecs, flt: str, cols: list[str]) -> dict[str, Any]:
    """Optional: the same bare hybrid query on a copy of the table with an IVF_HNSW_SQ vector index,
    and how many of the exact (flat) top-10 it keeps."""
    import lancedb

    copy = ws.parent / (ws.name + "-ann")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ws / "lancedb", copy)
    tbl = lancedb.connect(str(copy)).open_table(rev["lance_table"])
    tbl.checkout(int(rev["lance_version"]))
    tbl.restore()
    flat, flat_lat = [], []
    for q, v in zip(queries, vecs):
        t0 = now()
        flat.append({r["chunk_id"] for r in bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)})
        flat_lat.append((now() - t0) * 1000)
    t0 = now()
    tbl.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ")
    build_s = now() - t0
    lat, keep = [], []
    for q, v, f in zip(queries, vecs, flat):
        t0 = now()
        got = {r["chunk_id"] for r in bare_hybrid(tbl, q, v, flt, cols, CANDIDATES, SEARCH_K)}
        lat.append((now() - t0) * 1000)
        keep.append(len(got & f) / max(1, len(f)))
    shutil.rmtree(copy, ignore_errors=True)
    return {"index": "IVF_HNSW_SQ", "build_s": build_s, "flat_bare_hybrid_p95_ms": pct(flat_lat, 95),
            "bare_hybrid_p50_ms": pct(lat, 50),
            "bare_hybrid_p95_ms": pct(lat, 95), "top10_kept_vs_flat": round(statistics.mean(keep), 3)}


# ====================================================================== child processes

# ====================================================================== section 6: growth

def _rows(con, table: str) -> int | None:
    from canon.registry.tombstones import has_table
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] if has_table(con, table) else None


def case_growth(p: dict[str, Any]) -> dict[str, Any]:
    """One cold build (HashingEmbedder) of an N-document corpus: what each store holds afterwards."""
    from canon.registry import store as registry
    from canon.index.embedding.base import HashingEmbedder

    ws = fresh_dir(Path(p["ws"]))
    b = pipeline(Path(p["corpus"]), ws, TimedEmbedder(HashingEmbedder()), run_id="growth")
    lance = ws / "lancedb"
    fts_mb = sum(f.stat().st_size for f in lance.rglob("_indices/**/*") if f.is_file()) / 1e6
    con = registry.connect(ws / "canon.duckdb", read_only=True)
    try:
        rows = {t: _rows(con, t) for t in ("documents", "document_versions", "definitions", "quarantine",
                                           "corpus_files", "chunk_lineage", "embedding_lineage", "answer_log")}
    finally:
        con.close()
    out = {"build": public(b), "docs": b["docs"], "chunks": b["chunks"], "vectors_mb": b["chunks"] * 384 * 4 / 1e6,
           "fts_index_mb": round(fts_mb, 1), **disk_mb(ws), "rows": rows}
    shutil.rmtree(ws, ignore_errors=True)
    return out


CASES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "limit": case_limit, "structural": case_structural, "query": case_query, "growth": case_growth,
}


def child_main(case: str, params: dict[str, Any]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # LanceDB's own hybrid query logs a deprecation warning per sub-query; keep the progress readable.
    os.environ.setdefault("LANCEDB_LOG", "error")
    if case in CASES:
        fn = CASES[case]
    else:
        import peers
        fn = peers.CHILD_CASES[case]
    load_before = loadavg()
    t0 = now()
    prof = None
    if os.environ.get("CANON_BENCH_PROFILE"):
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    out = fn(params)
    if prof is not None:
        prof.disable()
        import io
        import pstats
        dest = canon_home() / "bench" / "profiles" / f"{params.get('label', case)}.txt"
        dest.parent.mkdir(parents=True, exist_ok=True)
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("cumulative").print_stats(45)
        st.sort_stats("tottime").print_stats(30)
        dest.write_text(buf.getvalue())
        log(f"profile written to {dest}")
    out.update(case=case, case_wall_s=now() - t0, peak_rss_mb=peak_rss_mb(), load_before=load_before,
               load_after=loadavg())
    print(json.dumps(out, default=str))
    return 0


def run_child(case: str, params: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
    """Run one case in a fresh interpreter; stderr (progress) passes through, stdout's last line is JSON."""
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--case", case, "--params", json.dumps(params)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=str(REPO), env=env, timeout=timeout)
    lines = [x for x in proc.stdout.strip().splitlines() if x.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"case {case} failed (exit {proc.returncode}); see its output above")
    return json.loads(lines[-1])


# ====================================================================== figures

class Figures:
    """Every figure: key, section, label, value (median), spread, unit, target, status."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, key: str, section: str, label: str, samples: list[float] | float | None, unit: str = "",
            target: str = "", ok: bool | None = None, *, load: list[float] | None = None,
            rss: float | None = None, note: str = "", value: Any = None) -> None:
        if isinstance(samples, list):
            sp = spread(samples)
        elif samples is None:
            sp = spread([])
        else:
            sp = spread([samples])
        self.rows.append({"key": key, "section": section, "label": label,
                          "value": value if value is not None else sp["median"], "unit": unit,
                          "min": sp["min"], "max": sp["max"], "stdev": sp["stdev"], "reps": sp["n"],
                          "samples": sp["samples"], "target": target,
                          "status": ("met" if ok else "MISSED") if ok is not None else ("" if target == "" else "n/a"),
                          "load": load, "peak_rss_mb": rss, "note": note})

    def skip(self, key: str, section: str, label: str, target: str, why: str) -> None:
        self.rows.append({"key": key, "section": section, "label": label, "value": None, "unit": "", "min": None,
                          "max": None, "stdev": None, "reps": 0, "samples": [], "target": target,
                          "status": "skipped", "load": None, "peak_rss_mb": None, "note": why})


# Every key the JSON always carries (skipped figures have value null and status "skipped").
FIGURE_KEYS = [
    "limit.build_docs_per_s", "limit.build_chunks_per_s", "limit.model_only_chunks_per_s",
    "limit.model_only_pipeline_order_chunks_per_s", "limit.ratio_build_over_limit",
    "limit.ratio_build_over_limit_load_robust",
    "limit.ratio_build_over_pipeline_order", "limit.model_share_of_build", "limit.non_model_s",
    "limit.model_load_s", "limit.peak_rss_mb",
    "limit.backend.torch_chunks_per_s", "limit.backend.speedup_over_torch", "limit.backend.cpu_ratio_over_torch",
    "limit.backend.cosine_to_torch_min", "limit.backend.gold_unchanged",
    "structural.cold_s", "structural.cold_docs_per_s", "structural.cold_chunks_per_s",
    "structural.noop_s", "structural.noop_ratio", "structural.noop_embedded",
    "structural.one_change_s", "structural.one_change_embedded", "structural.acl_only_s",
    "structural.acl_only_embedded", "structural.revocation_s", "structural.peak_rss_mb",
    "query.docs.ask_p50_ms", "query.docs.ask_p95_ms", "query.docs.search_p95_ms", "query.docs.bare_hybrid_p95_ms",
    "query.docs.ratio_ask_over_bare_p95", "query.docs.ratio_search_over_bare_p95", "query.docs.peak_rss_mb",
    "query.chunks.ask_p50_ms", "query.chunks.ask_p95_ms", "query.chunks.search_p95_ms",
    "query.chunks.bare_hybrid_p95_ms", "query.chunks.ratio_ask_over_bare_p95",
    "query.chunks.ratio_search_over_bare_p95", "query.chunks.build_s", "query.chunks.peak_rss_mb",
    "metadata.synthetic_s", "metadata.synthetic_peak_rss_mb",
    "peers.llamaindex.ratio_cold", "peers.llamaindex.ratio_noop",
    "peers.dbtml.ratio_cold", "peers.dbtml.ratio_noop", "peers.dbtml.ratio_one_change",
    "peers.dbtml.ratio_ask_p95",
]


def _med(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


STAGES = ("read_s", "gate_s", "registry_s", "definitions_s", "publish_s")


def figures_limit(F: Figures, r: dict[str, Any], real: bool) -> None:
    S = "1 limit"
    load, rss = r["load_before"], r["peak_rss_mb"]
    b = r["builds"]
    tot = [x["total_s"] for x in b]
    F.add("limit.build_docs_per_s", S, f"cold build docs/s ({r['docs']} docs)", [x["docs"] / x["total_s"] for x in b],
          "docs/s", load=load)
    F.add("limit.build_chunks_per_s", S, f"cold build chunks/s ({r['chunks']} chunks)",
          [x["chunks"] / x["total_s"] for x in b], "chunks/s", load=load)
    F.add("limit.model_only_chunks_per_s", S, "model alone, one sorted encode (the limit)",
          [r["texts"] / s for s in r["limit_sorted_s"]], "chunks/s", load=load)
    F.add("limit.model_only_pipeline_order_chunks_per_s", S, "model alone, publish's 64-text groups",
          [r["texts"] / s for s in r["limit_pipeline_order_s"]], "chunks/s", load=load)
    ratio = [s / t for s, t in zip(r["limit_sorted_s"], tot)]
    F.add("limit.ratio_build_over_limit", S, "build / limit throughput", ratio, "x", ">= 0.85",
          _med(ratio) is not None and _med(ratio) >= 0.85, load=load,
          note="" if real else "HashingEmbedder (--quick): not the real limit")
    # Load-robust form of the same ratio, for a shared machine whose load moves between the build and
    # the limit: limit/build = (limit / model-in-build) x (model-in-build / build). The first factor
    # compares the model with itself (CPU seconds: both are pure torch work on the same threads); the
    # second is measured inside one build, so both terms see the same load.
    robust = [(lc / x["model_cpu_s"]) * (x["model_s"] / x["total_s"])
              for lc, x in zip(r.get("limit_sorted_cpu_s", []), b) if x.get("model_cpu_s")]
    if robust:
        F.add("limit.ratio_build_over_limit_load_robust", S, "same, load-robust (CPU-time model factor)", robust,
              "x", ">= 0.85", _med(robust) >= 0.85, load=load,
              note="(limit CPU / model CPU in build) x (model wall / build wall), per repetition")
    ratio2 = [s / t for s, t in zip(r["limit_pipeline_order_s"], tot)]  # first rep only
    F.add("limit.ratio_build_over_pipeline_order", S, "build / model in publish's groups", ratio2, "x", load=load)
    F.add("limit.model_share_of_build", S, "time inside the model during build",
          [x["model_s"] / x["total_s"] for x in b], "share", load=load)
    F.add("limit.non_model_s", S, "build time outside the model", [x["total_s"] - x["model_s"] for x in b], "s",
          load=load, note="median stages: " + ", ".join(
              f"{k[:-2]} {_med([x[k] for x in b]):.1f}" for k in ("read_s", "gate_s", "registry_s", "definitions_s")) +
          f", publish w/o model {_med([x['publish_s'] - x['model_s'] for x in b]):.1f} s")
    F.add("limit.model_load_s", S, "model load (not in the figures above)", r["model_load_s"], "s", load=load)
    F.add("limit.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss)
    figures_backend(F, r)


def figures_backend(F: Figures, r: dict[str, Any]) -> None:
    """The default backend (int8 ONNX) against the PyTorch model: kept only if the gold sets hold."""
    S = "1 limit"
    load, torch_s = r["load_before"], r.get("torch_sorted_s") or []
    keys = ("limit.backend.torch_chunks_per_s", "limit.backend.speedup_over_torch",
            "limit.backend.cpu_ratio_over_torch", "limit.backend.cosine_to_torch_min", "limit.backend.gold_unchanged")
    if not torch_s:
        for k in keys:
            F.skip(k, S, k.rsplit(".", 1)[1].replace("_", " "), "", "HashingEmbedder run: no backend to compare")
        return
    F.add(keys[0], S, "PyTorch model alone, sorted batches (the baseline)", [r["texts"] / s for s in torch_s],
          "chunks/s", load=load)
    speedup = [t / s for t, s in zip(torch_s, r["limit_sorted_s"])]
    F.add(keys[1], S, "default backend speed-up over PyTorch (wall)", speedup, "x", "> 1", _med(speedup) > 1,
          load=load, note=r["model_id"].split(":", 1)[0] + " " + r["model_id"].rsplit(":", 1)[1].split(";")[0])
    F.add(keys[2], S, "PyTorch CPU seconds / default backend CPU seconds",
          [t / s for t, s in zip(r["torch_sorted_cpu_s"], r["limit_sorted_cpu_s"])], "x", load=load)
    cos = r["cosine_to_torch"]
    F.add(keys[3], S, "cosine to the PyTorch vectors, every chunk", cos["min"], "", load=load,
          note=f"p1 {cos['p1']:.4f}, median {cos['median']:.4f}")
    gold = r.get("gold") or {}
    same = all(g["torch"]["action_accuracy"] == g["default"]["action_accuracy"]
               and g["torch"]["recall_at_3"] == g["default"]["recall_at_3"] and not g["gate_default"]
               for g in gold.values())
    F.add(keys[4], S, "gold actions + recall@3, PyTorch vs default", None, "",
          "unchanged, gate passes", bool(gold) and same,
          value=("same" if same else "CHANGED") if gold else "no gold sets",
          note="; ".join(f"{n}: actions {g['torch']['action_accuracy']}/{g['default']['action_accuracy']}, "
                         f"recall@3 {g['torch']['recall_at_3']}/{g['default']['recall_at_3']}"
                         for n, g in gold.items()))


def figures_structural(F: Figures, r: dict[str, Any]) -> None:
    S = "2 structural"
    load, rss = r["load_before"], r["peak_rss_mb"]
    cold, noop = r["cold"], r["noop"]
    cold_s = [x["total_s"] for x in cold]
    F.add("structural.cold_s", S, f"cold build ({cold[0]['docs']} docs, {cold[0]['chunks']} chunks)", cold_s, "s",
          load=load, note="median stages: " + ", ".join(
              f"{k[:-2]} {_med([x[k] for x in cold]):.1f}" for k in STAGES))
    F.add("structural.cold_docs_per_s", S, "cold docs/s", [x["docs"] / x["total_s"] for x in cold], "docs/s", load=load)
    F.add("structural.cold_chunks_per_s", S, "cold chunks/s", [x["chunks"] / x["total_s"] for x in cold], "chunks/s",
          load=load)
    noop_s = [x["total_s"] for x in noop]
    F.add("structural.noop_s", S, "no-op rebuild", noop_s, "s", load=load, note="median stages: " + ", ".join(
        f"{k[:-2]} {_med([x[k] for x in noop]):.2f}" for k in STAGES))
    ratio = _med(noop_s) / _med(cold_s)
    F.add("structural.noop_ratio", S, "no-op / cold", ratio, "x", "<= 0.03", ratio <= 0.03, load=load)
    emb = [x["embedded"] for x in noop]
    F.add("structural.noop_embedded", S, "no-op embedded", max(emb), "", "== 0", max(emb) == 0 and all(
        x["noop"] for x in noop), load=load)
    ch = r["one_change"]
    F.add("structural.one_change_s", S, "one changed body: rebuild", [x["total_s"] for x in ch], "s", load=load)
    F.add("structural.one_change_embedded", S, "one changed body: embedded", max(x["embedded"] for x in ch), "",
          "== its chunks (" + "/".join(str(x["expected_embedded"]) for x in ch) + ")", all(x["ok"] for x in ch),
          load=load, note="embedded per rep " + "/".join(str(x["embedded"]) for x in ch))
    acl = r["acl_only"]
    acl_s = [x["total_s"] for x in acl]
    F.add("structural.acl_only_s", S, "ACL-only change: rebuild", acl_s, "s", "<= 10 s (seconds)",
          _med(acl_s) <= 10, load=load)
    F.add("structural.acl_only_embedded", S, "ACL-only change: embedded", max(x["embedded"] for x in acl), "",
          "== 0", all(x["ok"] for x in acl), load=load,
          note="rows rewritten " + "/".join(str(x["rewritten_metadata_only"]) for x in acl))
    rv = r["revocation"]
    F.add("structural.revocation_s", S, "policy revocation: edit -> next ask", rv.get("seconds_edit_to_deny"), "s",
          "deny on next ask, no publish", bool(rv.get("ok")), load=load,
          note=f"{rv.get('action_before')} -> {rv.get('action_after')}, republished {rv.get('republished')}")
    d = r.get("disk_after_cold_and_changes") or {}
    F.add("structural.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss,
          note=f"disk after the runs: LanceDB {d.get('lancedb_mb')} MB (all versions), DuckDB {d.get('duckdb_mb')} MB")


def figures_query(F: Figures, r: dict[str, Any], tag: str) -> None:
    S = f"3 query @{r['docs']} docs / {r['chunks']} chunks"
    load, rss = r["load_before"], r["peak_rss_mb"]
    P = r["passes"]

    def series(name: str, q: str) -> list[float]:
        return [x[name][q] for x in P]

    ask95, bare95, search95 = series("ask", "p95_ms"), series("bare", "p95_ms"), series("search", "p95_ms")
    F.add(f"query.{tag}.ask_p50_ms", S, "warm ask p50", series("ask", "p50_ms"), "ms", load=load)
    steps = P[0]["steps"]
    F.add(f"query.{tag}.ask_p95_ms", S, "warm ask p95", ask95, "ms", "<= 50 ms", _med(ask95) <= 50, load=load,
          note="p95 per step: " + ", ".join(f"{k} {_med([x['steps'][k]['p95_ms'] for x in P if k in x['steps']]):.1f}"
                                            for k in steps) + f", outside steps {_med(series('ask_unattributed', 'p95_ms')):.1f}; "
                                              f"actions {P[0].get('actions')}")
    errs = P[0].get("ask_errors") or {}
    if errs:
        F.add(f"query.{tag}.ask_errors", S, "asks that raised (not timed)", sum(errs.values()), "", "== 0", False,
              load=load, note="; ".join(f"{n}x {e}" for e, n in errs.items()) + " e.g. " +
                              " | ".join(P[0].get("ask_error_examples", [])[:2]))
    F.add(f"query.{tag}.search_p95_ms", S, "canon hybrid search p95 (k=10, all 23 columns)", search95, "ms",
          "<= 50 ms", _med(search95) <= 50, load=load, note=f"p50 {_med(series('search', 'p50_ms')):.1f} ms")
    if all("search_ids" in x for x in P):
        ids95 = series("search_ids", "p95_ms")
        F.add(f"query.{tag}.search_ids_p95_ms", S, "canon hybrid search p95 (k=10, ids only)", ids95,
              "ms", "<= 50 ms", _med(ids95) <= 50, load=load,
              note=f"p50 {_med(series('search_ids', 'p50_ms')):.1f} ms; the query ask runs: ids only, revision pinned once")
    F.add(f"query.{tag}.bare_hybrid_p95_ms", S, "bare LanceDB hybrid p95 (same filter, depth 40)", bare95, "ms",
          load=load, note=f"p50 {_med(series('bare', 'p50_ms')):.1f} ms; at depth 10: p95 "
                          f"{_med(series('bare_k', 'p95_ms')):.1f} ms; top-10 Jaccard vs canon "
                          f"{P[0].get('bare_vs_search_jaccard_top10')}")
    ra = [a / b for a, b in zip(ask95, bare95)]
    rs = [a / b for a, b in zip(search95, bare95)]
    F.add(f"query.{tag}.ratio_ask_over_bare_p95", S, "ask p95 / bare hybrid p95", ra, "x", "<= 1.7",
          _med(ra) <= 1.7, load=load)
    F.add(f"query.{tag}.ratio_search_over_bare_p95", S, "search p95 / bare hybrid p95", rs, "x", "<= 1.7",
          _med(rs) <= 1.7, load=load)
    if tag == "chunks":
        b = r.get("build") or {}
        F.add("query.chunks.build_s", S, f"build of the table ({b.get('docs')} docs; read+gate+publish)",
              b.get("total_s"), "s", load=load,
              note=f"read+gate {b.get('read_gate_s', 0):.0f} s, publish {b.get('publish_s', 0):.0f} s; disk: LanceDB "
                   f"{b.get('lancedb_mb')} MB, DuckDB {b.get('duckdb_mb')} MB")
        if r.get("ann"):
            a = r["ann"]
            F.add("query.chunks.ann_bare_hybrid_p95_ms", S, f"bare hybrid p95 with {a['index']}",
                  a["bare_hybrid_p95_ms"], "ms", load=load,
                  note=f"flat (same probe) {a['flat_bare_hybrid_p95_ms']:.1f} ms; index build {a['build_s']:.0f} s; "
                       f"keeps {a['top10_kept_vs_flat']:.0%} of the flat top-10 (Canon's own revision carries "
                       f"the index canon.index_tuning chooses)")
    F.add(f"query.{tag}.peak_rss_mb", S, "peak RSS of the case", rss, "MB", load=load, rss=rss)


def figures_growth(F: Figures, runs: list[dict[str, Any]]) -> None:
    S = "6 growth"
    for r in runs:
        n = r["docs"]
        rows = r["rows"]
        F.add(f"growth.{r['n']}.cold_s", S, f"{n} docs: cold build, {r['chunks']} chunks", r["build"]["total_s"], "s",
              load=r["load_before"], rss=r["peak_rss_mb"],
              note=f"LanceDB {r['lancedb_mb']} MB (vectors {r['vectors_mb']:.0f} MB, FTS index {r['fts_index_mb']} MB), "
                   f"DuckDB {r['duckdb_mb']} MB; rows: " + ", ".join(f"{k} {v}" for k, v in rows.items() if v))


def figures_metadata(F: Figures, m: dict[str, Any], load: list[float]) -> None:
    S = "4 metadata"
    cases = {c["case"]: c for c in m["cases"]}
    syn = next(c for c in m["cases"] if c["case"].startswith("synthetic-") and c["column_lineage"])
    F.add("metadata.synthetic_s", S, f"{syn['nodes']}-node manifest -> tables ({syn['edges']} edges)",
          [syn["median_s"]], "s", "<= 10 s", syn["median_s"] <= 10, load=load,
          note=f"min {syn['min_s']} max {syn['max_s']} over {syn['reps']} reps")
    F.add("metadata.synthetic_peak_rss_mb", S, "peak RSS", syn["peak_rss_mb"], "MB", "<= 1024 MB",
          syn["peak_rss_mb"] <= 1024, load=load, rss=syn["peak_rss_mb"])
    for name, c in cases.items():
        if c is syn:
            continue
        F.add(f"metadata.{name}_s", S, f"{name} ({c['manifest_mb']} MB manifest)", [c["median_s"]], "s", "<= 10 s",
              c["ok"], load=load, rss=c["peak_rss_mb"], note=f"peak RSS {c['peak_rss_mb']:.0f} MB")


# ====================================================================== output

def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        a = abs(v)
        return f"{v:.3f}" if a < 1 else f"{v:.2f}" if a < 10 else f"{v:.1f}" if a < 1000 else f"{v:.0f}"
    return str(v)


def print_table(F: Figures) -> None:
    head = f"{'figure':52s} {'median':>9s} {'min-max':>17s} {'unit':9s} {'target':24s} {'status':8s} {'load 1m':>7s}"
    section = None
    print()
    print(head)
    print("-" * len(head))
    for r in F.rows:
        if r["status"] == "not run":
            continue
        if r["section"] != section:
            section = r["section"]
            print(f"[{section}]")
        mm = f"{fmt(r['min'])}-{fmt(r['max'])}" if r["reps"] and r["reps"] > 1 else ""
        ld = fmt(r["load"][0]) if r.get("load") else "-"
        print(f"  {r['label'][:50]:50s} {fmt(r['value']):>9s} {mm:>17s} {r['unit'][:9]:9s} {r['target'][:24]:24s} "
              f"{r['status']:8s} {ld:>7s}")
        if r["note"]:
            print(f"      {r['note']}")


# ====================================================================== main

def git_state() -> dict[str, Any]:
    """The commit measured, and whether Canon's code differs from it (the figures belong to a commit)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=str(REPO), capture_output=True, text=True,
                                  timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"head": git("rev-parse", "--short", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--", "canon", "assets", "contracts"))}


def corpus_dir(work: Path, n: int, seed: int, share: float) -> Path:
    """Generated once per (n, seed, share, generator source); reused while the stamp matches."""
    d = work / "corpora" / f"docs{n}-seed{seed}-share{share}"
    script = gen_corpus.gen_synth_script()
    stamp = json.dumps({"n": n, "seed": seed, "share": share,
                        "gen": gen_corpus.tree_digest_files([Path(gen_corpus.__file__)] + ([script] if script else []))})
    st = d / ".stamp"
    if st.exists() and st.read_text() == stamp:
        # mutations of earlier runs are undone by regenerating: check the digest of the tree
        dig = d / ".digest"
        if dig.exists() and dig.read_text() == gen_corpus.tree_digest(d):
            return d
    fresh_dir(d)
    t = now()
    s = gen_corpus.generate(d, n, seed, share)
    log(f"generated corpus {d.name} in {now() - t:.1f} s: {s['synth_docs']} gen_synth + {s['analytical_docs']} "
        f"analytical{'; ' + s['note'] if s['note'] else ''}")
    st.write_text(stamp)
    (d / ".digest").write_text(gen_corpus.tree_digest(d))
    return d


def working_copy(src: Path, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".stamp", ".digest"))
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Canon performance benchmark (make bench)")
    ap.add_argument("--quick", action="store_true", help="CI smoke: HashingEmbedder only, 300 docs, 1 rep")
    ap.add_argument("--docs", type=int, help="documents for the structural and query figures (default 10000)")
    ap.add_argument("--real-docs", type=int, help="documents for the real-model figures (default 1000)")
    ap.add_argument("--chunks", type=int, help="chunks of the large query table (default 100000)")
    ap.add_argument("--reps", type=int, help="timed repetitions per figure after the warm-up (default 3)")
    ap.add_argument("--queries", type=int, help="peer-style queries per pass (default 100)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--synth-share", type=float, default=0.5, help="share of gen_synth.py documents in the corpus")
    ap.add_argument("--peers", action="store_true", help="also run dbt-ml and LlamaIndex (installs them in their "
                                                         "own venvs under $CANON_HOME/bench/peers)")
    ap.add_argument("--peer-docs-dbtml", type=int, default=5000)
    ap.add_argument("--peer-docs-llamaindex", type=int, default=1000)
    ap.add_argument("--peer-reps", type=int, default=1)
    ap.add_argument("--peers-which", default="llamaindex,dbtml", help="comma-separated: llamaindex,dbtml")
    ap.add_argument("--ann", action="store_true", help="also probe an IVF_HNSW_SQ vector index on the large table")
    ap.add_argument("--only", help="comma-separated sections: limit,structural,query,metadata,growth,peers")
    ap.add_argument("--profile", action="store_true", help="run the cases under cProfile (slower; profiles go "
                                                           "to $CANON_HOME/bench/profiles/)")
    ap.add_argument("--out", help="results JSON (default $CANON_HOME/bench/results.json)")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--params", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.case:
        return child_main(a.case, json.loads(a.params))

    q = a.quick
    docs = a.docs or (300 if q else 10000)
    real_docs = a.real_docs or (300 if q else 1000)
    chunks = a.chunks or (1000 if q else 100000)
    reps = a.reps or (1 if q else 3)
    nq = a.queries or (20 if q else 100)
    sections = set((a.only or "limit,structural,query,metadata,growth,peers").split(","))
    unknown = sections - {"limit", "structural", "query", "metadata", "growth", "peers"}
    if unknown:
        ap.error(f"unknown section(s) in --only: {', '.join(sorted(unknown))}")
    if a.profile:
        os.environ["CANON_BENCH_PROFILE"] = "1"
    home = canon_home()
    work = home / "bench" / "work"
    work.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = loadavg()
    git_start = git_state()
    log(f"canon bench: docs {docs}, real-model docs {real_docs} ({'HashingEmbedder' if q else 'all-MiniLM-L6-v2'}), "
        f"large table {chunks} chunks, reps {reps}, queries {nq}, seed {a.seed}; sections {','.join(sorted(sections))}")
    F = Figures()
    raw: dict[str, Any] = {}
    errors: dict[str, str] = {}
    warm = corpus_dir(work, 100 if not q else 30, a.seed + 1, a.synth_share)

    def guarded(name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # one failing section must not hide the others
            errors[name] = f"{type(exc).__name__}: {exc}"
            log(f"section {name} FAILED: {errors[name]}")

    if "limit" in sections:
        def s_limit():
            c = working_copy(corpus_dir(work, real_docs, a.seed, a.synth_share), work / "limit-corpus")
            r = run_child("limit", {"corpus": str(c), "warm_corpus": str(warm), "work": str(work / "limit"),
                                    "reps": reps, "embedder": "hashing" if q else "st"})
            raw["limit"] = r
            figures_limit(F, r, real=not q)
        guarded("limit", s_limit)

    struct_corpus = work / "structural-corpus"
    if "structural" in sections or "query" in sections:
        def s_struct():
            c = working_copy(corpus_dir(work, docs, a.seed, a.synth_share), struct_corpus)
            r = run_child("structural", {"corpus": str(c), "warm_corpus": str(warm), "work": str(work / "structural"),
                                         "reps": reps, "setup_only": "structural" not in sections})
            raw["structural"] = r
            if "structural" in sections:
                figures_structural(F, r)
        guarded("structural", s_struct)

    if "query" in sections:
        def s_query():
            r = run_child("query", {"corpus": str(struct_corpus), "ws": str(work / "structural" / "index"),
                                    "reps": reps, "queries": nq, "label": "docs"})
            raw["query_docs"] = r
            figures_query(F, r, "docs")
            n_big = max(docs, math.ceil(chunks / CHUNKS_PER_DOC))
            c = corpus_dir(work, n_big, a.seed, a.synth_share)
            r = run_child("query", {"corpus": str(c), "ws": str(work / "big" / "index"), "reps": reps,
                                    "queries": nq, "label": "chunks", "build": True, "ann": a.ann})
            raw["query_chunks"] = r
            figures_query(F, r, "chunks")
            if r["chunks"] < chunks:
                log(f"note: the large table holds {r['chunks']} chunks, fewer than the {chunks} asked for")
        guarded("query", s_query)

    if "metadata" in sections:
        def s_meta():
            cmd = [sys.executable, str(BENCH / "metadata_bench.py"), "--reps", str(reps)]
            if q:
                cmd += ["--nodes", "500", "--skip-real"]
            ld = loadavg()
            log("metadata: " + " ".join(cmd[1:]))
            subprocess.run(cmd, check=False, cwd=str(REPO), stdout=sys.stderr)
            m = json.loads((home / "bench" / "metadata.json").read_text())
            raw["metadata"] = m
            figures_metadata(F, m, ld)
        guarded("metadata", s_meta)

    if "growth" in sections:
        def s_growth():
            runs = []
            for n in ((100, 300, 1000) if q else (1000, 10000, 50000)):
                c = corpus_dir(work, n, a.seed, a.synth_share)
                r = run_child("growth", {"corpus": str(c), "ws": str(work / "growth")})
                runs.append({**r, "n": n})
                log(f"growth {n}: {r['chunks']} chunks in {r['build']['total_s']:.1f} s, LanceDB {r['lancedb_mb']} MB, "
                    f"DuckDB {r['duckdb_mb']} MB, peak RSS {r['peak_rss_mb']:.0f} MB")
            raw["growth"] = runs
            figures_growth(F, runs)
        guarded("growth", s_growth)

    import peers
    if "peers" in sections and a.peers:
        guarded("peers", lambda: peers.run(F, raw, run_child=run_child, work=work, home=home, seed=a.seed,
                                           n_dbtml=a.peer_docs_dbtml if not q else 300,
                                           n_llama=a.peer_docs_llamaindex if not q else 100,
                                           reps=a.peer_reps, queries=nq, quick=q,
                                           which=tuple(a.peers_which.split(","))))
    else:
        why = ("not requested: peers run only with --peers (they install dbt-ml and LlamaIndex into their own venvs, "
               "~3 GB, and take ~15 min); `make bench` stays bounded from a fresh clone")
        if "peers" in sections:
            log("peers: skipped — " + why)
        peers.skip_all(F, why)

    for name, err in errors.items():
        F.rows.append({"key": f"error.{name}", "section": "errors", "label": f"section {name} failed", "value": None,
                       "unit": "", "min": None, "max": None, "stdev": None, "reps": 0, "samples": [], "target": "",
                       "status": "ERROR", "load": None, "peak_rss_mb": None, "note": err})
    # keys of sections not run are present too (status "not run")
    have = {r["key"] for r in F.rows}
    for k in FIGURE_KEYS:
        if k not in have:
            F.rows.append({"key": k, "section": "not run", "label": k, "value": None, "unit": "", "min": None,
                           "max": None, "stdev": None, "reps": 0, "samples": [], "target": "", "status": "not run",
                           "load": None, "peak_rss_mb": None, "note": ""})
    print_table(F)
    load_end = loadavg()
    git_end = git_state()
    print(f"\nload average (1/5/15 min): start {load_start}, end {load_end}; {os.cpu_count()} CPUs")
    print(f"commit {git_start['head'] or '?'}" + (" + uncommitted changes in canon/assets/contracts"
                                                 if git_start["dirty"] else "")
          + ("" if git_end == git_start else f"; CHANGED during the run to {git_end['head']}"
             + (" (dirty)" if git_end["dirty"] else "") + ": figures mix versions"))
    out = {
        "benchmark": "canon", "started_at": started, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.executable).name, "bench/run_bench.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_start": load_start, "load_end": load_end},
        "git": {"start": git_start, "end": git_end},
        "params": {"quick": q, "docs": docs, "real_docs": real_docs, "chunks": chunks, "reps": reps, "queries": nq,
                   "seed": a.seed, "synth_share": a.synth_share, "today": TODAY.isoformat(), "peers": a.peers,
                   "sections": sorted(sections)},
        "figures": {r["key"]: r for r in F.rows},
        "missed": [r["key"] for r in F.rows if r["status"] == "MISSED"],
        "errors": errors,
        "cases": raw,
    }
    dest = Path(a.out) if a.out else home / "bench" / "results.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"wrote {dest}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The benchmark's corpus generator and harness: same seed -> same corpus, the corpus has the
analytical shape the figures rely on, the one-document mutations change only what they say, and
a tiny `--quick` run writes a results JSON with every figure key. No timing is asserted: the
benchmark prints figures, CI does not gate on speed."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from bench import figures, gen_corpus, report

ROOT = Path(__file__).resolve().parents[1]


def _front_matter(path: Path) -> tuple[dict, str]:
    _, fm, body = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(fm), body


def test_same_seed_same_corpus_other_seed_other_corpus(tmp_path):
    a = gen_corpus.generate(tmp_path / "a", 80, seed=5)
    b = gen_corpus.generate(tmp_path / "b", 80, seed=5)
    gen_corpus.generate(tmp_path / "c", 80, seed=6)
    assert a["docs"] == b["docs"] == 80
    assert gen_corpus.tree_digest(tmp_path / "a") == gen_corpus.tree_digest(tmp_path / "b")
    assert gen_corpus.tree_digest(tmp_path / "a") != gen_corpus.tree_digest(tmp_path / "c")
    n_files = sum(1 for _ in (tmp_path / "a").rglob("*.md"))
    assert n_files == 80
    # regenerating into the same folder replaces, never accumulates
    gen_corpus.generate(tmp_path / "a", 80, seed=5)
    assert gen_corpus.tree_digest(tmp_path / "a") == gen_corpus.tree_digest(tmp_path / "b")


def test_synth_part_is_the_peers_generator_output(tmp_path):
    s = gen_corpus.generate(tmp_path / "mix", 40, seed=42)
    if gen_corpus.gen_synth_script() is None:
        assert s["synth_docs"] == 0 and s["note"]
        return
    assert s["synth_docs"] == 20
    peer = gen_corpus.generate_synth_only(tmp_path / "peer", 20, 42)
    mine = sorted((tmp_path / "mix" / "synth").glob("*.md"))
    assert [p.name for p in mine] == sorted(p.name for p in peer.glob("*.md"))
    assert all(p.read_bytes() == (peer / p.name).read_bytes() for p in mine)


def test_analytical_documents_have_the_governed_shape():
    docs = gen_corpus.analytical_docs(600, seed=3)
    assert len(docs) == 600
    kinds = {d.meta["kind"] for d in docs}
    assert {"metric_definition", "model_schema", "lineage", "wiki", "runbook", "restricted_memo"} <= kinds
    by_obj: dict[str, list] = {}
    for d in docs:
        if d.meta["kind"] == "metric_definition" and d.meta["status"] != "draft":
            by_obj.setdefault(d.meta["object_id"], []).append(d.meta)
    multi = [v for v in by_obj.values() if len(v) >= 2]
    assert multi, "some metrics must have several versions"
    for revs in multi:
        revs.sort(key=lambda m: m["valid_from"])
        for a, b in zip(revs, revs[1:]):
            assert a["valid_to"] == b["valid_from"]      # contiguous effective dates, half-open
        assert revs[-1]["valid_to"] is None
    assert any(d.meta["status"] == "draft" for d in docs)
    memos = [d for d in docs if d.meta["kind"] == "restricted_memo"]
    assert memos and all("analyst" not in d.meta["allowed_roles"] for d in memos)
    for d in docs:
        if d.meta["kind"] in ("wiki", "runbook"):
            words = len([w for w in d.text.split() if not w.startswith("#")])
            assert 140 <= words <= 420, (d.path, words)
            assert "\n## " in d.text


def test_corpus_passes_the_gate_except_the_planted_failures(tmp_path):
    from canon.registry.contracts import load_contract
    from canon.registry.gate import gate
    from canon.registry.policy import load_policy
    from canon.sources.corpus.reader import read_corpus

    gen_corpus.generate(tmp_path / "c", 900, seed=1, synth_share=0.0)
    res = gate(read_corpus(tmp_path / "c"), load_contract(ROOT / "contracts" / "knowledge.yml"),
               today=dt.date(2026, 11, 30))
    assert len(res.documents) + len(res.quarantine) == 900
    assert res.quarantine and all(q.source_uri.startswith("analytical/broken/") for q in res.quarantine)
    policy = load_policy(tmp_path / "c" / "policy.yml")
    assert policy.revision.startswith("bench-1") and policy.revoke


def test_mutations_change_only_what_they_say(tmp_path):
    gen_corpus.generate(tmp_path / "c", 60, seed=2, synth_share=0.0)
    page = sorted((tmp_path / "c" / "analytical" / "metrics").rglob("*.md"))[0]
    meta0, body0 = _front_matter(page)
    gen_corpus.mutate_body(page, "t1")
    meta1, body1 = _front_matter(page)
    assert meta1 == meta0 and body1 != body0 and "Addendum t1" in body1
    gen_corpus.mutate_roles(page, ["analyst", "auditor"])
    meta2, body2 = _front_matter(page)
    assert body2 == body1 and meta2["allowed_roles"] == ["analyst", "auditor"]
    assert {k: v for k, v in meta2.items() if k != "allowed_roles"} == {
        k: v for k, v in meta1.items() if k != "allowed_roles"}
    pol = tmp_path / "c" / "policy.yml"
    gen_corpus.revoke(pol, "analyst", object_id=meta0["object_id"], revision="r2")
    data = yaml.safe_load(pol.read_text())
    assert data["revision"] == "r2"
    assert {"role": "analyst", "object_id": meta0["object_id"]} in data["revoke"]


def test_tiny_quick_run_writes_every_figure_key(tmp_path):
    env = dict(os.environ, CANON_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--docs", "40", "--real-docs", "30",
         "--chunks", "60", "--queries", "4", "--out", str(out)],
        cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert not data["errors"]
    missing = [k for k in report.FIGURE_KEYS if k not in data["figures"]]
    assert not missing, missing
    for key in report.FIGURE_KEYS:
        fig = data["figures"][key]
        assert {"value", "target", "status", "min", "max", "reps", "load"} <= set(fig), key
        if key.startswith("peers."):
            assert fig["status"] == "skipped" and fig["note"]   # peers only run with --peers
        elif key.startswith("limit.backend."):   # --quick runs no real model: nothing to compare
            assert fig["status"] == "skipped" and "HashingEmbedder" in fig["note"]
        else:
            assert fig["value"] is not None, key
    assert data["figures"]["structural.noop_embedded"]["value"] == 0
    assert data["figures"]["structural.acl_only_embedded"]["value"] == 0
    assert data["figures"]["structural.revocation_s"]["status"] == "met"
    assert "load average" in proc.stdout and "target" in proc.stdout


def _limit_result(gold_default: dict) -> dict:
    summary = {"cases": 11, "passed": 11, "action_accuracy": 1.0, "recall_at_3": 1.0, "permission_leaks": 0}
    return {"load_before": [1.0], "texts": 100, "limit_sorted_s": [2.0, 2.2], "limit_sorted_cpu_s": [3.0, 3.1],
            "torch_sorted_s": [4.0, 4.6], "torch_sorted_cpu_s": [6.0, 6.4],
            "model_id": "onnxruntime:all-MiniLM-L6-v2@x:384:norm:canon-ort-int8-1;max_seq=256;ort=1",
            "cosine_to_torch": {"min": 0.98, "p1": 0.985, "median": 0.99},
            "gold": {"dossier": {"torch": summary, "default": {**summary, **gold_default},
                                 "gate_default": [] if not gold_default else ["action_accuracy"]}}}


def test_the_backend_is_kept_only_while_the_gold_sets_hold():
    """figures_backend: speed-up and CPU ratio per repetition; the gold figure is met only when
    actions and recall@3 equal PyTorch's and the release gate passes."""
    F = report.Figures()
    figures.figures_backend(F, _limit_result({}))
    rows = {r["key"]: r for r in F.rows}
    assert rows["limit.backend.speedup_over_torch"]["samples"] == [2.0, 4.6 / 2.2]
    assert rows["limit.backend.speedup_over_torch"]["status"] == "met"
    assert rows["limit.backend.cpu_ratio_over_torch"]["samples"] == [2.0, 6.4 / 3.1]
    assert rows["limit.backend.gold_unchanged"]["status"] == "met"
    F = report.Figures()
    figures.figures_backend(F, _limit_result({"action_accuracy": 10 / 11, "passed": 10}))
    gold = {r["key"]: r for r in F.rows}["limit.backend.gold_unchanged"]
    assert gold["status"] == "MISSED" and gold["value"] == "CHANGED" and "actions 1.0/0.909" in gold["note"]
    F = report.Figures()
    figures.figures_backend(F, {**_limit_result({}), "gold": {}})
    gold = {r["key"]: r for r in F.rows}["limit.backend.gold_unchanged"]
    assert gold["status"] == "MISSED" and gold["value"] == "no gold sets"

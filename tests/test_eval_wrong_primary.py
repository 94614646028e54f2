"""`canon eval` counts an answer whose primary evidence is not the case's first gold document
(`wrong_primary_answers`), fails such a case and fails the release gate on it: the recall of the
gold documents in the top three cannot tell the metric answered with its model beside it from the
model answered with the metric beside it (canon/evaluation/run.py, report.py)."""

from __future__ import annotations

import json
from pathlib import Path

from canon.evaluation.report import gate_failures
from canon.evaluation.run import evaluate
from canon.index.embedding.hashing import HashingEmbedder

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "dossier" / "corpus.jsonl"
QUESTION = "Which raw sources and model version support net revenue for 2026-08-31?"


def _run(tmp_path: Path, gold_docs: list[str]) -> dict:
    gold = [{"id": "P1", "question": QUESTION, "role": "analyst", "as_of": "2026-08-31",
             "expected_action": "answer", "gold_docs": gold_docs, "gold_answer": "v2"}]
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    return evaluate(CORPUS, tmp_path / "gold.json", embedder=HashingEmbedder())


def test_the_first_gold_document_is_the_primary(tmp_path):
    report = _run(tmp_path, ["metric.net_revenue.v2"])
    assert report["cases"][0]["passed"]
    assert report["summary"]["wrong_primary_answers"] == 0
    assert report["summary"]["gate"] == []


def test_another_primary_fails_the_case_and_the_gate(tmp_path):
    # the same documents, the primary second: the gold says another one is what should answer
    answered = _run(tmp_path, ["metric.net_revenue.v2"])["cases"][0]["response"]["evidence"]
    docs = [e["doc_id"] for e in answered][:2]
    assert len(docs) == 2, answered   # the primary and a supporting document
    report = _run(tmp_path, [docs[1], docs[0]])
    assert report["summary"]["recall_at_3"] == 1.0
    assert not report["cases"][0]["passed"]
    assert report["summary"]["wrong_primary_answers"] == 1
    assert any("another object" in f for f in report["summary"]["gate"])
    assert any("another object" in f for f in gate_failures(report["summary"]))

"""Naive retrieval baselines beside the governed pipeline: BM25, vector and hybrid
search, each by relevance only and with plain metadata constraints."""

from __future__ import annotations

from typing import Any

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import parse_question
from canon.evaluation.gold import GoldCase
from canon.evaluation.metrics import recall, top_docs
from canon.models.documents import Document, Status


def constrained_top3(hits, docs_by_id: dict[str, Document], case: GoldCase, catalog) -> list[str]:
    """Plain metadata constraints over retrieval candidates: approved and
    in effect first (by authority), and a source the question names is kept."""
    day = case.as_of
    parsed = parse_question(case.question, catalog, day)
    ordered = top_docs(hits, 50)
    def governed(doc_id: str) -> bool:
        d = docs_by_id[doc_id]
        return d.status in (Status.approved, Status.observed) and (day is None or d.in_effect(day))
    # Hard constraints keep relevance order among what is approved and in effect.
    known = [i for i in ordered if i in docs_by_id]
    ranked = [i for i in known if governed(i)] + [i for i in known if not governed(i)]
    for ns in parsed.named_sources:
        named = [i for i in ordered if i in docs_by_id and (not ns.kinds or docs_by_id[i].kind in ns.kinds)
                 and docs_by_id[i].status != Status.approved]
        if named and named[0] not in ranked[:3]:
            ranked = ranked[:2] + [named[0]] + [i for i in ranked[2:] if i != named[0]]
    return ranked[:3]


def configurations(ctx, cases: list[GoldCase], docs: list[Document]) -> list[dict[str, Any]]:
    """The baseline retrieval table on this corpus: recall@3 of BM25, vector and
    hybrid retrieval, each by relevance only and with governance constraints."""
    retr = ctx.retriever
    by_id = {d.doc_id: d for d in docs}
    with_gold = [c for c in cases if c.gold_docs]
    rows = []
    for mode, label in (("fts", "BM25 (LanceDB FTS)"), ("vector", "vector (embeddings)"), ("hybrid", "hybrid (RRF)")):
        plain = constrained = 0.0
        for c in with_gold:
            vec = retr.embed_query(c.question) if mode != "fts" else None
            hits = retr.search(c.question if mode != "vector" else None, vec, role=c.role, k=50, mode=mode)
            plain += recall(top_docs(hits), c.gold_docs)
            constrained += recall(constrained_top3(hits, by_id, c, ctx.catalog), c.gold_docs)
        n = len(with_gold) or 1
        rows.append({"configuration": f"{label}, relevance only", "recall_at_3": round(plain / n, 3)})
        rows.append({"configuration": f"{label} + metadata constraints", "recall_at_3": round(constrained / n, 3)})
    gov = sum(recall([e.doc_id for e in ask(ctx, c.question, c.role, c.as_of).evidence], c.gold_docs)
              for c in with_gold) / (len(with_gold) or 1)
    rows.append({"configuration": "Canon governed pipeline (resolve → graph → constraints)", "recall_at_3": round(gov, 3)})
    return rows

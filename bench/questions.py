"""What the ask measurements ask, and the ask path they ask it through (bench/structural.py's
revocation, bench/query.py's latencies): the peers' query strings, governed questions about
approved metric revisions, and the retriever wired as the CLI wires it."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from bench.settings import ROLE
from canon.ask.context import build_retriever as production_retriever

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


def build_retriever(ws: Path, con, emb, docs):
    """canon.ask.pipeline.Retriever over the served revision, wired by canon.ask.context as the CLI wires it."""
    return production_retriever(con, ws / "lancedb", docs, emb)

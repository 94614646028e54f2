"""Deterministic arithmetic for `canon ask`: freshness ages against their SLAs,
and metric values from the semantic layer once the governing definition is
resolved. The pipeline (canon/ask/pipeline.py) picks the snapshot or the
definition; this module computes from it and says what it computed."""

import datetime as dt
from typing import Callable

from canon.ask.resolve import claims_of, sentences
from canon.core.errors import CanonRunError
from canon.models.documents import Document
from canon.models.responses import Claim, Evidence, Freshness, Response


def fmt_age(minutes: int) -> str:
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def no_observation(role: str, as_of: dt.date | None) -> Response:
    return Response(action="abstain", role=role, as_of=as_of, reason="no_observation",
                    answer="No freshness observation you may see covers that object" +
                           (f" on {as_of.isoformat()}." if as_of else "."))


def freshness(snap: Document, observed_at: dt.datetime | None, obs: list[dict], role: str,
              as_of: dt.date | None, unobserved: list[str] = ()) -> Response:
    """Each observed source's age at the snapshot's observation time against its SLA;
    `unobserved`: the object's sources the snapshot has no reading for (named, never guessed)."""
    if observed_at is None or not obs:
        # A snapshot without an observation time or per-source readings: nothing to compute from.
        return no_observation(role, as_of)
    items = []
    for o in obs:
        age = int((observed_at - o["max_loaded_at"]).total_seconds() // 60)
        sla = o["sla_minutes"] or 0
        items.append(Freshness(source=o["source"], max_loaded_at=o["max_loaded_at"].isoformat().replace("+00:00", "Z"),
                               age_minutes=age, sla_minutes=sla, fresh=bool(sla) and age <= sla,
                               observed_at=observed_at.isoformat().replace("+00:00", "Z"), age=fmt_age(age)))
    stale = [f for f in items if not f.fresh]
    verdict = "All sources are within SLA" if not stale else f"{len(stale)} of {len(items)} sources are past their SLA"
    answer = f"{verdict} at {observed_at.strftime('%Y-%m-%dT%H:%M:%SZ')}: " + "; ".join(
        f"{f.source} {f.age} old (SLA {fmt_age(f.sla_minutes)}, {'fresh' if f.fresh else 'STALE'})" for f in items) + "."
    if unobserved:
        answer += f" No freshness reading for {', '.join(unobserved)}."
    claims = [Claim(claim=f"{f.source} was {f.age} old against an SLA of {fmt_age(f.sla_minutes)}",
                    evidence_id=snap.doc_id, evidence_revision=snap.content_hash,
                    supported_span=next((s for s in sentences(snap.text) if f.source in s), f.source),
                    effective_for=as_of) for f in items]
    return Response(action="calculate", role=role, as_of=as_of, answer=answer,
                    evidence=[Evidence.of(snap, "primary")], claims=claims, freshness=items,
                    calculation={"kind": "freshness", "observed_at": items[0].observed_at if items else None,
                                 "all_fresh": not stale})


def metric_value(primary: Document, start: dt.date, end: dt.date, metric_values: Callable | None,
                 role: str, label: str = "") -> Response:
    """The value of the metric `primary` governs over [start, end), from the semantic layer;
    `label` names the period ("Q3 2026"; a month by default)."""
    last = end - dt.timedelta(days=1)
    name = label or f"{start:%B %Y}"
    if metric_values is None:
        return Response(action="abstain", role=role, as_of=last, reason="no_semantic_layer",
                        answer=f"{primary.doc_id} governs {name}, but no semantic layer is connected to "
                               "compute its value.", evidence=[Evidence.of(primary, "primary")])
    try:
        result = metric_values(primary, start, end)
    except CanonRunError as exc:  # e.g. the warehouse is locked by a running dbt build
        return Response(action="abstain", role=role, as_of=last, reason="semantic_layer_unavailable",
                        answer=f"{primary.doc_id} governs {name}, but the semantic layer is unavailable: {exc}",
                        evidence=[Evidence.of(primary, "primary")])
    if result is not None and result.get("value") is None:
        return Response(action="calculate", role=role, as_of=last, evidence=[Evidence.of(primary, "primary")],
                        answer=f"No {primary.object_id} rows fall in {name} under {primary.doc_id}.",
                        calculation={"kind": "metric_value", "metric": result["metric"], "value": None,
                                     "period_start": start.isoformat(), "period_end": end.isoformat(),
                                     "sql": result["sql"], "query_id": result["query_id"]})
    if result is None:
        # The engine keeps why (canon/sources/dbt/semantic/metric_values.py, MetricEngine.last_reason):
        # an unsupported metric type, a relation missing from the warehouse, no usable dbt profile.
        why = getattr(metric_values, "last_reason", None)
        return Response(action="abstain", role=role, as_of=last, reason="metric_not_computable",
                        answer=f"{primary.doc_id} governs {name}, but the semantic layer cannot compute it"
                               + (f": {why.rstrip('.')}." if why else "."),
                        evidence=[Evidence.of(primary, "primary")])
    answer = (f"Net value of {primary.object_id} for {name} under {primary.doc_id}: "
              f"{result['value']:,.2f} {result.get('unit', '')}".rstrip() + f" (query: {result['query_id']}).")
    return Response(action="calculate", role=role, as_of=last, answer=answer,
                    evidence=[Evidence.of(primary, "primary")], claims=claims_of(primary, last, limit=2),
                    calculation={"kind": "metric_value", "metric": result["metric"], "value": result["value"],
                                 "period_start": start.isoformat(), "period_end": end.isoformat(),
                                 "sql": result["sql"], "query_id": result["query_id"]})

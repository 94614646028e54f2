"""How one evidence revision leads to the others an answer needs (metric →
model version → lineage → freshness). Links come from structure, in this
order: explicit metadata (dbt-rendered documents carry them), object ids
referenced in the evidence (`model.analytics.fct_revenue.v2`), then sibling
objects of the same domain and name (`lineage.finance.net_revenue`).
Each linked object is resolved for the same date with the same temporal rule."""

import datetime as dt
import functools
import re

from canon.models.documents import Document
from canon.models.responses import effective_time_source
from canon.registry.temporal import resolve_revision

_EDGE = re.compile(r"([A-Za-z_][\w.]*\w)\s*->\s*([A-Za-z_][\w.]*\w)")
# The source starts where its run of [\w.] starts (the lookbehind), less any leading digits
# or dots: the same source the unanchored pattern finds, without retrying every position
# inside every word (which made a snapshot's scan quadratic in its word lengths).
_OBS_SENTENCE = re.compile(
    r"(?<![\w.])(?:[^\WA-Za-z_]|\.)*(?P<source>[A-Za-z_][\w.]*)\s+max_loaded_at\s+(?P<ts>\d{4}-\d{2}-\d{2}T[\d:]+(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
    r",?\s+SLA\s+(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>hours?|h|minutes?|min)", re.I)
_OBSERVED_AT = re.compile(r"Observed at\s+(\d{4}-\d{2}-\d{2}T[\d:]+(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)", re.I)


@functools.lru_cache(maxsize=65536)
def _family(object_id: str) -> tuple[str, str] | None:
    parts = object_id.split(".")
    return (parts[1], parts[-1]) if len(parts) >= 3 else None


_KEY = 12   # object ids are found in a text by their first _KEY characters, then checked whole


class KindIndex:
    """The documents of one kind in a document list, indexed for `siblings` and
    `_referenced`, which would otherwise scan the whole list on every answer.
    Same results as the scans, in the same order. `ask` keeps
    one per kind on each role's visible set (`RoleView.kind_index`)."""

    def __init__(self, docs: list[Document], kind: str):
        self.kind = kind
        self.of_kind = [d for d in docs if d.kind == kind]
        self.position = {id(d): i for i, d in enumerate(self.of_kind)}
        self.by_family: dict[tuple[str, str], list[Document]] = {}
        self.by_object: dict[str, list[Document]] = {}
        for d in self.of_kind:
            fam = _family(d.object_id)
            if fam is not None:
                self.by_family.setdefault(fam, []).append(d)
            self.by_object.setdefault(d.object_id, []).append(d)
        self.by_key: dict[str, list[str]] = {}   # first _KEY characters -> object ids
        self.short: list[str] = []               # object ids shorter than _KEY
        for oid in self.by_object:
            if len(oid) >= _KEY:
                self.by_key.setdefault(oid[:_KEY], []).append(oid)
            else:
                self.short.append(oid)

    def objects_in(self, text: str) -> set[str]:
        """Every object id of this kind that occurs in `text` (as `object_id in text` would say)."""
        found = {oid for oid in self.short if oid in text}
        by_key = self.by_key
        for i in range(len(text) - _KEY + 1):
            ids = by_key.get(text[i:i + _KEY])
            if ids:
                found.update(oid for oid in ids if text.startswith(oid, i))
        return found


def siblings(object_id: str, index: KindIndex) -> list[Document]:
    fam = _family(object_id)
    if fam is None:
        return []
    return [d for d in index.by_family.get(fam, []) if d.object_id != object_id]


def _referenced(doc: Document, index: KindIndex) -> list[Document]:
    """Revisions of other objects that `doc` names by id (optionally with `.vN`)."""
    text = doc.text
    named = [d for oid in index.objects_in(text) for d in index.by_object[oid]]
    out = []
    for d in sorted(named, key=lambda d: index.position[id(d)]):   # list order, as a scan returns them
        if d.doc_id == doc.doc_id:
            continue
        # (both ways of naming it contain the object id)
        if f"{d.object_id}.v{d.version}" in text or f"{d.object_id}.v" not in text:
            out.append(d)
    return out


def _revision_on(hit: Document, index: KindIndex, day: dt.date | None) -> Document:
    """An explicit link names one revision. When that is a revision of undeclared dbt evidence
    (canon.registry.publication: one chain per node, each later one `revision_of` the first) that
    is not in effect on `day`, the chain's revision in effect then answers: a metric unchanged
    since before the model changed links the model's current revision, not the one of its date."""
    if day is None or hit.in_effect(day) or effective_time_source(hit) != "inferred_from_publication":
        return hit
    slot = hit.metadata.get("revision_of") or hit.doc_id
    chain = [d for d in index.by_object.get(hit.object_id, []) if (d.metadata.get("revision_of") or d.doc_id) == slot]
    return next((d for d in chain if d.in_effect(day)), hit)


def linked(doc: Document, index: KindIndex, day: dt.date | None, *,
           by_id: dict[str, Document]) -> Document | None:
    """The revision of `index.kind` that `doc` links to for `day`, among the
    documents `index` holds; `by_id` (doc_id -> document, the same visible set)
    serves the explicit links dbt-rendered documents carry."""
    kind = index.kind
    explicit = {"model_schema": "model_doc_id", "lineage": "lineage_doc_id"}.get(kind)
    if explicit and doc.metadata.get(explicit):
        hit = by_id.get(doc.metadata[explicit])
        if hit is not None:
            return _revision_on(hit, index, day)
    refs = _referenced(doc, index)
    if refs:
        approved_refs = [d for d in refs if d.status.value == "approved"]
        pool = approved_refs or refs
        return sorted(pool, key=lambda d: (not (day is None or d.in_effect(day)), d.doc_id))[0]
    sib = siblings(doc.object_id, index)
    if sib:
        result = resolve_revision(sib, day if day is not None else doc.valid_from)
        return result.chosen
    return None


def lineage_edges_from_text(doc: Document) -> list[tuple[str, str]]:
    """A lineage document's structured `a -> b` edges."""
    return [(a.rstrip("."), b.rstrip(".")) for a, b in _EDGE.findall(doc.text)]


def raw_sources_from_edges(edges: list[tuple[str, str]]) -> list[str]:
    children = {c for _, c in edges}
    roots = sorted({p for p, _ in edges if p not in children})
    return roots


def observations(doc: Document) -> tuple[dt.datetime | None, list[dict]]:
    """A freshness snapshot's observation time and per-source observations
    (structured front matter, else the sentence form of a Markdown snapshot:
    "Observed at …", "<source> max_loaded_at <ts>, SLA <n> hours")."""
    observed = doc.metadata.get("observed_at")
    m = _OBSERVED_AT.search(doc.text)
    if not observed and m:
        observed = m.group(1)
    observed_at = _ts(observed) if observed else None
    items = doc.metadata.get("observations")
    out = []
    if isinstance(items, list) and items:
        for o in items:
            sla_h = o.get("sla_hours")
            out.append({"source": o["source"], "max_loaded_at": _ts(str(o["max_loaded_at"])),
                        "sla_minutes": None if sla_h is None else round(float(sla_h) * 60)})
    else:
        for om in _OBS_SENTENCE.finditer(doc.text):
            n = float(om.group("n"))
            minutes = n * 60 if om.group("unit").lower().startswith("h") else n
            out.append({"source": om.group("source"), "max_loaded_at": _ts(om.group("ts")), "sla_minutes": round(minutes)})
    return observed_at, out


def _ts(value: str) -> dt.datetime:
    t = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)

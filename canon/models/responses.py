"""The JSON contract of `canon ask`, `resolve`, `lineage` (docs/contracts.md, "`canon ask`"). Binding:
fields may be added, never renamed or dropped."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from canon.models.documents import Document

Action = Literal["answer", "answer_conflict", "clarify", "abstain", "deny", "calculate", "human_review"]
Use = Literal["primary", "supporting", "conflict"]
EffectiveTimeSource = Literal["declared", "inferred_from_publication"]


class Evidence(BaseModel):
    doc_id: str
    object_id: str
    kind: str
    version: str
    status: str
    use: Use
    valid_from: dt.date
    valid_to: dt.date | None
    content_hash: str
    chunk_ids: list[str] = Field(default_factory=list)
    title: str = ""
    # Where valid_from / valid_to come from: "declared" (the document states them) or
    # "inferred_from_publication" (dbt evidence without meta.canon.valid_from: canon.registry.publication).
    effective_time_source: EffectiveTimeSource = "declared"

    @classmethod
    def of(cls, doc: Document, use: Use, chunk_ids: list[str] | None = None) -> "Evidence":
        return cls(
            doc_id=doc.doc_id, object_id=doc.object_id, kind=doc.kind, version=doc.version,
            status=doc.status.value, use=use, valid_from=doc.valid_from, valid_to=doc.valid_to,
            content_hash=doc.content_hash, chunk_ids=list(chunk_ids or []), title=doc.title,
            effective_time_source=effective_time_source(doc),
        )


def effective_time_source(doc: Document) -> EffectiveTimeSource:
    return "inferred_from_publication" if doc.metadata.get("effective_time_source") == "inferred_from_publication" \
        else "declared"


class Claim(BaseModel):
    claim: str
    evidence_id: str
    evidence_revision: str
    supported_span: str
    effective_for: dt.date | None


class Freshness(BaseModel):
    source: str
    max_loaded_at: str
    age_minutes: int
    sla_minutes: int
    fresh: bool
    observed_at: str = ""
    age: str = ""


class LineageEdge(BaseModel):
    parent: str
    child: str


class LineageGraph(BaseModel):
    nodes: list[dict[str, Any]] = Field(default_factory=list)
    edges: list[LineageEdge] = Field(default_factory=list)
    # "upstream": from the object to its raw sources; "downstream": to what is built from it.
    direction: str = "upstream"


class Response(BaseModel):
    action: Action
    question: str = ""
    role: str
    as_of: dt.date | None = None
    answer: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    options: list[dict[str, Any]] = Field(default_factory=list)
    freshness: list[Freshness] = Field(default_factory=list)
    index_revision: str = ""
    policy_revision: str = ""
    answer_id: str = ""
    # Extensions (allowed by the contract: added, never renamed).
    lineage: LineageGraph | None = None
    calculation: dict[str, Any] | None = None
    reason: str = ""
    # A comparison of two revisions (canon/ask/revisions.py, `compare`); absent otherwise.
    comparison: dict[str, Any] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        if data.get("lineage") is None:
            data.pop("lineage", None)
        if data.get("calculation") is None:
            data.pop("calculation", None)
        if data.get("comparison") is None:
            data.pop("comparison", None)
        return data

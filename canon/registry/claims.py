"""Who may publish what: the checks across sources, after each source's own gate.

The documents table holds one row per doc_id whatever its source, and an object's
approved revision decides answers, so a source must not be able to take over what
another source publishes (docs/contracts.md, "Documents", "Source contracts"):

- a doc_id rendered by dbt, or live in the registry from another source system, is not
  admitted from this one (quarantined naming the owner);
- an approved revision is admitted only for an object its contract may publish
  (`owns_objects`) and that no other source owns: dbt owns every object it renders,
  another contract owns what its `owns_objects` matches;
- an id whose skeleton (canon.registry.identity.skeleton) matches a different id the
  registry holds is a clone and is not admitted; when two such ids both arrive new,
  neither is.

Revisions from the gate cache (canon.registry.corpus_cache) are checked from their
registry rows, so a re-run cannot let a colliding file through.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import duckdb

from canon.models.documents import Document
from canon.registry.contracts import Contract
from canon.registry.gate import DUPLICATE_DOC_ID, GateResult, QuarantineEntry
from canon.registry.identity import skeleton

FOREIGN_OBJECT = "approved revision of an object this source may not publish"
CONFUSABLE = "confusable id"
# How every reason of a takeover attempt begins: the registry's blocking check lists them (canon.registry.checks).
TAKEOVER_REASONS = (DUPLICATE_DOC_ID, FOREIGN_OBJECT, CONFUSABLE)


@dataclass(frozen=True)
class Claim:
    """One revision a source asks the registry to hold."""

    doc_id: str
    object_id: str
    approved: bool
    source_uri: str
    content_hash: str


@dataclass
class Others:
    """What the other sources hold: doc_id -> "<system>:<source_uri>", object_id -> owning system,
    their contracts (for `owns_objects`), and the ids already established."""

    doc_ids: dict[str, str] = field(default_factory=dict)
    objects: dict[str, str] = field(default_factory=dict)
    contracts: list[Contract] = field(default_factory=list)
    established: set[str] = field(default_factory=set)


def live_owners(con: duckdb.DuckDBPyConnection, system: str) -> dict[str, str]:
    """doc_id -> the source_uri `system` holds it live from: the owner of the duplicate rule."""
    return dict(con.execute("SELECT doc_id, source_uri FROM documents WHERE source_system = ? AND deleted_at IS NULL",
                            [system]).fetchall())


def others_for(con: duckdb.DuckDBPyConnection, system: str, *, rendered: list[Document] = (),
               contracts: list[Contract] = ()) -> Others:
    """What sources other than `system` hold: their live registry rows plus `rendered`, the
    documents dbt renders in this build (dbt owns their doc_ids and objects)."""
    out = Others(contracts=list(contracts))
    for doc_id, object_id, status, other, uri in con.execute(
            "SELECT doc_id, object_id, status, source_system, source_uri FROM documents WHERE deleted_at IS NULL "
            "AND source_system <> ?", [system]).fetchall():
        out.doc_ids[doc_id] = f"{other}:{uri}"
        out.objects[object_id] = other
    for d in rendered:
        out.doc_ids[d.doc_id] = f"{d.source_system}:{d.source_uri}"
        out.objects[d.object_id] = d.source_system
    out.established.update(out.doc_ids)
    out.established.update(out.objects)
    return out


def _cached_claims(con: duckdb.DuckDBPyConnection, system: str, doc_ids: list[str]) -> list[Claim]:
    if not doc_ids:
        return []
    return [Claim(*r[:2], r[2] == "approved", *r[3:]) for r in con.execute(
        "SELECT doc_id, object_id, status, source_uri, content_hash FROM documents WHERE source_system = ? "
        "AND deleted_at IS NULL AND doc_id IN (SELECT unnest(?))", [system, doc_ids]).fetchall()]


def _kept_ids(con: duckdb.DuckDBPyConnection, system: str, claims: list[Claim]) -> set[str]:
    """This source's live ids that stay after this build: a doc_id claimed again, and its object_id
    when the claim keeps it (a row no longer claimed is soft-deleted, so its ids do not count)."""
    by_id = {c.doc_id: c.object_id for c in claims}
    kept: set[str] = set()
    for doc_id, object_id in con.execute("SELECT doc_id, object_id FROM documents WHERE source_system = ? "
                                         "AND deleted_at IS NULL", [system]).fetchall():
        if doc_id in by_id:
            kept.add(doc_id)
            if by_id[doc_id] == object_id:
                kept.add(object_id)
    return kept


def _object_problem(c: Claim, contract: Contract, others: Others) -> str | None:
    if not c.approved:
        return None
    owner = others.objects.get(c.object_id)
    if owner is not None and owner != contract.source.system:
        return f"{FOREIGN_OBJECT}: object_id {c.object_id!r} is governed by source {owner!r}"
    for other in others.contracts:
        if other.contract != contract.contract and other.owns(c.object_id):
            return f"{FOREIGN_OBJECT}: object_id {c.object_id!r} is owned by contract {other.label} (owns_objects)"
    if not contract.may_publish(c.object_id):
        return (f"{FOREIGN_OBJECT}: object_id {c.object_id!r} matches none of contract {contract.label}'s "
                f"owns_objects")
    return None


def screen(con: duckdb.DuckDBPyConnection, result: GateResult, contract: Contract, others: Others, *,
           yields: bool = True, now: dt.datetime) -> tuple[GateResult, set[str]]:
    """`result` without the claims other sources own (see the module doc), and the source_uris
    quarantined here. `yields` False: this source's doc_ids and objects win over the others'
    (dbt owns what it renders); only its own `owns_objects` and clones are checked."""
    system = contract.source.system
    claims = [Claim(d.doc_id, d.object_id, d.is_authoritative, d.source_uri, d.content_hash)
              for d in result.documents]
    claims += _cached_claims(con, system, result.unchanged)
    established = others.established | _kept_ids(con, system, claims)
    index: dict[str, set[str]] = {}
    for value in established | {x for c in claims for x in (c.doc_id, c.object_id)}:
        index.setdefault(skeleton(value), set()).add(value)

    refused: dict[str, list[str]] = {}
    for c in claims:
        reasons = []
        if yields and c.doc_id in others.doc_ids:
            reasons.append(f"{DUPLICATE_DOC_ID} {c.doc_id!r}: it belongs to {others.doc_ids[c.doc_id]}, "
                           f"another source")
        problem = _object_problem(c, contract, others) if yields else (
            None if not c.approved or contract.may_publish(c.object_id) else
            f"{FOREIGN_OBJECT}: object_id {c.object_id!r} matches none of contract {contract.label}'s owns_objects")
        if problem:
            reasons.append(problem)
        for what, value in (("doc_id", c.doc_id), ("object_id", c.object_id)):
            clones = sorted(index[skeleton(value)] - {value})
            if clones and value not in established:
                reasons.append(f"{CONFUSABLE}: {what} {value!r} differs from {clones[0]!r} only by look-alike "
                               f"characters or case")
        if reasons:
            refused[c.doc_id] = reasons
    if not refused:
        return result, set()
    by_id = {c.doc_id: c for c in claims}
    quarantine = list(result.quarantine) + [
        QuarantineEntry(by_id[i].source_uri, i, reasons, by_id[i].content_hash, now, contract.label, system)
        for i, reasons in refused.items()]
    kept = GateResult([d for d in result.documents if d.doc_id not in refused], quarantine, result.contract,
                      result.collapsed, [i for i in result.unchanged if i not in refused])
    return kept, {by_id[i].source_uri for i in refused}

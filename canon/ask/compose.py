"""Presentation for `canon ask`: the answer text, claims and evidence entries
built from evidence the pipeline (canon/ask/pipeline.py) has already selected
and authorized. Nothing here chooses or reads evidence beyond the sentences it
cites; the same inputs always give the same text."""

import datetime as dt

from canon.ask.resolve import claims_of, sentences
from canon.models.documents import Document
from canon.models.responses import Claim, Evidence, Response, effective_time_source
from canon.registry.temporal import period_label


def effective_note(doc: Document) -> str:
    """How an answer says its revision's business time was not declared but inferred (canon.registry.publication)."""
    if effective_time_source(doc) != "inferred_from_publication":
        return ""
    return ("; effective time inferred from dbt artifact publication (valid from when a manifest first carried "
            "this definition), not declared")


def definition_text(doc: Document, day: dt.date | None) -> str:
    when = f"For the {day.strftime('%B')} {day.day}, {day.year} reporting date, the" if day else "The"
    return (f"{when} applicable governed revision is {doc.title} ({doc.doc_id}, version {doc.version}, "
            f"{doc.status.value}, {period_label(doc)}{effective_note(doc)}). {doc.text}")


def graph_answer(intent: str, primary: Document, model: Document | None, lineage_doc: Document | None,
                 sources: list[str], shown_ids: set[str], evidence: list[Evidence], claims: list[Claim],
                 day: dt.date | None) -> tuple[str, list[Evidence], list[Claim]]:
    """Model and lineage answers from the followed graph: metric revision → model
    version → lineage. `sources` are the raw sources, from the dbt graph or else
    from the lineage document's edges."""
    parts = []
    if intent == "model" and model is not None and model.doc_id in shown_ids:
        evidence = [Evidence.of(model, "primary"), Evidence.of(primary, "supporting")]
        claims = claims_of(model, day) + claims[:2]
        when = f"For {day.isoformat()}, the" if day else "The"
        return (f"{when} supporting model of {primary.doc_id} is {model.title} ({model.doc_id}, {period_label(model)}"
                f"{effective_note(model)}). {model.text}" if effective_note(model) else
                f"{when} supporting model of {primary.doc_id} is {model.title} ({model.doc_id}). {model.text}",
                evidence, claims)
    if model is not None:
        evidence.append(Evidence.of(model, "supporting"))
        claims += claims_of(model, day, limit=2)
        parts.append(f"The definition is supported by {model.doc_id} ({model.title}).")
    if lineage_doc is not None:
        evidence.append(Evidence.of(lineage_doc, "supporting"))
    if sources:
        src_doc = lineage_doc or primary
        parts.append("Its lineage traces to " + ", ".join(sources) + ".")
        claims += [Claim(claim=f"{primary.doc_id} depends on raw source {s}", evidence_id=src_doc.doc_id,
                         evidence_revision=src_doc.content_hash,
                         supported_span=next((x for x in sentences(src_doc.text) if s in x), s), effective_for=day)
                   for s in sources]
    answer = definition_text(primary, day) + " " + " ".join(parts) + " Evidence: " + ", ".join(
        e.doc_id for e in evidence) + "."
    return answer, evidence, claims


def conflict_answer(primary: Document, conflicts: list[Document], answer: str, evidence: list[Evidence],
                    claims: list[Claim], day: dt.date | None, role: str) -> Response:
    """The governing answer beside the sources the user named that say otherwise,
    each cited as conflict evidence and named as not governing."""
    for c in conflicts:
        evidence.append(Evidence.of(c, "conflict"))
        claims.append(Claim(claim=f"{c.doc_id} is {c.status.value} {c.kind.replace('_', ' ')} (authority {c.authority}), "
                                  f"not the governing {primary.kind.replace('_', ' ')}",
                            evidence_id=c.doc_id, evidence_revision=c.content_hash,
                            supported_span=sentences(c.text)[0] if c.text else "", effective_for=day))
    named = ", ".join(f"{c.title} ({c.doc_id}, {c.status.value}, {c.kind.replace('_', ' ')})" for c in conflicts)
    # No verdict on the claim itself ("No — …"): the source may say what the governing revision
    # says (an approved runbook often does). What is certain is which text governs.
    verb = "is" if len(conflicts) == 1 else "are"
    answer = (f"{named} {verb} not the governing definition" + (f" for {day.isoformat()}" if day else "") +
              f"; compare what it says with the governing evidence, {primary.doc_id} ({primary.status.value}, "
              f"{period_label(primary)}): " + answer)
    return Response(action="answer_conflict", role=role, as_of=day, answer=answer, evidence=evidence, claims=claims)


def metadata_answer(doc: Document, intents: set[str], day: dt.date | None,
                    definition_claims: list[Claim] = ()) -> tuple[str, list[Claim]] | None:
    """"Who owns …" and "is … deprecated" from the governing revision's metadata (dbt-derived
    documents carry `owner` and `deprecation_date`, canon/sources/dbt/defaults.py); None when
    the question asks neither, and the definition answers. What is asked and not recorded is said
    to be unrecorded."""
    facts: list[tuple[str, str]] = []   # (claim, the sentence or metadata entry that supports it)
    if "owner" in intents and doc.metadata.get("owner"):
        owner = str(doc.metadata["owner"])
        facts.append((f"{doc.doc_id} is owned by {owner}", _span(doc, "Owner:", f"owner: {owner}")))
    if "deprecation" in intents and doc.metadata.get("deprecation_date"):
        when = dt.date.fromisoformat(str(doc.metadata["deprecation_date"])[:10])
        said = ("was deprecated on" if day is not None and day >= when else "is scheduled for deprecation on"
                if day is not None else "has the deprecation date")
        facts.append((f"{doc.doc_id} {said} {when.isoformat()}",
                      _span(doc, "Deprecation date:", f"deprecation_date: {when.isoformat()}")))
    # What was asked and is not recorded is said so: the definition alone would leave the reader
    # to find that it names no owner. dbt nodes record an owner as their group's or meta.owner.
    where = " in dbt (no group owner, no meta.owner)" if doc.metadata.get("derived_from_dbt") else ""
    unknown = ([f"No owner is recorded for {doc.doc_id}{where}"]
               if "owner" in intents and not doc.metadata.get("owner") else [])
    unknown += ([f"No deprecation date is recorded for {doc.doc_id}"]
                if "deprecation" in intents and not doc.metadata.get("deprecation_date") else [])
    if not facts and not unknown:
        return None
    head = f"For {day.isoformat()}, the" if day else "The"
    answer = (f"{head} applicable governed revision is {doc.title} ({doc.doc_id}, version {doc.version}, "
              f"{doc.status.value}, {period_label(doc)}). " + " ".join(f"{c}." for c in [c for c, _ in facts] + unknown))
    if not facts:
        # Nothing recorded: the definition is still what the revision says (and what is shown when
        # "owner" was a word of the question's description, "tickets whose owner changed").
        answer += f" {doc.text}"
    claims = [Claim(claim=c, evidence_id=doc.doc_id, evidence_revision=doc.content_hash, supported_span=span,
                    effective_for=day) for c, span in facts]
    # Nothing recorded to claim: the definition's claims stay what the answer cites.
    return answer, claims or list(definition_claims)


def _span(doc: Document, prefix: str, fallback: str) -> str:
    """The sentence of the text that states the fact, else the metadata entry it comes from."""
    return next((s for s in sentences(doc.text) if s.startswith(prefix)), fallback)

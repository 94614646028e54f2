"""Entity-aligned chunking.

The rule: chunk along analytical entities, not arbitrary token
windows. A metric definition keeps formula, grain, version, status and
effective dates together, so governed entity kinds become ONE chunk (the
whole text) unless the text is huge. Prose (wiki, runbook, memo, notes, any
other kind) is split at Markdown headings, then by size with an overlap that
starts and ends on sentence or whitespace boundaries.

Identity (docs/design.md, "Identity"):

    doc_version = ids.doc_version(doc_id, text bytes)
    chunk_id    = ids.chunk_id(doc_version, chunker, span_start, span_end)

so a chunk id changes when the document id, the text or the chunk position
changes, or when the chunker (the algorithm name) changes; size parameters
change ids only through the positions they produce.

Why `embed_text` and `header` differ
------------------------------------
Governing metadata (status, valid dates, allowed roles, authority) can change
without the text changing: an ACL revocation, a draft being approved, a
`valid_to` being set when a successor arrives. Those are *metadata-only*
changes and must keep chunk ids and vectors (no re-embedding). Therefore
`embed_text` — the only thing that reaches the embedding model — holds only
parts that are fixed for a revision: object id, kind, title, version, the
section heading and the body. Status, dates and roles travel as row
attributes, and in `header`, which is recomputed on every publish and is
prepended to the indexed/displayed `text`. That way "VAT is excluded" is never
shown or full-text-matched without "draft, version 3-draft, valid from
2026-10-01", while the vector stays reusable across metadata changes.
(If a "revision-stable" field such as the title does change, the index notices
through the hash of `embed_text` and re-embeds; it never serves a vector of
stale input.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from canon.core import ids
from canon.models.documents import Document

DEFAULT_CHUNKER = "entity-aligned-v1"

# Kinds whose whole text is one governed entity.
ENTITY_KINDS = frozenset({"metric_definition", "model_schema", "lineage", "freshness_snapshot", "policy"})

# An entity text longer than this many times `max_chars` is "huge" and falls
# back to prose splitting (a single chunk would be truncated by the embedder).
HUGE_FACTOR = 4

_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
# A sentence ends with . ! ? (optionally closed by a quote/bracket) before whitespace.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?(?=\s)|\n\s*\n|\n")


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    doc_version: str
    object_id: str
    chunker: str
    span_start: int
    span_end: int
    body: str          # doc.text[span_start:span_end], exactly
    embed_text: str    # revision-stable text that is embedded
    header: str        # governing metadata, recomputed on every publish
    section: str = ""  # the Markdown heading this chunk falls under, if any

    @property
    def text(self) -> str:
        """What is indexed for full-text search and shown: header + body."""
        return f"{self.header}\n{self.body}"


def document_version(doc: Document) -> str:
    return ids.doc_version(doc.doc_id, doc.text.encode("utf-8"))


def metadata_header(doc: Document) -> str:
    """The governing metadata of a document in one line (display + FTS)."""
    status = doc.status.value if hasattr(doc.status, "value") else str(doc.status)
    valid_to = doc.valid_to.isoformat() if doc.valid_to else "open"
    return (
        f"[{doc.object_id} | {doc.kind} | version {doc.version} | status {status} | "
        f"valid {doc.valid_from.isoformat()} to {valid_to}] {doc.title}"
    )


def embed_text_for(doc: Document, body: str, section: str = "") -> str:
    """Revision-stable input to the embedding model (no status/dates/roles)."""
    lines = [f"{doc.title} ({doc.kind} {doc.object_id}, version {doc.version})"]
    if section and not body.lstrip().startswith(section):
        lines.append(section)
    lines.append(body)
    return "\n".join(lines)


def chunk_document(
    doc: Document,
    *,
    chunker: str = DEFAULT_CHUNKER,
    max_chars: int = 1000,
    overlap: int = 150,
) -> list[Chunk]:
    if max_chars < 50:
        raise ValueError(f"max_chars must be >= 50, got {max_chars}")
    if not 0 <= overlap < max_chars // 2:
        raise ValueError(f"overlap must be in [0, max_chars/2), got {overlap}")
    text = doc.text
    if doc.kind in ENTITY_KINDS and len(text) <= HUGE_FACTOR * max_chars:
        spans = [(_strip_span(text, 0, len(text)), "")]
    else:
        spans = []
        for s_start, s_end, heading in _sections(text):
            for a, b in _windows(text, s_start, s_end, max_chars, overlap):
                spans.append(((a, b), heading))
    ver = document_version(doc)
    header = metadata_header(doc)
    out: list[Chunk] = []
    for (a, b), heading in spans:
        if b <= a:
            continue
        body = text[a:b]
        out.append(Chunk(
            chunk_id=ids.chunk_id(ver, chunker, a, b),
            doc_id=doc.doc_id,
            doc_version=ver,
            object_id=doc.object_id,
            chunker=chunker,
            span_start=a,
            span_end=b,
            body=body,
            embed_text=embed_text_for(doc, body, heading),
            header=header,
            section=heading,
        ))
    return out


# ---------------------------------------------------------------- internals

def _strip_span(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    """Code fences: a '#' line inside one is not a heading."""
    marks = [m.start() for m in _FENCE.finditer(text)]
    return [(marks[i], marks[i + 1]) for i in range(0, len(marks) - 1, 2)]


def _sections(text: str) -> list[tuple[int, int, str]]:
    """(start, end, heading line) per Markdown section. A heading directly
    followed by another heading (no body) is merged into the next section so
    no chunk is a bare title."""
    fences = _fenced_ranges(text)
    starts = [
        m.start() for m in _HEADING.finditer(text)
        if not any(a < m.start() < b for a, b in fences)
    ]
    bounds = sorted({0, *starts})
    raw = []
    for i, a in enumerate(bounds):
        b = bounds[i + 1] if i + 1 < len(bounds) else len(text)
        line_end = text.find("\n", a)
        line_end = b if line_end == -1 or line_end > b else line_end
        heading = text[a:line_end].strip() if a in starts else ""
        body_only = text[line_end:b].strip() if a in starts else text[a:b].strip()
        raw.append([a, b, heading, bool(body_only)])
    merged: list[tuple[int, int, str]] = []
    pending_start: int | None = None
    for a, b, heading, has_body in raw:
        if not text[a:b].strip():
            continue
        if heading and not has_body:
            pending_start = a if pending_start is None else pending_start
            continue
        start = pending_start if pending_start is not None else a
        pending_start = None
        merged.append((start, b, heading))
    if pending_start is not None:
        if merged:
            a, _, hd = merged[-1]
            merged[-1] = (a, len(text), hd)
        else:
            merged.append((pending_start, len(text), ""))
    return merged


def _cut_point(text: str, lo: int, hi: int) -> int:
    """The best place to end a window in text[lo:hi]: the last sentence end,
    else the last whitespace, else a hard cut at hi."""
    best = -1
    for m in _SENTENCE_END.finditer(text, lo, hi):
        best = m.end()
    if best > lo:
        return best
    ws = max(text.rfind(" ", lo, hi), text.rfind("\n", lo, hi), text.rfind("\t", lo, hi))
    return ws if ws > lo else hi


def _start_point(text: str, lo: int, hi: int) -> int:
    """Where an overlapping window starts: the first sentence start in
    text[lo:hi], else the first word start, else lo."""
    m = _SENTENCE_END.search(text, lo, hi)
    if m:
        p = m.end()
        while p < hi and text[p].isspace():
            p += 1
        if p < hi:
            return p
    for p in range(lo, hi):
        if text[p].isspace():
            while p < hi and text[p].isspace():
                p += 1
            return p if p < hi else lo
    return lo


def _windows(text: str, start: int, end: int, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    start, end = _strip_span(text, start, end)
    if end - start <= max_chars:
        return [(start, end)] if end > start else []
    out: list[tuple[int, int]] = []
    a = start
    while a < end:
        if end - a <= max_chars:
            out.append(_strip_span(text, a, end))
            break
        # End in the second half of the window so windows stay reasonably full.
        b = _cut_point(text, a + max_chars // 2, a + max_chars)
        out.append(_strip_span(text, a, b))
        # Next window begins `overlap` characters back, on a boundary.
        nxt = _start_point(text, max(a + 1, b - overlap), b) if overlap else b
        a = nxt if nxt > a else b
        while a < end and text[a].isspace():
            a += 1
    return [(x, y) for x, y in out if y > x]

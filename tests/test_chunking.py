"""Entity-aligned chunking: spans, headings, overlap and content-derived ids."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.core import ids
from canon.index.chunking import chunk_document, metadata_header
from canon.models.documents import Document

METRIC_TEXT = (
    "Governed metric net revenue version 2. Effective 2026-07-01, net revenue equals gross order-line "
    "amount minus item discounts minus refunds minus issued credit notes. VAT and shipping are excluded. "
    "Orders are recognized on settlement_date; refunds on refund_date; credit notes on issue_date."
)


def mk(doc_id: str, text: str, **kw) -> Document:
    base = dict(
        doc_id=doc_id, object_id=kw.pop("object_id", f"obj.{doc_id}"), kind="wiki", title=f"Title {doc_id}",
        status="approved", authority=80, version="1", valid_from=dt.date(2026, 1, 1), valid_to=None,
        allowed_roles=["analyst"], text=text,
    )
    base.update(kw)
    return Document(**base)


def sentences(n: int, prefix: str = "Sentence") -> str:
    return " ".join(f"{prefix} number {i} explains one more detail of the revenue rules." for i in range(n))


def test_metric_definition_is_one_chunk_covering_the_whole_text():
    doc = mk("metric.net_revenue.v2", METRIC_TEXT, kind="metric_definition", version="2")
    chunks = chunk_document(doc)
    assert len(chunks) == 1
    c = chunks[0]
    assert (c.span_start, c.span_end) == (0, len(METRIC_TEXT))
    assert c.body == METRIC_TEXT
    assert c.doc_version == ids.doc_version(doc.doc_id, METRIC_TEXT.encode())
    assert c.chunk_id == ids.chunk_id(c.doc_version, "entity-aligned-v1", 0, len(METRIC_TEXT))


def test_entity_kinds_stay_whole_even_when_longer_than_max_chars_unless_huge():
    text = sentences(30)  # ~1900 chars
    doc = mk("model.x", text, kind="model_schema")
    assert len(chunk_document(doc, max_chars=1000)) == 1
    # "huge": more than 4 x max_chars falls back to size splitting
    assert len(chunk_document(doc, max_chars=300, overlap=50)) > 1


def test_prose_splits_at_markdown_headings():
    text = (
        "Intro paragraph before any heading.\n\n"
        "# Net revenue\nNet revenue excludes VAT.\n\n"
        "## Refunds\nRefunds are recognized on refund_date.\n\n"
        "## Currency\nUSD at transaction-date FX.\n"
    )
    doc = mk("wiki.rev", text)
    chunks = chunk_document(doc)
    assert [c.body.splitlines()[0] for c in chunks] == [
        "Intro paragraph before any heading.", "# Net revenue", "## Refunds", "## Currency"]
    for c in chunks:
        assert text[c.span_start:c.span_end] == c.body
    assert chunks[2].section == "## Refunds"


def test_heading_only_section_merges_into_next_and_fenced_hash_is_not_a_heading():
    text = (
        "# Runbook\n## Step 1\nRestart the loader.\n\n"
        "```bash\n# not a heading, a shell comment\nmake run\n```\n"
    )
    chunks = chunk_document(mk("runbook.r", text, kind="runbook"))
    assert len(chunks) == 1
    assert chunks[0].body.startswith("# Runbook\n## Step 1")
    assert "# not a heading" in chunks[0].body


def test_long_section_splits_by_size_with_overlap_on_boundaries():
    text = "# Long\n" + sentences(60)
    doc = mk("wiki.long", text)
    chunks = chunk_document(doc, max_chars=400, overlap=80)
    assert len(chunks) > 3
    for c in chunks:
        assert c.span_end - c.span_start <= 400
        assert text[c.span_start:c.span_end] == c.body
        assert not c.body[0].isspace() and not c.body[-1].isspace()
        # starts at a word boundary, ends at a sentence end or before whitespace
        assert c.span_start == 0 or text[c.span_start - 1].isspace()
        assert c.span_end == len(text) or text[c.span_end].isspace()
    for a, b in zip(chunks, chunks[1:]):
        assert b.span_start < a.span_end, "consecutive windows must overlap"
        assert a.span_end - b.span_start <= 80 + 1
        assert b.span_start > a.span_start
    # nothing lost: every non-space character is in some chunk
    covered = set()
    for c in chunks:
        covered.update(range(c.span_start, c.span_end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    # later windows still carry their section heading into the embedded text
    assert "# Long" in chunks[-1].embed_text and not chunks[-1].body.startswith("# Long")


def test_ids_stable_across_metadata_only_change():
    doc = mk("metric.v3", METRIC_TEXT, kind="metric_definition", status="draft", version="3-draft")
    changed = doc.model_copy(update={
        "status": "approved", "allowed_roles": ("analyst", "finance_controller"),
        "valid_to": dt.date(2027, 1, 1), "authority": 100})
    a, b = chunk_document(doc), chunk_document(changed)
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b]
    assert [c.embed_text for c in a] == [c.embed_text for c in b]
    # ... while the governing header (display + FTS) follows the metadata
    assert "status draft" in a[0].header and "status approved" in b[0].header
    assert "2027-01-01" in b[0].header and "open" in a[0].header
    assert a[0].text.startswith(a[0].header) and a[0].text.endswith(a[0].body)
    assert "status" not in a[0].embed_text


def test_header_keeps_draft_and_version_next_to_the_body():
    doc = mk("metric.v3", "VAT is excluded.", kind="metric_definition", status="draft", version="3")
    c = chunk_document(doc)[0]
    assert "VAT is excluded." in c.text and "status draft" in c.text and "version 3" in c.text
    assert c.header == metadata_header(doc)


def test_ids_change_when_text_or_chunker_changes():
    doc = mk("wiki.a", "# A\nOne.\n\n# B\nTwo.\n")
    base = {c.chunk_id for c in chunk_document(doc)}
    edited = doc.model_copy(update={"text": "# A\nOne!\n\n# B\nTwo.\n"})
    assert base.isdisjoint({c.chunk_id for c in chunk_document(edited)})
    assert base.isdisjoint({c.chunk_id for c in chunk_document(doc, chunker="entity-aligned-v2")})
    # same doc, same config: identical ids (re-running is a no-op)
    assert base == {c.chunk_id for c in chunk_document(doc)}


def test_bad_parameters_are_refused():
    doc = mk("wiki.a", "text")
    with pytest.raises(ValueError):
        chunk_document(doc, max_chars=10)
    with pytest.raises(ValueError):
        chunk_document(doc, max_chars=200, overlap=150)

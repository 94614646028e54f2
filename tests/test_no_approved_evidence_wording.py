"""The abstention when no governed object is near the top of retrieval says what it found
without contradicting itself. "show the 07:00 UTC grid raw loads snapshot for 2026-11-16" (a grid
probe) abstained with "Only approved, observed text matches the question; none of it is
approved": an approved lineage note was among the matches, which governs nothing. With approved
text among them the answer says no approved *governed object* is among the closest matches
(canon/ask/pipeline.py `_discover`). Likewise "How is crossing punctuality defined?", naming only an
approved lineage note, was told "the document you name is approved text, not an authoritative
source": it now says what the document is (`_what_they_are`).

A ferry operator's documents, no gold set's domain, through the real pipeline."""

from __future__ import annotations

from corpus_context import governed_doc, module_context, snapshot_doc

from canon.ask.pipeline import ask

DOCS = [
    {**governed_doc("lineage.ferry.crossing_punctuality.v1", "lineage.ferry.crossing_punctuality",
                    "Lineage for crossing punctuality v1",
                    "Lineage: raw.pier.gate_scans -> stg.pier.gate_scans -> model.ferry.fct_crossings.", kind="lineage",
                    authority=95)},
    snapshot_doc("freshness.ferry.2026-11-16T0700Z", "freshness.ferry.pier_loads",
                 "Pier raw loads freshness snapshot 2026-11-16 07:00 UTC", "2026-11-16T07:00:00Z",
                 "raw.pier.gate_scans max_loaded_at 2026-11-16T06:58:00Z, SLA 15 minutes.", valid_to="2026-11-17"),
]

ctx = module_context("ferry", DOCS)


def test_approved_text_that_governs_nothing_is_not_called_unapproved(ctx):
    resp = ask(ctx, "How are gate scans defined?", "analyst")
    assert resp.action == "abstain" and resp.reason == "no_approved_evidence", (resp.action, resp.reason)
    assert "approved" in resp.answer and "none of it is approved" not in resp.answer, resp.answer
    assert "No approved governed object is among the closest matches" in resp.answer, resp.answer


def test_an_approved_document_named_says_what_kind_it_is(ctx):
    resp = ask(ctx, "How is crossing punctuality defined?", "analyst")
    assert resp.action == "abstain" and resp.reason == "not_authoritative", (resp.action, resp.reason)
    assert "approved lineage text, not an authoritative source" in resp.answer, resp.answer

"""Compound words written apart or together are read in the catalog's spelling
(canon/ask/understanding/compounds.py): "head count" is the name word "headcount",
"watchtime" the words "watch time"; ordinary words are left alone."""

from __future__ import annotations

import pytest

from canon.ask.understanding.compounds import catalog_words, rewrite
from canon.ask.understanding.match import object_catalog
from canon.models.documents import Document

WORDS = {"headcount", "watch", "time", "hire", "total", "checkout", "signup", "rate", "delivery", "outage"}


def known(words):
    return WORDS & set(words)


@pytest.mark.parametrize("question, expected", [
    ("How is head count defined?", "How is headcount defined?"),
    ("What does head-count include?", "What does headcount include?"),
    ("What counts toward watchtime?", "What counts toward watch time?"),
    ("What is the timetohire metric?", "What is the time to hire metric?"),   # a stop word between the parts
    ("What is the sign-up rate?", "What is the signup rate?"),
    ("deliveryrate for 2026-09-30", "delivery rate for 2026-09-30"),
    # Left alone: a word the catalog has, one part only a name word, short words, ids.
    ("How is headcount defined?", "How is headcount defined?"),
    ("How is overtime defined?", "How is overtime defined?"),
    ("Is it on time?", "Is it on time?"),
    ("Which fct_tickets columns?", "Which fct_tickets columns?"),
    ("What is the outage rate?", "What is the outage rate?"),
])
def test_rewrite(question, expected):
    assert rewrite(question, known) == expected


def test_catalog_words_are_the_core_words_of_every_name():
    doc = Document(doc_id="metric.headcount.v1", object_id="metric.people.headcount", kind="metric_definition",
                   title="Headcount governed definition v1", status="approved", authority=100, version="1",
                   valid_from="2025-01-01", allowed_roles=["analyst"], content_hash="sha256:x",
                   metadata={"aliases": ["total heads"]}, text="Governed metric headcount version 1.")
    words = catalog_words(object_catalog([doc]))
    assert {"headcount", "total", "heads"} <= words and "the" not in words

"""The evaluation's leak count (canon/evaluation/metrics.py, `leaks_of`) counts what only a
document the role may not read writes.

Two revisions of one metric open with the same words ("Governed metric voluntary attrition rate
version …"); an analyst reads v1 and not v2. v1's own text in an answer was counted as a leak of
v2, so a correct, permitted answer failed its case and the release gate's zero-leak rule."""

from __future__ import annotations

import datetime as dt

from canon.evaluation.metrics import leaks_of
from canon.models.documents import Document


def _doc(doc_id: str, title: str, text: str, roles: tuple[str, ...]) -> Document:
    return Document(doc_id=doc_id, object_id="metric.kennel.occupancy", kind="metric_definition", title=title,
                    status="approved", authority=100, version=doc_id[-1], valid_from=dt.date(2025, 1, 1),
                    allowed_roles=roles, text=text)


V1 = _doc("kennel.occupancy.v1", "Kennel occupancy governed definition v1",
          "Governed metric kennel occupancy version 1. Nights booked over nights available.", ("analyst",))
V2 = _doc("kennel.occupancy.v2", "Kennel occupancy governed definition v2",
          "Governed metric kennel occupancy version 2. Nights booked over nights available, quarantine "
          "pens left out of both, as the board's confidential review set.", ("manager",))


def test_words_a_visible_document_writes_leak_nothing():
    shown = f'{{"answer": "{V1.text}", "evidence": ["{V1.doc_id}"]}}'
    assert "Governed metric kennel occupancy versio" in V2.text and V2.text[:40] in shown
    assert leaks_of(shown, [V2], [V1]) == []
    # Without the visible document to say whose words they are, the shared opening is counted.
    assert leaks_of(shown, [V2]) == [V2.doc_id]


def test_what_only_the_invisible_document_writes_is_a_leak():
    for shown in (V2.doc_id, V2.title, V2.text[80:120]):
        assert leaks_of(f'{{"answer": "{shown}"}}', [V2], [V1]) == [V2.doc_id], shown

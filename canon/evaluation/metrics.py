"""What one answered case scores: recall of the gold documents, leaks, per-action accuracy."""

from __future__ import annotations

from canon.models.documents import Document


def top_docs(hits, n: int = 3) -> list[str]:
    out: list[str] = []
    for h in hits:
        if h.doc_id not in out:
            out.append(h.doc_id)
    return out[:n]


def recall(found: list[str], gold: list[str]) -> float:
    return len(set(found[:3]) & set(gold)) / len(gold) if gold else 1.0


def leaks_of(resp_json: str, invisible: list[Document], visible: list[Document] = ()) -> list[str]:
    """The invisible documents whose id, title or one of the 40-character slices of their text's
    opening the response holds. A slice or a title a `visible` document writes as well is the
    visible one's to show ("Governed metric voluntary attrition rate" opens v1, which the role
    reads, and the restricted v2): no leak of the other."""
    seen = [v.text for v in visible] + [v.title for v in visible]
    found = []
    for d in invisible:
        probes = [d.doc_id, d.title] + [d.text[i:i + 40] for i in range(0, min(len(d.text), 200), 40) if len(d.text[i:i + 40]) >= 20]
        if any(p and p in resp_json and not any(p in s for s in seen) for p in probes):
            found.append(d.doc_id)
    return found


def accuracy(per_action: dict, action: str) -> float | None:
    hit, n = per_action.get(action, [0, 0])
    return round(hit / n, 4) if n else None

"""Coverage of a candidate index: every live chunk of the served revision has
an embedding in the candidate, the same chunk or, after a chunker change,
chunks of the same document version whose spans cover its text."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from canon.index import lance


@dataclass
class Coverage:
    live_chunks: int
    candidate_chunks: int
    same_chunk: int             # the live chunk id is in the candidate
    rechunked: int              # covered by candidate chunks of the same document version
    missing: list[str]          # live chunk ids with no embedding in the candidate
    missing_documents: list[str]
    lineage_mismatch: int       # candidate rows vs its embedding lineage
    forgotten_present: list[str]

    @property
    def complete(self) -> bool:
        return (not self.missing and not self.forgotten_present and self.lineage_mismatch == 0
                and (self.candidate_chunks > 0 or self.live_chunks == 0))

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete, "covered": self.same_chunk + self.rechunked}

def _rows(lancedb_dir: Path, table: str, version: int, cols: list[str]) -> list[dict[str, Any]]:
    tbl = lance.connect(lancedb_dir).open_table(table)
    tbl.checkout(int(version))
    return tbl.search().select(cols).limit(None).to_arrow().to_pylist()

def coverage(lancedb_dir: Path, served: dict[str, Any], cand_table: str, cand_version: int,
             cand_lineage_ids: set[str], forgotten: set[str]) -> Coverage:
    """Every live chunk of `served` must have an embedding in the candidate."""
    live = _rows(lancedb_dir, served["lance_table"], served["lance_version"],
                 ["chunk_id", "doc_id", "doc_version", "span_start", "span_end", "body"])
    cand = _rows(lancedb_dir, cand_table, cand_version, ["chunk_id", "doc_id", "doc_version", "span_start", "span_end"])
    cand_ids = {r["chunk_id"] for r in cand}
    spans: dict[str, list[tuple[int, int]]] = {}
    for r in cand:
        spans.setdefault(r["doc_version"], []).append((r["span_start"], r["span_end"]))
    same = rechunked = 0
    missing: list[str] = []
    missing_docs: set[str] = set()
    for r in live:
        if r["chunk_id"] in cand_ids:
            same += 1
            continue
        a, b, body = r["span_start"], r["span_end"], r["body"] or ""
        covered = [False] * (b - a)
        for s, e in spans.get(r["doc_version"], []):
            for i in range(max(s, a), min(e, b)):
                covered[i - a] = True
        # Characters no candidate chunk holds must be whitespace (chunk edges are trimmed).
        if spans.get(r["doc_version"]) and all(c or body[i:i + 1].isspace() for i, c in enumerate(covered)):
            rechunked += 1
        else:
            missing.append(r["chunk_id"])
            missing_docs.add(r["doc_id"])
    return Coverage(
        live_chunks=len(live), candidate_chunks=len(cand), same_chunk=same, rechunked=rechunked,
        missing=sorted(missing), missing_documents=sorted(missing_docs),
        lineage_mismatch=len(cand_ids ^ cand_lineage_ids),
        forgotten_present=sorted({r["doc_id"] for r in cand} & forgotten))

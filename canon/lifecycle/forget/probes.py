"""What a deletion's verification searches for: distinctive phrases and
tokens of the forgotten text, the sentences to scrub from copies, and the
deleted rows' own vectors (docs/design.md, "Deletion that provably
propagates")."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import duckdb
import pyarrow as pa

from canon.ask.resolve import sentences
from canon.core.db import has_table, sql_list, sql_literal
from canon.index import lance

_WORD_RUN = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*")

_TOKEN = re.compile(r"[a-z0-9]{6,}")

@dataclass
class Probes:
    """What verification searches for. Held in memory and in the in-flight
    file only; the deletions row keeps `sha256()` of each phrase."""

    phrases: list[str] = field(default_factory=list)     # distinctive, verbatim, ASCII words + spaces
    tokens: list[str] = field(default_factory=list)      # distinctive single words (FTS, LanceDB files)
    needles: list[str] = field(default_factory=list)     # sentences + title, for scrubbing copies
    # LanceDB table -> the deleted rows' own vectors: searching with them would
    # return the rows first (distance 0) if any were still reachable.
    vectors: dict[str, list[list[float]]] = field(default_factory=dict)

    def hashes(self) -> list[str]:
        return [hashlib.sha256(p.encode()).hexdigest() for p in self.phrases]

    def label(self, i: int) -> str:
        return f"phrase#{i + 1} sha256:{self.hashes()[i][:12]}"

def _windows(text: str, k: int) -> Iterator[str]:
    for m in _WORD_RUN.finditer(text):
        words = m.group().split(" ")
        for i in range(len(words) - k + 1):
            yield " ".join(words[i:i + k])

def distinctive_phrases(text: str, others: str, *, limit: int = 3, min_chars: int = 20) -> list[str]:
    """Up to `limit` verbatim word runs of `text` that occur in no other
    document (`others`: every other text, lower-cased, joined), spread over
    the text. Verbatim ASCII so they match byte-for-byte in files and JSON."""
    for k in (6, 5, 4, 3):
        cands = list(dict.fromkeys(w for w in _windows(text, k)
                                   if len(w) >= min_chars and w.lower() not in others))
        if cands:
            picks = [cands[0], cands[len(cands) // 2], cands[-1]]
            return list(dict.fromkeys(picks))[:limit]
    return []

def distinctive_tokens(text: str, others: str, exclude: str, *, limit: int = 5) -> list[str]:
    toks = {t for t in _TOKEN.findall(text.lower()) if t not in others and t not in exclude}
    return sorted(toks, key=lambda t: (-len(t), t))[:limit]


def _needles(texts: list[str], titles: list[str]) -> list[str]:
    out = {s for t in texts for s in sentences(t) if len(s) >= 20}
    out |= {t for t in titles if t and len(t) >= 12}
    return sorted(out, key=len, reverse=True)


def doc_filter(doc_id: str, chunk_ids: list[str]) -> str:
    f = f"doc_id = {sql_literal(doc_id)}"
    if chunk_ids:
        f += f" OR chunk_id IN {sql_list(chunk_ids)}"
    return f

def _lance_rows(tbl, where: str, columns: list[str]) -> pa.Table:
    return tbl.search().where(where).select(columns).limit(None).to_arrow()

def held_material(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str) -> dict[str, Any]:
    """Everything of the document still held anywhere: texts (every version
    found in the registry or any LanceDB version), titles, chunk ids."""
    texts: list[str] = []
    titles: list[str] = []
    chunk_ids: set[str] = set()
    source_system = None
    known = False
    if has_table(con, "documents"):
        for text, title, system in con.execute(
                "SELECT text, title, source_system FROM documents WHERE doc_id = ?", [doc_id]).fetchall():
            known = True
            source_system = system
            texts.append(text)
            titles.append(title)
    if has_table(con, "document_versions"):
        known |= bool(con.execute("SELECT count(*) FROM document_versions WHERE doc_id = ?", [doc_id]).fetchall()[0][0])
    if has_table(con, "definitions"):
        for body, title in con.execute("SELECT body, title FROM definitions WHERE evidence_id = ?", [doc_id]).fetchall():
            texts.append(body)
            titles.append(title)
    if has_table(con, "quarantine"):
        for (system,) in con.execute("SELECT source_system FROM quarantine WHERE doc_id = ?", [doc_id]).fetchall():
            known = True
            source_system = source_system or system
    if has_table(con, "chunk_lineage"):
        for (cid,) in con.execute("SELECT chunk_id FROM chunk_lineage WHERE doc_id = ?", [doc_id]).fetchall():
            chunk_ids.add(cid)
    bodies: dict[str, list[tuple[int, str]]] = {}
    vectors: dict[str, dict[str, list[float]]] = {}
    for name in lance.table_names(lancedb_dir):
        tbl = lance.connect(lancedb_dir).open_table(name)
        for v in lance.versions(tbl):
            tbl.checkout(v)
            t = _lance_rows(tbl, f"doc_id = {sql_literal(doc_id)}",
                            ["chunk_id", "doc_version", "title", "span_start", "body", "vector"])
            for cid, dv, title, start, body, vec in zip(*(t.column(c).to_pylist() for c in t.column_names)):
                chunk_ids.add(cid)
                titles.append(title)
                bodies.setdefault(dv, []).append((start, body))
                vectors.setdefault(name, {})[cid] = [round(float(x), 6) for x in vec]
    for parts in bodies.values():  # one text per document version, from its chunks
        texts.append("\n".join(b for _, b in sorted(parts)))
    return {"texts": [t for t in dict.fromkeys(texts) if t], "titles": [t for t in dict.fromkeys(titles) if t],
            "chunk_ids": sorted(chunk_ids), "known": known or bool(chunk_ids), "source_system": source_system,
            "vectors": {t: list(v.values())[:20] for t, v in vectors.items()}}

def probes_for(con: duckdb.DuckDBPyConnection, doc_id: str, material: dict[str, Any]) -> Probes:
    others: list[str] = []
    if has_table(con, "documents"):
        for r in con.execute("SELECT doc_id, object_id, title, text FROM documents WHERE doc_id <> ?",
                             [doc_id]).fetchall():
            others.extend(r)
    big = "\n\x00\n".join(others).lower()
    phrases: list[str] = []
    for text in material["texts"]:
        phrases += distinctive_phrases(text, big, limit=3)
    for title in material["titles"]:
        phrases += distinctive_phrases(title, big, limit=1, min_chars=15)
    tokens: list[str] = []
    exclude = doc_id.lower()
    for text in material["texts"]:
        tokens += distinctive_tokens(text, big, exclude)
    return Probes(phrases=list(dict.fromkeys(phrases))[:10], tokens=list(dict.fromkeys(tokens))[:8],
                  needles=_needles(material["texts"], material["titles"]), vectors=material["vectors"])

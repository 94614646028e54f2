"""Section 8, cli (child side; the processes are run by bench/cli_asks.py, the figures are
bench/figures.py's): `canon ask` as a new process on a large registry, as a user at a terminal
runs it. This child makes one cold build (HashingEmbedder) of an N-document corpus, reused while
the corpus is unchanged, and picks the questions; the parent, which imports no Canon, then runs
each as a fresh `canon ask --json` process (Linux carries peak RSS across fork and exec: a
process started from this child would report the build's peak as its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.pipeline import TimedEmbedder, pipeline, public
from bench.questions import governed_questions, peer_queries
from bench.workdir import fresh_dir
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry


def case_cli(p: dict[str, Any]) -> dict[str, Any]:
    corpus, ws = Path(p["corpus"]), Path(p["ws"])
    # The build is reused while the corpus is the one it was built from (bench/workdir.py's digest).
    digest = (corpus / ".digest").read_text() if (corpus / ".digest").exists() else ""
    stamp = ws / ".built-from"
    if not (ws / "canon.duckdb").exists() or not stamp.exists() or stamp.read_text() != digest or not digest:
        fresh_dir(ws)
        build = public(pipeline(corpus, ws, TimedEmbedder(HashingEmbedder()), run_id="cli"))
        stamp.write_text(digest)
    else:
        build = None
    con = registry.connect(ws / "canon.duckdb", read_only=True)
    try:
        docs = registry.load_document_heads(con, "kind = 'metric_definition'", [])
        total = con.execute("SELECT count(*) FROM documents WHERE deleted_at IS NULL").fetchall()[0][0]
    finally:
        con.close()
    questions = [(q, day.isoformat()) for q, _, day in governed_questions(docs, p["questions"], seed=p["seed"])]
    questions += [(q, None) for q in peer_queries(max(2, p["questions"] // 2))]
    return {"documents": total, "build": build, "questions": questions}

"""A warm ask context over a small corpus a test writes out (one JSON document per line):
the contract gate, the registry, a LanceDB index with the HashingEmbedder (the lexical side
of retrieval decides) and `ask_context`, as the evaluation builds one. Used by the tests that
check one class of question on a domain of their own."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from pathlib import Path
from typing import Iterable, Iterator

import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import AskContext
from canon.index.build import build_index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import Policy

CONTRACT = Path(__file__).resolve().parents[1] / "contracts" / "knowledge.yml"


@contextlib.contextmanager
def corpus_context(base: Path, docs: Iterable[dict], *, today: dt.date | None = None) -> Iterator[AskContext]:
    corpus = base / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    con = registry.connect(base / "canon.duckdb")
    try:
        build_registry(con, corpus=corpus, corpus_contract=load_contract(CONTRACT), run_id=base.name, today=today)
        emb = HashingEmbedder()
        build_index(con, base / "lancedb", emb, Policy(), run_id=base.name)
        yield ask_context(con, base / "lancedb", registry.load_documents(con), Policy(), embedder=emb,
                          log_answers=False)
    finally:
        con.close()


def module_context(name: str, docs: list[dict]):
    """A module-scoped `ctx` fixture over `docs`: `ctx = module_context("hotel", DOCS)` in a
    test module builds the context once for its tests."""
    @pytest.fixture(scope="module")
    def ctx(tmp_path_factory):
        with corpus_context(tmp_path_factory.mktemp(name), docs) as context:
            yield context
    return ctx


_CLOSED_UNLESS_APPROVED = object()


def governed_doc(doc_id: str, object_id: str, title: str, text: str, *, kind: str = "metric_definition",
                 status: str = "approved", authority: int = 100, version: str = "1",
                 valid_from: str = "2025-01-01", valid_to=_CLOSED_UNLESS_APPROVED,
                 supersedes: str | None = None) -> dict:
    """One document of a test's small corpus, readable by `analyst`, in effect from `valid_from`
    (by default 2025-01-01, and closed on 2026-01-01 unless approved)."""
    if valid_to is _CLOSED_UNLESS_APPROVED:
        valid_to = None if status == "approved" else "2026-01-01"
    return {"doc_id": doc_id, "object_id": object_id, "kind": kind, "title": title, "status": status,
            "authority": authority, "version": version, "valid_from": valid_from, "valid_to": valid_to,
            "allowed_roles": ["analyst"], "supersedes": supersedes, "content_hash": f"sha256:{doc_id}", "text": text}


def metric_revision(doc_stem: str, object_id: str, name: str, version: str, valid_from: str, valid_to: str | None,
                    text: str) -> dict:
    """Revision `version` of a metric's approved definition: doc_id "<doc_stem>.v<version>", titled
    "<Name> governed definition v<version>", its text opening "Governed metric <name> version
    <version>."; a later version supersedes v1. Modules bind the first three with
    functools.partial and write `revision(version, valid_from, valid_to, text)`."""
    d = governed_doc(f"{doc_stem}.v{version}", object_id, f"{name[0].upper()}{name[1:]} governed definition v{version}",
                     f"Governed metric {name} version {version}. {text}")
    d.update(version=version, valid_from=valid_from, valid_to=valid_to,
             supersedes=None if version == "1" else f"{doc_stem}.v1")
    return d


def snapshot_doc(doc_id: str, object_id: str, title: str, observed: str, readings: str, *, valid_to: str) -> dict:
    """A freshness snapshot of a test's small corpus, observed at `observed` (ISO, UTC) and
    readable by `analyst`: its text states the observation time and `readings`."""
    return {"doc_id": doc_id, "object_id": object_id, "kind": "freshness_snapshot", "title": title,
            "status": "observed", "authority": 90, "version": observed, "valid_from": observed[:10],
            "valid_to": valid_to, "allowed_roles": ["analyst"], "supersedes": None,
            "content_hash": f"sha256:{doc_id}", "text": f"Observed at {observed}. {readings}"}


def model_revision(domain: str, name: str, version: str, valid_from: str, valid_to: str | None, grain: str) -> dict:
    """Revision `version` of the dbt model `name` of `domain`: doc_id "model.<name>.v<version>",
    object "model.<domain>.<name>", titled "dbt model schema <name> v<version>", its text stating
    its grain. Modules bind the first two with functools.partial."""
    return governed_doc(f"model.{name}.v{version}", f"model.{domain}.{name}", f"dbt model schema {name} v{version}",
                        f"dbt model model.{domain}.{name}.v{version}. Grain: {grain}", kind="model_schema",
                        authority=90, version=version, valid_from=valid_from, valid_to=valid_to)

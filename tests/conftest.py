"""Shared test fixtures. Tests use the real components (dbt, DuckDB, LanceDB,
the embedding model); only speed-sensitive structural tests use the
deterministic hashing embedder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import external_artifacts
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
# The tests build their own configurations: a team's configuration in the shell that runs them
# must not turn the demo's tests into tests of that team's project (canon/core/settings.py).
for _var in ("CANON_CONFIG", "CANON_DBT_PROJECT_DIR", "CANON_DBT_PROFILES_DIR", "CANON_DBT_TARGET",
             "CANON_DBT_ARTIFACTS_DIR"):
    os.environ.pop(_var, None)

ROOT = Path(__file__).resolve().parents[1]
# The dossier gold set (docs/design.md, "The dossier gold set"), committed so a fresh clone tests it.
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"


@pytest.fixture(scope="session")
def external_dir(tmp_path_factory) -> Path:
    """The third-party dbt artifact sets, one folder each (tests/external_artifacts.py):
    the vendored copies decompressed once per session, or CANON_SHARED/external when set."""
    shared = external_artifacts.shared_override()
    if shared is not None:
        return external_artifacts.require_all(shared)
    return external_artifacts.unpack(tmp_path_factory.mktemp("external"))


@pytest.fixture(scope="session")
def dossier_corpus_path() -> Path:
    return DOSSIER / "corpus.jsonl"


@pytest.fixture(scope="session")
def dossier_gold() -> list[dict]:
    return json.loads((DOSSIER / "gold.json").read_text())


@pytest.fixture(scope="session")
def dossier_docs():
    from canon.models.documents import Document

    docs = []
    for line in (DOSSIER / "corpus.jsonl").read_text().splitlines():
        if line.strip():
            docs.append(Document(**json.loads(line)))
    return docs


@pytest.fixture
def dossier_index(tmp_path):
    """The dossier corpus through the registry build and a HashingEmbedder publish:
    (connection, LanceDB folder, embedder)."""
    import datetime as dt
    import uuid

    from canon.index import publish as index
    from canon.index.embedding.hashing import HashingEmbedder
    from canon.registry import store as registry
    from canon.registry.build import build_registry
    from canon.registry.contracts import load_contract

    con = registry.connect(tmp_path / "canon.duckdb")
    build_registry(con, corpus=DOSSIER / "corpus.jsonl", corpus_contract=load_contract(ROOT / "contracts/knowledge.yml"),
                   run_id=str(uuid.uuid4()), today=dt.date(2026, 11, 30))
    emb = HashingEmbedder()
    index.publish(con, tmp_path / "lancedb", registry.load_documents(con), emb, policy_revision="none", run_id="r1")
    yield con, tmp_path / "lancedb", emb
    con.close()


@pytest.fixture()
def index_ws(tmp_path):
    """An empty workspace for `canon.index.publish.publish`: a DuckDB connection, a LanceDB folder
    and a 64-dimensional HashingEmbedder, as a dict (con, dir, path, emb)."""
    import duckdb

    from canon.index.embedding.hashing import HashingEmbedder

    con = duckdb.connect(str(tmp_path / "canon.duckdb"))
    yield {"con": con, "dir": tmp_path / "lancedb", "path": tmp_path, "emb": HashingEmbedder(dimensions=64)}
    con.close()

"""A real Canon workspace for tests that drive the `canon` console script: the
dossier corpus in its own folder (beside its policy.yml), built into a
registry under a fresh CANON_HOME and published with the hashing embedder,
with the policy revision recorded as the knowledge index asset records it
(assets/index.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from canon.ask.understanding import catalog_store
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.ops import checks as ops_checks
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy

ROOT = Path(__file__).resolve().parents[1]
CANON = str(Path(sys.executable).with_name("canon"))
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
CONTRACT = ROOT / "contracts" / "knowledge.yml"
Q = "Which net revenue definition applies for reporting date 2026-08-31?"
OBJECT = "metric.finance.net_revenue"
AS_OF = "2026-08-31"
VALID = 'revision: "p1"\nrevoke:\n  - role: contractor\n    object_id: "memo.finance.*"\n'
REVOKE_ANALYST = 'revision: "p2"\nrevoke:\n  - role: analyst\n    object_id: "metric.finance.*"\n'


@dataclass
class CliWorkspace:
    home: Path
    corpus: Path          # the folder holding corpus.jsonl (and policy.yml, when there is one)

    @property
    def policy(self) -> Path:
        return self.corpus / "policy.yml"

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        full = {**os.environ, "CANON_HOME": str(self.home), "CANON_CORPUS": str(self.corpus),
                "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                # the checkout under test, whichever checkout the console script was installed from
                "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        full.pop("CANON_POLICY", None)
        full.update(env or {})
        return subprocess.run([CANON, *args], capture_output=True, text=True, env=full, timeout=300)

    def json(self, *args: str, env: dict[str, str] | None = None) -> dict:
        out = self.run(*args, "--json", env=env)
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr
        return json.loads(out.stdout)

    def ask(self, role: str = "analyst", question: str = Q, **kw) -> dict:
        return self.json("ask", question, "--role", role, **kw)

    def resolve(self, role: str = "analyst", **kw) -> dict:
        return self.json("resolve", OBJECT, "--as-of", AS_OF, "--role", role, **kw)


def build(base: Path, policy_text: str | None = VALID, *, catalog: bool = True) -> CliWorkspace:
    """Build the workspace; `policy_text` None builds a corpus that never had a policy.
    `catalog`: store the object catalog, as the registry asset does (then `canon ask`
    reads only what its question needs, canon/ask/scope.py); False leaves the registry
    without one, so `canon ask` loads every document."""
    corpus = base / "corpus"
    corpus.mkdir(parents=True)
    shutil.copy(DOSSIER / "corpus.jsonl", corpus / "corpus.jsonl")
    if policy_text is not None:
        (corpus / "policy.yml").write_text(policy_text)
    home = base / "home"
    home.mkdir()
    con = registry.connect(home / "canon.duckdb")
    try:
        build_registry(con, corpus=corpus / "corpus.jsonl", corpus_contract=load_contract(CONTRACT),
                       run_id=str(uuid.uuid4()))
        policy = load_policy(corpus / "policy.yml" if policy_text is not None else None)
        ops_checks.record_policy_revision(con, policy.revision, seen_by="knowledge_index")
        index.publish(con, home / "lancedb", registry.load_documents(con), HashingEmbedder(),
                      policy_revision=policy.revision, run_id="run-1")
        if catalog:
            catalog_store.refresh_catalog(con)
    finally:
        con.close()
    return CliWorkspace(home, corpus)

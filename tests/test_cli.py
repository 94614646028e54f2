"""The `canon` console script as users and external tests call it: JSON
contracts, exit codes, and errors that name the file and the reason."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANON = str(Path(sys.executable).with_name("canon"))
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
ASK_KEYS = {"action", "question", "role", "as_of", "answer", "evidence", "claims", "options", "freshness",
            "index_revision", "policy_revision", "answer_id"}
EVIDENCE_KEYS = {"doc_id", "object_id", "kind", "version", "status", "use", "valid_from", "valid_to",
                 "content_hash", "chunk_ids"}
CLAIM_KEYS = {"claim", "evidence_id", "evidence_revision", "supported_span", "effective_for"}


def run(*args, home: Path, timeout=600):
    env = {**os.environ, "CANON_HOME": str(home)}
    return subprocess.run([CANON, *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_eval_json_contract_with_the_real_model(tmp_path):
    out = run("eval", "--corpus", str(DOSSIER / "corpus.jsonl"), "--gold", str(DOSSIER / "gold.json"), "--json",
              home=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) >= {"summary", "configurations", "cases"}
    s = result["summary"]
    assert s["cases"] == 11 and s["action_accuracy"] == 1.0 and s["recall_at_3"] == 1.0
    assert s["permission_leaks"] == 0 and s["wrong_version_rate"] == 0.0
    configs = {c["configuration"] for c in result["configurations"]}
    assert len(configs) == 7 and any("hybrid" in c and "constraints" in c for c in configs)
    for case in result["cases"]:
        resp = case["response"]
        assert ASK_KEYS <= set(resp), case["id"]
        for e in resp["evidence"]:
            assert EVIDENCE_KEYS <= set(e) and e["use"] in ("primary", "supporting", "conflict")
        for c in resp["claims"]:
            assert CLAIM_KEYS <= set(c)
    g4 = next(c for c in result["cases"] if c["id"] == "G4")["response"]
    assert {e["doc_id"]: e["use"] for e in g4["evidence"]} == {"metric.net_revenue.v2": "primary",
                                                               "wiki.net_revenue.legacy": "conflict"}


def test_missing_registry_is_a_clear_input_error(tmp_path):
    out = run("resolve", "metric.finance.net_revenue", "--role", "analyst", home=tmp_path / "empty")
    assert out.returncode == 2
    assert "canon.duckdb" in out.stderr and "make run" in out.stderr and "Traceback" not in out.stderr


def test_bad_inputs_exit_2_naming_the_file(tmp_path):
    out = run("eval", "--corpus", str(DOSSIER / "corpus.jsonl"), "--gold", str(tmp_path / "nope.json"), home=tmp_path)
    assert out.returncode == 2 and "nope.json" in out.stderr and "not found" in out.stderr
    bad = tmp_path / "gold.json"
    bad.write_text('[{"id": "x", "question": "q"}]')
    out = run("eval", "--corpus", str(DOSSIER / "corpus.jsonl"), "--gold", str(bad), home=tmp_path)
    assert out.returncode == 2 and "gold.json" in out.stderr and "role" in out.stderr
    out = run("eval", "--corpus", str(tmp_path / "missing"), "--gold", str(DOSSIER / "gold.json"), home=tmp_path)
    assert out.returncode == 2 and "missing" in out.stderr
    assert "Traceback" not in out.stderr

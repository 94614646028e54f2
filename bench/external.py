"""The `external` section: artifacts mode end to end on every vendored third-party dbt artifact
set (tests/fixtures/external, unpacked by tests/external_artifacts.py), as a team runs it.

For each set: a canon.yml naming the set's folder as `dbt.artifacts_dir` (`default_roles:
[analyst]`), then `canon build` as its own process into a fresh home. The figures are that
process's wall clock and peak RSS (`os.wait4`: the child's own ru_maxrss, so nothing of this
parent is counted; the parent imports none of Canon, bench/child.py says why), and from the
home it built: dbt nodes (rows of dbt_nodes) → evidence documents (live registry rows) → chunks
(the served index revision). Every set uses the same embedder, by default the real one (the
packaged all-MiniLM-L6-v2, int8 ONNX); the one-time ONNX export is made by an untimed warm-up
build first, into a model cache all builds share.

Then, on tuva-input-layer (the largest set) and its served index, one definition, one lineage and
one grain question, each a new `canon ask` process, timed. The model they ask about is picked by
a rule, not by name (`pick`, run in its own process): the first approved model by unique id with
a declared grain, a name no other metric or model shares, no word Canon reads as an intent, and
1 to 40 raw inputs upstream — the rule tests/test_dbt_evidence.py uses.

    python -m bench --only external [--external-embedder hashing] [--external-sets a,b]
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.settings import REPO, ROLE
from bench.timing import loadavg, log

ASK_SET = "tuva-input-layer"
WARM_SET = "jaffle-shop-duckdb"   # the smallest complete set: the untimed warm-up


def _external_artifacts():
    """tests/external_artifacts.py, loaded by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("external_artifacts", REPO / "tests" / "external_artifacts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _env(config: Path, models: Path, embedder: str) -> dict[str, str]:
    drop = {"CANON_CONFIG", "CANON_HOME", "CANON_CORPUS", "CANON_POLICY", "CANON_DBT_PROJECT_DIR",
            "CANON_DBT_PROFILES_DIR", "CANON_DBT_TARGET", "CANON_DBT_ARTIFACTS_DIR", "DAGSTER_HOME"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({"CANON_CONFIG": str(config), "CANON_MODEL_CACHE": str(models), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1", "PYTHONPATH": str(REPO)})
    if embedder == "hashing":
        env["CANON_EMBEDDER"] = "hashing"
    else:
        env.pop("CANON_EMBEDDER", None)
    return env


def _timed(cmd: list[str], env: dict[str, str], cwd: Path, log_to: Path) -> dict[str, Any]:
    """Run one process; its wall clock, exit code and peak RSS (its own, from wait4)."""
    with open(log_to, "w", encoding="utf-8") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=str(cwd))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall_s": wall, "rc": proc.returncode, "peak_rss_mb": usage.ru_maxrss / 1024.0}


def _canon(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("canon")), *args]


def _helper(what: str, home: Path, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.external", what, str(home)], capture_output=True, text=True,
                         env=env, cwd=str(REPO), timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"bench.external {what} {home} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _prepare(sets_dir: Path, name: str, names: dict[str, str | None], dest: Path) -> Path:
    """The set as a dbt target folder: its files under the names dbt writes (jaffle-shop-semantic-v12
    suffixes them with the dbt version)."""
    dest.mkdir(parents=True, exist_ok=True)
    for kind, file in names.items():
        if file:
            (dest / f"{kind}.json").write_bytes((sets_dir / name / file).read_bytes())
    return dest


def build_set(work: Path, sets_dir: Path, name: str, names: dict[str, str | None], models: Path,
              embedder: str) -> dict[str, Any]:
    base = work / name
    if base.exists():
        subprocess.run(["rm", "-rf", str(base)], check=True)
    target = _prepare(sets_dir, name, names, base / "target")
    config = base / "canon.yml"
    config.write_text("home: home\ndbt: {artifacts_dir: target}\ndefault_roles: [" + ROLE + "]\n", encoding="utf-8")
    env = _env(config, models, embedder)
    load = loadavg()
    run = _timed(_canon("build"), env, base, base / "build.log")
    if run["rc"] != 0:
        raise RuntimeError(f"canon build on {name} exited {run['rc']}; see {base / 'build.log'}")
    counts = _helper("counts", base / "home", env)
    log(f"external {name}: {counts['nodes']} nodes -> {counts['documents']} documents -> {counts['chunks']} chunks, "
        f"build {run['wall_s']:.1f} s, peak RSS {run['peak_rss_mb']:.0f} MB")
    return {"set": name, **counts, "build_s": run["wall_s"], "peak_rss_mb": run["peak_rss_mb"], "load": load,
            "config": str(config), "home": str(base / "home"), "target": str(target)}


def asks(result: dict[str, Any], models: Path, embedder: str) -> list[dict[str, Any]]:
    """One definition, lineage and grain question about a picked model, each a new `canon ask`."""
    config, home = Path(result["config"]), Path(result["home"])
    env = _env(config, models, embedder)
    picked = _helper("pick", home, env)
    phrase = picked["phrase"]
    out = []
    for intent, question in (("definition", f"What is the definition of {phrase}?"),
                             ("lineage", f"Which raw sources feed {phrase}?"),
                             ("grain", f"What is the grain of {phrase}?")):
        log_file = home.parent / f"ask-{intent}.json"
        run = _timed(_canon("ask", question, "--role", ROLE, "--json"), env, config.parent, log_file)
        try:
            answer = json.loads(log_file.read_text())
        except ValueError:
            answer = {}
        primary = [e["doc_id"] for e in answer.get("evidence", []) if e.get("use") == "primary"]
        out.append({"intent": intent, "question": question, "wall_s": run["wall_s"], "rc": run["rc"],
                    "peak_rss_mb": run["peak_rss_mb"], "action": answer.get("action"), "primary": primary,
                    "expected": picked["doc_id"]})
        log(f"external ask {intent}: {run['wall_s']:.2f} s, {answer.get('action')}, primary {primary}")
    return out


def run(F, raw: dict[str, Any], *, work: Path, embedder: str = "default", only: tuple[str, ...] = ()) -> None:
    ext = _external_artifacts()
    sets_dir = ext.unpack(work / "external-sets")
    models = work / "models"
    names = {name: ext.artifact_names(sets_dir / name) for name in sorted(ext.SETS)}
    chosen = [n for n in names if not only or n in only]
    log(f"external: warm-up build ({WARM_SET}, untimed; makes the int8 ONNX export once into {models})")
    build_set(work / "external-warmup", sets_dir, WARM_SET, names[WARM_SET], models, embedder)
    results = [build_set(work / "external", sets_dir, n, names[n], models, embedder) for n in chosen]
    raw["external"] = {"embedder": embedder, "sets": results}
    for r in results:
        key = f"external.{r['set']}"
        F.add(f"{key}.build_s", "external", f"{r['set']}: {r['nodes']} nodes→{r['documents']} docs→{r['chunks']} chunks",
              r["build_s"], "s", load=r["load"], rss=r["peak_rss_mb"], value=round(r["build_s"], 1))
        F.add(f"{key}.peak_rss_mb", "external", f"{r['set']}: canon build peak RSS", r["peak_rss_mb"], "MB",
              value=round(r["peak_rss_mb"]))
    big = next((r for r in results if r["set"] == ASK_SET), None)
    if big is None:
        return
    raw["external"]["asks"] = done = asks(big, models, embedder)
    for a in done:
        ok = a["rc"] == 0 and a["action"] == "answer" and a["primary"][:1] == [a["expected"]]
        F.add(f"external.{ASK_SET}.ask_{a['intent']}_s", "external", f"{ASK_SET}: canon ask ({a['intent']})",
              a["wall_s"], "s", "answer, the picked model", ok, rss=a["peak_rss_mb"],
              note=f"{a['question']} → {a['action']}, primary {a['primary']}")


# ------------------------------------------------------------------ helpers run in their own process

def _counts(home: Path) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(str(home / "canon.duckdb"), read_only=True)
    try:
        one = lambda sql: con.execute(sql).fetchall()[0][0]  # noqa: E731
        rev = con.execute("SELECT chunk_count, embedding_model_id FROM index_revisions WHERE status = 'ready' "
                          "ORDER BY created_at DESC LIMIT 1").fetchall()
        return {"nodes": one("SELECT count(*) FROM dbt_nodes"), "edges": one("SELECT count(*) FROM lineage_edges"),
                "documents": one("SELECT count(*) FROM documents WHERE deleted_at IS NULL"),
                "quarantined": one("SELECT count(*) FROM quarantine WHERE released_at IS NULL"),
                "chunks": rev[0][0] if rev else 0, "embedding": rev[0][1] if rev else None}
    finally:
        con.close()


def _pick(home: Path) -> dict[str, Any]:
    from canon.ask.understanding.match import normalize
    from canon.ask.understanding.parse import detect_intents
    from canon.registry import store as registry
    from canon.registry.graph import upstream

    con = registry.connect(home / "canon.duckdb", read_only=True)
    try:
        docs = registry.load_documents(con)

        def phrase(d) -> str:
            return normalize(d.object_id.rsplit(".", 1)[-1].replace("_", " "))

        names: dict[str, set[str]] = {}
        for d in docs:
            if d.kind in ("metric_definition", "model_schema"):
                names.setdefault(phrase(d), set()).add(d.object_id)
        for d in sorted(docs, key=lambda d: d.doc_id):
            if d.kind != "model_schema" or d.status.value != "approved" or not d.metadata.get("grain"):
                continue
            if len(names[phrase(d)]) != 1 or detect_intents(phrase(d)):
                continue
            graph = upstream(con, d.metadata["dbt_unique_id"])
            raw = [n for n in graph.nodes.values() if n["resource_type"] in ("source", "seed")
                   and n["id"] != d.metadata["dbt_unique_id"]]
            if 0 < len(raw) <= 40:
                return {"doc_id": d.doc_id, "phrase": phrase(d), "raw_inputs": len(raw)}
        raise SystemExit(f"no askable model in {home}")
    finally:
        con.close()


if __name__ == "__main__":
    what, where = sys.argv[1], Path(sys.argv[2])
    print(json.dumps(_counts(where) if what == "counts" else _pick(where)))

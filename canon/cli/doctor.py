"""`canon doctor`: what the configuration resolves to, and every problem with
it, each naming the file and the key. Nothing is written and dbt is never run:
the dbt side is read from the artifacts (artifacts mode) or from what Canon's
last build published into the home (demo and project mode; before a build,
the manifest the code location parsed)."""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from typing import Any

from canon.core.errors import CanonInputError
from canon.core.settings import ENVIRONMENT, Settings, inspect_settings, missing_documents
from canon.core.settings_file import Problem
from canon.evaluation.gold import load_gold
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy
from canon.sources.dbt.artifacts import missing_artifacts, read_manifest
from canon.sources.dbt.manifest import iter_manifest_nodes, manifest_metadata
from canon.sources.dbt.parquet_catalog import read_parquet_catalog

ARTIFACTS = ("manifest.json", "semantic_manifest.json", "run_results.json", "sources.json", "catalog.json")
# What the summary counts, in this order (dbt resource types).
COUNTED = ("metric", "semantic_model", "saved_query", "model", "seed", "snapshot", "source", "exposure")


def _problem(exc: CanonInputError, key: str) -> Problem:
    """A CanonInputError raised by a reader, as a problem: its file, its field or `key`, its reason."""
    return Problem(exc.path, exc.field or key, exc.reason + (f" (line {exc.line})" if exc.line else ""))


def _dbt_report(s: Settings, problems: list[Problem]) -> dict[str, Any]:
    file = str(s.config_file) if s.config_file else ENVIRONMENT
    if not s.has_dbt:   # documents mode: nothing of dbt to read
        return {"folder": None, "manifest": None}
    if s.mode == "artifacts":
        folder, key = s.dbt_artifacts_dir, "dbt.artifacts_dir"
    else:   # the set the last build published, else the manifest the code location parsed
        published = s.home / "dbt_artifacts"
        folder = published if (published / "manifest.json").is_file() else s.home / "dbt_target"
        key = "dbt.project_dir"
    out: dict[str, Any] = {"folder": str(folder)}
    if s.runs_dbt:
        out["project_dir"] = str(s.dbt_project_dir)
        out["profiles_dir"] = str(s.dbt_profiles_dir)
        out["target"] = s.dbt_target
        try:
            out["dbt_installed"] = importlib.metadata.version("dbt-core")
        except importlib.metadata.PackageNotFoundError:
            problems.append(Problem(file, key, "dbt-core is not installed in this environment"))
    if folder is None or not (folder / "manifest.json").is_file():
        out["manifest"] = None if s.runs_dbt else "missing"
        return out   # project mode before the first build: nothing parsed yet (a missing folder is the loader's)
    out["artifacts"] = {name: (folder / name).is_file() for name in ARTIFACTS}
    files = {name.removesuffix(".json"): str(folder / name) for name, ok in out["artifacts"].items() if ok}
    unsupported: list[str] = []
    if "catalog" not in files:   # dbt 2.0 writes catalog.json only with --write-catalog
        try:
            parquet = read_parquet_catalog(folder)
        except CanonInputError as exc:
            problems.append(_problem(exc, key))
        else:
            unsupported = parquet.unsupported
            if parquet.catalog is not None:
                files["catalog"] = out["catalog_parquet"] = parquet.where
    # What the load will do without each absent artifact (canon/sources/dbt/artifacts.py), never an error.
    out["missing"] = missing_artifacts(folder, files, {k.removesuffix(".json"): k for k in ARTIFACTS}, unsupported)
    try:
        manifest = read_manifest(folder / "manifest.json")
        version, schema = manifest_metadata(manifest)
        counts = Counter(rtype for _, rtype, _ in iter_manifest_nodes(manifest, folder / "manifest.json"))
    except CanonInputError as exc:
        problems.append(_problem(exc, key))
        return out
    out.update(manifest=str(folder / "manifest.json"), dbt_version=version, manifest_schema_version=schema,
               counts={t: counts.get(t, 0) for t in COUNTED},
               governed=sum(1 for n in _nodes(manifest) if isinstance((n.get("meta") or {}).get("canon"), dict)))
    return out


def _nodes(manifest: dict):
    for section in ("nodes", "sources", "metrics", "semantic_models", "exposures", "saved_queries"):
        yield from (v for v in (manifest.get(section) or {}).values() if isinstance(v, dict))


def _documents_report(s: Settings, problems: list[Problem]) -> list[dict[str, Any]]:
    problems.extend(missing_documents(s))
    out, systems = [], {}
    for d in s.documents:
        entry: dict[str, Any] = {"key": d.key, "path": str(d.path), "contract": str(d.contract)}
        if d.path.is_dir():
            entry["files"] = sum(1 for p in d.path.rglob("*") if p.suffix in (".md", ".jsonl", ".json")
                                 and not any(part.startswith(".") for part in p.relative_to(d.path).parts))
        try:
            contract = load_contract(d.contract)
        except CanonInputError as exc:
            problems.append(_problem(exc, f"{d.key}.contract"))
        else:
            entry["contract_label"], entry["source_system"] = contract.label, contract.source.system
            # Sources under one contract are read as one (canon/registry/build.py); two contracts
            # with one source system would each delete the other's documents.
            earlier = systems.get(contract.source.system)
            if earlier is not None and earlier[1] != contract:
                problems.append(Problem(str(s.config_file or ENVIRONMENT), f"{d.key}.contract",
                                        f"source system {contract.source.system!r} is also {earlier[0]}'s, under "
                                        f"contract {earlier[1].label}: give each contract its own source.system, or "
                                        "put both sources under one contract"))
            systems.setdefault(contract.source.system, (d.key, contract))
        out.append(entry)
    return out


def _policy_report(s: Settings, problems: list[Problem]) -> dict[str, Any]:
    out: dict[str, Any] = {"path": str(s.policy), "exists": s.policy.is_file()}
    if s.policy.is_file():
        try:
            policy = load_policy(s.policy)
        except CanonInputError as exc:
            problems.append(_problem(exc, "policy"))
        else:
            out.update(revision=policy.revision, revoke_rules=len(policy.revoke))
    return out


def _gate_report(s: Settings, problems: list[Problem]) -> list[dict[str, Any]]:
    out = []
    for g in s.release_gate:
        entry: dict[str, Any] = {"name": g.name, "gold": str(g.gold), "corpus": str(g.corpus)}
        if g.gold.is_file():
            try:
                entry["cases"] = len(load_gold(g.gold))
            except CanonInputError as exc:
                problems.append(_problem(exc, "release_gate.gold"))
        out.append(entry)
    return out


def diagnose() -> tuple[dict[str, Any], list[Problem]]:
    """The report `canon doctor` prints, and every problem found."""
    s, problems = inspect_settings()
    report: dict[str, Any] = {
        "configuration": str(s.config_file) if s.config_file else None,
        "mode": s.mode,
        "home": str(s.home),
        "origins": dict(s.origins),
        "dbt": _dbt_report(s, problems),
        "documents": _documents_report(s, problems),
        "policy": _policy_report(s, problems),
        "default_roles": list(s.default_roles),
        "release_gate": _gate_report(s, problems),
        "calendar": ({"fiscal_year_start": s.calendar.start_month, "fiscal_year_named_by": s.calendar.named_by,
                      "described": s.calendar.describe()} if s.calendar else None),
    }
    report["problems"] = [{"file": p.file, "key": p.key, "reason": p.reason} for p in problems]
    return report, problems


def render(report: dict[str, Any]) -> list[str]:
    """The human report: one line per fact."""
    lines = [f"configuration  {report['configuration'] or 'none (CANON_CONFIG unset): the demo'}",
             f"mode           {report['mode']}", f"home           {report['home']}"]
    dbt = report["dbt"]
    if dbt.get("project_dir"):
        lines.append(f"dbt project    {dbt['project_dir']} (profiles {dbt['profiles_dir']}, target "
                     f"{dbt.get('target') or 'the profile default'}; dbt-core {dbt.get('dbt_installed', '?')})")
    if report["mode"] == "documents":
        lines.append("dbt            none configured (no dbt keys: the documents alone)")
    elif dbt.get("manifest") is None:
        lines.append("dbt manifest   none parsed yet: `canon build` parses and builds the project")
    elif dbt.get("counts") is not None:
        lines.append(f"dbt manifest   {dbt['manifest']}: dbt {dbt.get('dbt_version') or '?'}, "
                     f"manifest schema v{dbt.get('manifest_schema_version') or '?'}")
        lines.append("dbt nodes      " + ", ".join(f"{n} {t}" for t, n in dbt["counts"].items())
                     + f"; {dbt['governed']} with meta.canon")
        present = [n for n, ok in dbt["artifacts"].items() if ok]
        absent = [n for n, ok in dbt["artifacts"].items() if not ok]
        lines.append("dbt artifacts  " + ", ".join(present) + (f" (absent: {', '.join(absent)})" if absent else ""))
        if dbt.get("catalog_parquet"):
            lines.append(f"dbt catalog    from the Parquet dbt 2.0 writes: {dbt['catalog_parquet']}")
        lines += [f"dbt missing    {why}" for why in dbt.get("missing", {}).values()]
    docs = report["documents"]
    if not docs:
        lines.append("documents      none configured")
    for i, d in enumerate(docs):
        lines.append(("documents      " if i == 0 else "               ") + f"{d['path']} ({d['key']}; contract "
                     f"{d.get('contract_label', d['contract'])}" + (f", {d['files']} files" if "files" in d else "")
                     + ")")
    pol = report["policy"]
    lines.append(f"policy         {pol['path']} " + (f"(revision {pol['revision']}, {pol['revoke_rules']} revoke rules)"
                                                     if "revision" in pol else
                                                     "(present)" if pol["exists"] else "(absent: no revocations)"))
    lines.append("default roles  " + (", ".join(report["default_roles"]) or "none"))
    gate = report["release_gate"]
    lines.append("release gate   " + ("; ".join(f"{g['name']} ({g.get('cases', '?')} cases, {g['gold']})" for g in gate)
                                      or "none configured (release_gate.gold): no eval_report asset"))
    cal = report["calendar"]
    lines.append("calendar       " + (cal["described"] if cal else
                                      "no fiscal year configured (calendar.fiscal_year_start): fiscal periods are asked back"))
    problems = report["problems"]
    lines.append(f"problems       {len(problems) or 'none'}")
    lines += [f"  ✗ {p['file']} [{p['key']}]: {p['reason']}" if p["key"] else f"  ✗ {p['file']}: {p['reason']}"
              for p in problems]
    return lines

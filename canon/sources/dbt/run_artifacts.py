"""The artifacts a dbt *run* writes next to the manifest: run_results.json,
sources.json (source freshness), catalog.json and semantic_manifest.json."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from canon.core.errors import CanonInputError
from canon.sources.dbt.loading import load_json, schema_version
from canon.sources.dbt.manifest import relation_of, strip_quotes

RUN_RESULTS_SCHEMA = pa.schema([
    ("unique_id", pa.string()),
    ("resource_type", pa.string()),
    ("status", pa.string()),            # success / error / skipped / pass / fail / warn / no-op / runtime error
    ("execution_time", pa.float64()),
    ("started_at", pa.string()),        # execute timing, ISO UTC
    ("completed_at", pa.string()),
    ("message", pa.string()),
    ("failures", pa.int64()),
    ("rows_affected", pa.int64()),
    ("relation_name", pa.string()),
    ("compiled", pa.bool_()),
    ("invocation_id", pa.string()),     # the run's invocation, not the manifest's
    ("generated_at", pa.string()),
    ("command", pa.string()),           # args.which: build / run / test / generate …
    ("dbt_version", pa.string()),
    ("schema_version", pa.int32()),
    ("artifact_revision", pa.string()),  # the manifest revision these results were loaded with
])

_PERIOD_MINUTES = {"minute": 1, "hour": 60, "day": 1440}


def iso_utc(value: Any) -> str | None:
    """ISO-8601 in UTC; naive timestamps are taken as UTC (dbt writes UTC)."""
    if value in (None, ""):
        return None
    try:
        t = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).isoformat()


def _timing(result: Mapping[str, Any]) -> tuple[str | None, str | None]:
    timing = result.get("timing") or []
    chosen = None
    for t in timing:
        if isinstance(t, dict) and t.get("name") == "execute":
            chosen = t
    if chosen is None and timing and isinstance(timing[0], dict):
        chosen = timing[0]
    if not chosen:
        return None, None
    return iso_utc(chosen.get("started_at")), iso_utc(chosen.get("completed_at"))


def _int_or_none(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def parse_run_results(doc: Mapping[str, Any], path: Path | str, revision: str | None = None
                      ) -> tuple[pa.Table, dict[str, str]]:
    """(run_results table, {unique_id: compiled SQL}) from a decoded run_results.json."""
    num = schema_version(doc, path, "run-results")  # type: ignore[arg-type]
    meta = doc.get("metadata") or {}
    results = doc.get("results")
    if not isinstance(results, list):
        raise CanonInputError(path, "run_results has no 'results' list", field="results")
    args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
    cols: dict[str, list] = {f.name: [] for f in RUN_RESULTS_SCHEMA}
    compiled: dict[str, str] = {}
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("unique_id"), str):
            raise CanonInputError(path, "result must be an object with a unique_id", field=f"results[{i}]")
        uid = r["unique_id"]
        started, completed = _timing(r)
        adapter = r.get("adapter_response") if isinstance(r.get("adapter_response"), dict) else {}
        cols["unique_id"].append(uid)
        cols["resource_type"].append(uid.split(".", 1)[0])
        cols["status"].append(str(r.get("status")).lower() if r.get("status") is not None else None)
        et = r.get("execution_time")
        cols["execution_time"].append(float(et) if isinstance(et, (int, float)) and not isinstance(et, bool) else None)
        cols["started_at"].append(started)
        cols["completed_at"].append(completed)
        msg = r.get("message")
        cols["message"].append(str(msg) if msg is not None else None)
        cols["failures"].append(_int_or_none(r.get("failures")))
        cols["rows_affected"].append(_int_or_none(adapter.get("rows_affected")))
        cols["relation_name"].append(strip_quotes(r.get("relation_name")))
        code = r.get("compiled_code") or r.get("compiled_sql")
        c = r.get("compiled")
        cols["compiled"].append(bool(c) if c is not None else (True if code else None))
        if isinstance(code, str) and code:
            compiled[uid] = code
    n = len(cols["unique_id"])
    cols["invocation_id"] = [meta.get("invocation_id")] * n
    cols["generated_at"] = [iso_utc(meta.get("generated_at"))] * n
    cols["command"] = [args.get("which")] * n
    cols["dbt_version"] = [meta.get("dbt_version")] * n
    cols["schema_version"] = [num] * n
    cols["artifact_revision"] = [revision] * n
    return pa.table(cols, schema=RUN_RESULTS_SCHEMA), compiled


def read_run_results(path: Path | str, *, revision: str | None = None) -> pa.Table:
    """run_results.json → one row per executed node (status, timing, failures)."""
    path = Path(path)
    return parse_run_results(load_json(path, "run_results.json"), path, revision)[0]


def empty_run_results() -> pa.Table:
    return RUN_RESULTS_SCHEMA.empty_table()


def _criteria_minutes(crit: Any) -> int | None:
    if not isinstance(crit, dict):
        return None
    count, period = crit.get("count"), crit.get("period")
    if count is None or period not in _PERIOD_MINUTES:
        return None
    try:
        return int(count) * _PERIOD_MINUTES[period]
    except (TypeError, ValueError):
        return None


def _source_name_from_id(uid: str) -> str:
    parts = uid.split(".")
    if len(parts) >= 4 and parts[0] == "source":      # source.<pkg>.<source>.<table>
        return ".".join(parts[2:])
    return uid


def parse_sources_json(doc: Mapping[str, Any], path: Path | str,
                       manifest: Mapping[str, Any] | None = None) -> list[dict]:
    schema_version(doc, path, "sources")  # type: ignore[arg-type]
    meta = doc.get("metadata") or {}
    results = doc.get("results")
    if not isinstance(results, list):
        raise CanonInputError(path, "sources.json has no 'results' list", field="results")
    sources = (manifest or {}).get("sources") or {}
    out: list[dict] = []
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("unique_id"), str):
            raise CanonInputError(path, "result must be an object with a unique_id", field=f"results[{i}]")
        uid = r["unique_id"]
        src = sources.get(uid) if isinstance(sources, dict) else None
        relation = relation_of(src, "source") if isinstance(src, dict) else None
        crit = r.get("criteria")
        if not isinstance(crit, dict) and isinstance(src, dict):
            crit = src.get("freshness")  # runtime errors carry no criteria; the manifest does
        crit = crit if isinstance(crit, dict) else {}
        age = r.get("max_loaded_at_time_ago_in_s")
        out.append({
            "unique_id": uid,
            "source": relation or _source_name_from_id(uid),
            "max_loaded_at": iso_utc(r.get("max_loaded_at")),
            "snapshotted_at": iso_utc(r.get("snapshotted_at")),
            "age_seconds": float(age) if isinstance(age, (int, float)) and not isinstance(age, bool) else None,
            "status": str(r.get("status") or "").lower() or None,
            "warn_after_minutes": _criteria_minutes(crit.get("warn_after")),
            "error_after_minutes": _criteria_minutes(crit.get("error_after")),
            # extra context: the runtime error text and the run that observed it
            "message": r.get("error") or r.get("message"),
            "invocation_id": meta.get("invocation_id"),
        })
    return out


def read_sources_json(path: Path | str, *, manifest: Mapping[str, Any] | None = None) -> list[dict]:
    """sources.json (dbt source freshness) → one dict per source result.

    `source` is the relation name from the manifest when one is given
    (database.schema.identifier), else `<source>.<table>` from the unique id."""
    path = Path(path)
    return parse_sources_json(load_json(path, "sources.json"), path, manifest)


def parse_catalog(doc: Mapping[str, Any], path: Path | str) -> dict[str, dict[str, tuple[str, str | None]]]:
    """{unique_id: {lower column name: (name, type)}} in table column order."""
    schema_version(doc, path, "catalog")  # type: ignore[arg-type]
    out: dict[str, dict[str, tuple[str, str | None]]] = {}
    for section in ("nodes", "sources"):
        entries = doc.get(section) or {}
        if not isinstance(entries, dict):
            raise CanonInputError(path, f"catalog '{section}' must be an object", field=section)
        for uid, entry in entries.items():
            if not isinstance(entry, dict):
                raise CanonInputError(path, "catalog entry must be an object", field=f"{section}.{uid}")
            cols = entry.get("columns") or {}
            if not isinstance(cols, dict):
                raise CanonInputError(path, "catalog columns must be an object", field=f"{section}.{uid}.columns")
            ordered = sorted(cols.values(), key=lambda c: (c.get("index") or 0) if isinstance(c, dict) else 0)
            out[uid] = {str(c.get("name")).lower(): (c.get("name"), c.get("type"))
                        for c in ordered if isinstance(c, dict) and c.get("name")}
    return out


def read_catalog(path: Path | str) -> dict[str, dict[str, tuple[str, str | None]]]:
    path = Path(path)
    return parse_catalog(load_json(path, "catalog.json"), path)


def parse_semantic_manifest(doc: Mapping[str, Any], path: Path | str) -> dict:
    """semantic_manifest.json has no dbt_schema_version; check its shape instead."""
    if "semantic_models" not in doc and "metrics" not in doc:
        raise CanonInputError(path, "not a semantic manifest: neither 'semantic_models' nor 'metrics' present")
    out: dict[str, Any] = dict(doc)
    for key in ("semantic_models", "metrics", "saved_queries"):
        val = doc.get(key)
        if val is None:
            out[key] = []
            continue
        if not isinstance(val, list):
            raise CanonInputError(path, f"'{key}' must be a list", field=key)
        for i, item in enumerate(val):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise CanonInputError(path, "entry must be an object with a name", field=f"{key}[{i}]")
    return out


def read_semantic_manifest(path: Path | str) -> dict:
    path = Path(path)
    return parse_semantic_manifest(load_json(path, "semantic_manifest.json"), path)

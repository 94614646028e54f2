"""A source contract's `defaults`: the metadata of documents that do not state it.

A team's folder of plain Markdown (no YAML front matter) becomes evidence under a contract that
says what its pages are (docs/contracts.md, "Source contracts"):

    defaults: {kind: wiki, status: approved, authority: 50, version: "1",
               valid_from: 2026-01-01, allowed_roles: [analyst], id_prefix: "wiki."}

Every default key a record does not state is filled in; what a record states wins. A record that
names no `doc_id` gets `id_prefix` + its file's path without the suffix (`wiki.handbook/onboarding`;
characters outside the id alphabet become `-`), its `object_id` the same, and its `title` its
first `# ` heading, else the file's name. The result then passes the gate like any other record:
required keys, enums, dates, PII and the rest are the contract's rules as before."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from canon.registry.contracts import DefaultsSpec

_NOT_ID = re.compile(r"[^A-Za-z0-9._:/-]+")
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_KEYS = ("kind", "status", "authority", "version", "valid_from", "valid_to", "allowed_roles")


def derived_id(path: str, prefix: str) -> str:
    stem = _NOT_ID.sub("-", str(PurePosixPath(path).with_suffix(""))).strip("-/")
    return prefix + (stem or "document")


def title_of(text: str, path: str) -> str:
    m = _HEADING.search(text or "")
    return m.group(1).strip() if m else PurePosixPath(path).stem.replace("_", " ").replace("-", " ")


def with_defaults(fields: dict[str, Any], path: str, defaults: DefaultsSpec) -> dict[str, Any]:
    """`fields` with every default it lacks (a new dict; `path` is the record's file)."""
    out = dict(fields)
    for key in _KEYS:
        value = getattr(defaults, key)
        if value is not None and out.get(key) in (None, ""):
            out[key] = list(value) if isinstance(value, tuple) else value
    if out.get("doc_id") in (None, ""):
        out["doc_id"] = derived_id(path, defaults.id_prefix)
    if out.get("object_id") in (None, ""):
        out["object_id"] = out["doc_id"]
    if out.get("title") in (None, ""):
        out["title"] = title_of(out.get("text") if isinstance(out.get("text"), str) else "", path)
    return out

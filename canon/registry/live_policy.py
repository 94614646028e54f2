"""The live policy as queries read it: valid, absent, or unavailable.

`load_policy` (canon/registry/policy.py) refuses a broken file; at query time
that refusal must not become an error a caller can step around, nor "no
revocations". `read_live_policy` turns it into `Policy.unavailable(why)`,
which denies everything until a valid policy is back.

A missing file is only "no revocations" for a workspace that never had a
policy. Canon knows a policy existed when

- a query or check read a valid policy file through this module: the
  registry setting `policy_seen` then holds its revision and path (written
  whenever the connection is writable), or
- the registry recorded a policy revision other than "none" in
  `policy_revisions` (the knowledge index build and the policy sensor record
  every revision they see, canon/ops/checks.py `record_policy_revision`).

Either way, the absence of the file later means the policy disappeared: the
policy is unavailable, not empty (docs/contracts.md, "Access policy").
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from canon.core import db
from canon.core.db import has_table
from canon.core.errors import CanonInputError, CanonRunError
from canon.registry import store as registry
from canon.registry.policy import NO_POLICY_REVISION, Policy, load_policy

SEEN_SETTING = "policy_seen"


def policy_was_seen(con: duckdb.DuckDBPyConnection) -> str | None:
    """The last policy revision this workspace is known to have had, or None if it never had one."""
    if has_table(con, "settings"):
        raw = registry.get_setting(con, SEEN_SETTING)
        if raw:
            return str(json.loads(raw).get("revision", NO_POLICY_REVISION))
    if has_table(con, "policy_revisions"):
        rows = con.execute("SELECT policy_revision FROM policy_revisions WHERE policy_revision <> ? "
                           "ORDER BY first_seen_at DESC LIMIT 1", [NO_POLICY_REVISION]).fetchall()
        if rows:
            return rows[0][0]
    return None


def _seen_value(path: Path, policy: Policy) -> str:
    return json.dumps({"revision": policy.revision, "path": str(path)}, sort_keys=True)


def record_seen(con: duckdb.DuckDBPyConnection, path: Path, policy: Policy) -> None:
    """Remember that this workspace has a policy (its revision and file)."""
    value = _seen_value(path, policy)
    if has_table(con, "settings") and registry.get_setting(con, SEEN_SETTING) != value:
        registry.set_setting(con, SEEN_SETTING, value)


def remember_from_reader(db_path: Path, snapshot: duckdb.DuckDBPyConnection, path: Path, policy: Policy) -> bool:
    """`record_seen` for a reader, which holds only the read snapshot (canon/core/db.py):
    when the sighting is news, write it to the live registry if its lock is free right
    now, and republish the snapshot. Never waits — a writer holding the registry is a
    run that records policy revisions itself (canon/ops/checks.py record_policy_revision)."""
    path = Path(path)
    if not path.is_file() or not policy.available or not has_table(snapshot, "settings") \
            or registry.get_setting(snapshot, SEEN_SETTING) == _seen_value(path, policy):
        return False
    try:
        with db.writing(db_path, wait=0) as con:
            record_seen(con, path, policy)
    except (CanonRunError, duckdb.ConnectionException):  # busy, or this process holds it otherwise
        return False
    return True


def read_live_policy(con: duckdb.DuckDBPyConnection | None, path: Path, *, record: bool = True) -> Policy:
    """The policy a query must apply: the file at `path` when it is valid; the
    empty policy when there is no file and never was; otherwise unavailable."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        return Policy.unavailable(f"{path}: a symbolic link to a file that does not exist")
    if not path.exists():
        seen = policy_was_seen(con) if con is not None else None
        if seen is None:
            return Policy()
        return Policy.unavailable(f"{path}: the policy file is missing, but this workspace had a policy "
                                  f"(revision {seen})")
    try:
        policy = load_policy(path)
    except CanonInputError as exc:
        return Policy.unavailable(str(exc))
    if record and con is not None:
        record_seen(con, path, policy)
    return policy

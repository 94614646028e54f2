"""The live policy check: the policy every query applies can be read.

While it cannot (canon/registry/live_policy.py), every query answers `deny`
with reason `policy_unavailable`; this check fails with ERROR so the failure
reaches a person (a failing check posts an alert, canon/ops/alerts.py)
instead of only showing up as denied answers.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from canon.ops.checks import Outcome
from canon.registry.live_policy import read_live_policy
from canon.registry.policy import Policy


def policy_outcome(policy: Policy, path: Path) -> Outcome:
    """Passed when `policy` (read from `path`) is available."""
    if policy.available:
        return Outcome(True, "WARN", f"the live policy {path} is readable (revision {policy.revision}, "
                                     f"{len(policy.revoke)} revoke rules)",
                       metadata={"policy_path": str(path), "policy_revision": policy.revision,
                                 "revoke_rules": len(policy.revoke)})
    return Outcome(False, "ERROR", f"the live policy is unavailable, every query is denied until it is fixed: "
                                   f"{policy.unavailable_reason}",
                   metadata={"policy_path": str(path), "policy_revision": policy.revision})


def policy_available(con: duckdb.DuckDBPyConnection | None, path: Path) -> tuple[Policy, Outcome]:
    """Read the live policy the way queries do and judge it."""
    policy = read_live_policy(con, path)
    return policy, policy_outcome(policy, path)

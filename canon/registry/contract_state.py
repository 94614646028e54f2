"""Which version of each source contract the registry was built under, and the
rule that a new version is applied only as a compatible upgrade (docs/design.md, "Enforcing the contract at the
gate": version a contract like an API; a major change waits for consumers)."""

import json

import duckdb

from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.registry.contracts import Contract, check_upgrade, contract_from_dict


def _key(contract: Contract) -> str:
    return f"contract:{contract.contract}"


def applied(con: duckdb.DuckDBPyConnection, name: str) -> Contract | None:
    raw = registry.get_setting(con, f"contract:{name}")
    return contract_from_dict(json.loads(raw), path=f"registry settings contract:{name}") if raw else None


def apply(con: duckdb.DuckDBPyConnection, contract: Contract, *, source: str) -> None:
    """Refuse an incompatible contract change, naming the file and every reason;
    record the contract once it is in force."""
    old = applied(con, contract.contract)
    if old is not None and old != contract:
        refusals = check_upgrade(old, contract)
        if refusals:
            raise CanonInputError(source, "contract change refused: " + "; ".join(refusals), field="version")
    registry.set_setting(con, _key(contract), json.dumps(contract.model_dump(mode="json", by_alias=True)))

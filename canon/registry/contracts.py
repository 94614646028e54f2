"""Source contracts: one YAML file per source that a person and the code both read.

A contract is the agreement between the team that owns a source and the teams
that consume it (docs/design.md, "Enforcing the contract at the gate"): who owns it, what every record must carry, simple
quality rules, freshness, the pinned chunker and embedding model, and how fast a
deletion must propagate. The gate (canon.registry.gate) enforces it before any chunking.

Contracts are versioned like an API (semver). A change of enum values,
required fields, chunker, embedding model, source system or a loosening of
`pii_allowed` is a major change; it needs a major version bump, and a new major
version takes effect only once consumers have accepted it (`accepted_major`).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from canon.core.errors import CanonInputError

DEFAULT_STATUS_VALUES = ("approved", "draft", "superseded", "deprecated", "untrusted", "observed")

# What every document of the binding document contract must carry (docs/contracts.md, "Metadata keys").
DEFAULT_REQUIRED = (
    "doc_id", "object_id", "kind", "title", "status", "authority", "version",
    "valid_from", "allowed_roles", "text",
)

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


class _Strict(BaseModel):
    # A typo in a contract ("min_body_char") must fail, not be ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceSpec(_Strict):
    system: str = Field(min_length=1)
    classification: str = Field(min_length=1)
    pii_allowed: bool


class SchemaSpec(_Strict):
    required: tuple[str, ...] = DEFAULT_REQUIRED
    enums: dict[str, tuple[str, ...]] = Field(default_factory=lambda: {"status": DEFAULT_STATUS_VALUES})

    @field_validator("required")
    @classmethod
    def _unique_required(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        dupes = sorted({f for f in v if v.count(f) > 1})
        if dupes:
            raise ValueError(f"listed more than once: {', '.join(dupes)}")
        return v

    @field_validator("enums")
    @classmethod
    def _status_enum_default(cls, v: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for name, values in v.items():
            if not values:
                raise ValueError(f"enum {name!r} has no values")
        return {"status": DEFAULT_STATUS_VALUES, **v}


class QualitySpec(_Strict):
    min_body_chars: int = Field(ge=0)
    max_future_effective_days: int = Field(ge=0)
    max_body_bytes: int = Field(gt=0)
    # When a record states a real sha256 (sha256:<64 hex>) it must match its text:
    # a mismatch is silently changed source material.
    verify_content_hash: bool = False


class FreshnessSpec(_Strict):
    max_lag_hours: float = Field(gt=0)


class ProcessingSpec(_Strict):
    chunker: str = Field(min_length=1)
    embedding_model: str = Field(min_length=1)


class RetentionSpec(_Strict):
    delete_propagation_hours: float = Field(gt=0)


class DefaultsSpec(_Strict):
    """Metadata for the documents of a source that do not state it, such as a folder of plain
    Markdown without front matter (canon/registry/defaults.py). A key a document states wins."""

    kind: str | None = None
    status: str | None = None
    authority: int | None = Field(default=None, ge=0, le=100)
    version: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    allowed_roles: tuple[str, ...] | None = None
    # doc_id = object_id = id_prefix + the file's path without its suffix (`handbook/onboarding`),
    # for a document that names neither; its title is its first `# ` heading, else the file name.
    id_prefix: str = ""

    @field_validator("version", "valid_from", "valid_to", mode="before")
    @classmethod
    def _as_text(cls, v: Any) -> Any:
        # YAML reads `version: 1` as a number and `valid_from: 2026-01-01` as a date: keep them as written.
        return v.isoformat() if hasattr(v, "isoformat") else (str(v) if isinstance(v, (int, float)) else v)

    @field_validator("allowed_roles", mode="before")
    @classmethod
    def _roles(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class Contract(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    contract: str = Field(min_length=1)
    version: str
    owner: str = Field(min_length=1)
    consumers: tuple[str, ...] = ()
    source: SourceSpec
    schema_: SchemaSpec = Field(default_factory=SchemaSpec, alias="schema")
    quality: QualitySpec
    freshness: FreshnessSpec
    processing: ProcessingSpec
    retention: RetentionSpec
    accepted_major: int = Field(ge=0)
    # Globs (fnmatch, case-sensitive) of the object ids this source may publish approved revisions
    # for, and no other source may. Absent: any object no other source owns (docs/contracts.md,
    # "Source contracts"; enforced by canon.registry.claims).
    owns_objects: tuple[str, ...] | None = None
    # Metadata for documents that do not state it (absent: every document states every required key).
    defaults: DefaultsSpec | None = None

    @field_validator("owns_objects")
    @classmethod
    def _valid_globs(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None:
            bad = [g for g in v if not isinstance(g, str) or not g.strip() or g != g.strip()]
            if bad:
                raise ValueError(f"an empty or padded glob: {bad[0]!r}")
        return v

    def owns(self, object_id: str) -> bool:
        """This contract declares `object_id` its own (False when it declares nothing)."""
        return self.owns_objects is not None and any(fnmatch.fnmatchcase(object_id, g) for g in self.owns_objects)

    def may_publish(self, object_id: str) -> bool:
        """An approved revision of `object_id` is within what this source declared."""
        return self.owns_objects is None or self.owns(object_id)

    @field_validator("version", mode="before")
    @classmethod
    def _semver(cls, v: Any) -> Any:
        if not isinstance(v, str) or not _SEMVER.match(v):
            raise ValueError(f"{v!r} is not a semantic version (MAJOR.MINOR.PATCH)")
        return v

    @field_validator("accepted_major")
    @classmethod
    def _accepted_not_ahead(cls, v: int, info: ValidationInfo) -> int:
        version = info.data.get("version")  # validated first: declared earlier
        if version is not None and v > int(version.split(".")[0]):
            raise ValueError(f"{v} is ahead of the contract's major version ({version})")
        return v

    @property
    def schema(self) -> SchemaSpec:  # type: ignore[override]  # the YAML key, for readers
        return self.schema_

    @property
    def semver(self) -> tuple[int, int, int]:
        m = _SEMVER.match(self.version)
        assert m is not None  # validated
        return int(m.group(1)), int(m.group(2)), int(m.group(3))

    @property
    def major(self) -> int:
        return self.semver[0]

    @property
    def accepted(self) -> bool:
        """Consumers have accepted this major version: it may take effect."""
        return self.accepted_major >= self.major

    @property
    def label(self) -> str:
        return f"{self.contract}@{self.version}"


def _loc(loc: tuple[Any, ...]) -> str:
    return ".".join("schema" if p == "schema_" else str(p) for p in loc) or "(top level)"


def contract_from_dict(data: Any, *, path: Path | str = "<contract>") -> Contract:
    """Validate already-parsed YAML; errors name the file, the field and the reason."""
    if not isinstance(data, dict):
        raise CanonInputError(path, f"a contract is a YAML mapping, got {type(data).__name__}")
    try:
        return Contract.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        field = _loc(tuple(first["loc"]))
        reason = first["msg"].removeprefix("Value error, ")
        if len(errors) > 1:
            others = "; ".join(
                f"{_loc(tuple(e['loc']))}: {e['msg'].removeprefix('Value error, ')}" for e in errors[1:]
            )
            reason += f" (also: {others})"
        raise CanonInputError(path, reason, field=field) from None


def load_contract(path: Path | str) -> Contract:
    """Read and validate one contract file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CanonInputError(p, "contract file does not exist") from None
    except UnicodeDecodeError as exc:
        raise CanonInputError(p, f"not valid UTF-8 (byte offset {exc.start})") from None
    except OSError as exc:
        raise CanonInputError(p, f"cannot read contract: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise CanonInputError(
            p, f"invalid YAML: {problem}", line=(mark.line + 1) if mark is not None else None
        ) from None
    return contract_from_dict(data, path=p)


def load_contracts(folder: Path | str) -> dict[str, Contract]:
    """Every `*.yml` / `*.yaml` contract in a folder, keyed by contract name."""
    out: dict[str, Contract] = {}
    for p in sorted(Path(folder).glob("*.y*ml")):
        c = load_contract(p)
        if c.contract in out:
            raise CanonInputError(p, f"contract {c.contract!r} is defined twice", field="contract")
        out[c.contract] = c
    return out


def _set_diff(old: tuple[str, ...], new: tuple[str, ...]) -> str:
    added = [v for v in new if v not in old]
    removed = [v for v in old if v not in new]
    parts = []
    if added:
        parts.append("added " + ", ".join(added))
    if removed:
        parts.append("removed " + ", ".join(removed))
    return "; ".join(parts) or "reordered"


def major_changes(old: Contract, new: Contract) -> list[str]:
    """What changed that consumers must accept (each a short description)."""
    out: list[str] = []
    if set(old.schema_.required) != set(new.schema_.required):
        out.append(f"schema.required changed ({_set_diff(old.schema_.required, new.schema_.required)})")
    for name in sorted(set(old.schema_.enums) | set(new.schema_.enums)):
        o, n = old.schema_.enums.get(name), new.schema_.enums.get(name)
        if o is None:
            out.append(f"schema.enums.{name} added")
        elif n is None:
            out.append(f"schema.enums.{name} removed")
        elif set(o) != set(n):
            out.append(f"schema.enums.{name} changed ({_set_diff(o, n)})")
    if old.processing.chunker != new.processing.chunker:
        out.append(f"processing.chunker changed ({old.processing.chunker} -> {new.processing.chunker})")
    if old.processing.embedding_model != new.processing.embedding_model:
        out.append(
            "processing.embedding_model changed "
            f"({old.processing.embedding_model} -> {new.processing.embedding_model})"
        )
    if old.source.system != new.source.system:
        out.append(f"source.system changed ({old.source.system} -> {new.source.system})")
    if not old.source.pii_allowed and new.source.pii_allowed:
        out.append("source.pii_allowed loosened (false -> true)")
    # Who may read the documents that name no roles, and their ids, are what consumers rely on.
    o_roles = set(old.defaults.allowed_roles or ()) if old.defaults else set()
    n_roles = set(new.defaults.allowed_roles or ()) if new.defaults else set()
    if n_roles - o_roles and old.defaults is not None:
        out.append(f"defaults.allowed_roles loosened ({_set_diff(tuple(o_roles), tuple(n_roles))})")
    if old.defaults is not None and (new.defaults is None or old.defaults.id_prefix != new.defaults.id_prefix):
        out.append("defaults.id_prefix changed (the derived doc_ids change)" if new.defaults is not None
                   else "defaults removed (documents without front matter are no longer admitted)")
    return out


def check_upgrade(old: Contract, new: Contract) -> list[str]:
    """Why `new` may not replace `old` (empty list: the upgrade is allowed)."""
    refusals: list[str] = []
    if old.contract != new.contract:
        return [f"contract name changed ({old.contract} -> {new.contract}): a different contract, not an upgrade"]
    if new.semver < old.semver:
        refusals.append(f"version goes backwards ({old.version} -> {new.version})")
    elif new.semver == old.semver and new != old:
        refusals.append(f"contract changed without a version bump (still {new.version})")
    changes = major_changes(old, new)
    if new.major == old.major:
        refusals += [f"major change without major version bump: {c}" for c in changes]
    if new.major > old.major and not new.accepted:
        refusals.append(
            f"major version {new.major} not accepted by consumers yet (accepted_major {new.accepted_major})"
        )
    return refusals

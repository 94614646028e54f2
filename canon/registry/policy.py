"""The live access policy (policy.yml), checked at query time.

A document is visible to a role iff the role is in its `allowed_roles` and no
revoke rule matches. The live policy is read on every query, independently of
the ACL copied into the index, so a revocation takes effect before the index
is re-projected.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Iterable, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from canon.core.errors import CanonInputError

NO_POLICY_REVISION = "none"


class RevokeRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1)
    doc_id: str | None = None
    object_id: str | None = None

    @model_validator(mode="after")
    def _one_target(self) -> "RevokeRule":
        if not self.doc_id and not self.object_id:
            raise ValueError("a revoke rule needs doc_id or object_id")
        return self

    def matches(self, role: str, doc_id: str, object_id: str) -> bool:
        if not fnmatch.fnmatchcase(role, self.role):
            return False
        if self.doc_id and not fnmatch.fnmatchcase(doc_id, self.doc_id):
            return False
        if self.object_id and not fnmatch.fnmatchcase(object_id, self.object_id):
            return False
        return True


class Policy(BaseModel):
    model_config = ConfigDict(extra="allow")

    revision: str = NO_POLICY_REVISION
    revoke: list[RevokeRule] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _revision_as_text(cls, data):
        if isinstance(data, dict) and "revision" in data and data["revision"] is not None:
            data = {**data, "revision": str(data["revision"])}
        return data


class Readable(Protocol):
    doc_id: str
    object_id: str
    allowed_roles: Iterable[str]


def load_policy(path: Path | None) -> Policy:
    """Read policy.yml; a missing file is the empty policy, a broken one an error naming it."""
    if path is None or not Path(path).exists():
        return Policy()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise CanonInputError(path, f"not valid YAML: {exc}", line=None if line is None else line + 1) from None
    if not isinstance(data, dict):
        raise CanonInputError(path, "policy must be a mapping with 'revision' and 'revoke'")
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise CanonInputError(path, err["msg"], field=field) from None


def is_visible(policy: Policy, role: str, doc_id: str, object_id: str, allowed_roles: Iterable[str]) -> bool:
    if role not in set(allowed_roles):
        return False
    return not any(rule.matches(role, doc_id, object_id) for rule in policy.revoke)


def revoked_doc_ids(policy: Policy, role: str, docs: Iterable[Readable]) -> set[str]:
    """Doc ids whose ACL admits the role but which the live policy revokes."""
    return {
        d.doc_id for d in docs
        if role in set(d.allowed_roles) and any(r.matches(role, d.doc_id, d.object_id) for r in policy.revoke)
    }


def project(docs: Iterable, policy: Policy) -> list:
    """The ACL the index should carry under `policy`: each document's roles minus
    those a revoke rule removes. The index is a projection; the live check at
    query time stays the authority."""
    out = []
    for d in docs:
        roles = tuple(r for r in d.allowed_roles if not any(rule.matches(r, d.doc_id, d.object_id) for rule in policy.revoke))
        out.append(d if roles == tuple(d.allowed_roles) else d.model_copy(update={"allowed_roles": roles}))
    return out

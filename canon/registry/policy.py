"""The live access policy (policy.yml) and the one visibility rule.

A document is visible to a role iff the role is in its `allowed_roles` and no
revoke rule of the live policy matches (`is_visible`; `visible` and
`visible_docs` apply it to documents). Every query-time decision goes through
these functions: `canon ask`, `canon resolve` / `canon lineage` and the
evaluation's leak check. The live policy is read on every query, independently
of the ACL copied into the index, so a revocation takes effect before the
index is re-projected (docs/design.md, "Access policy").

The served index keeps its own copy of the ACL: `project` computes it at
build time, and `canon/index/search.py` turns the role into a LanceDB
prefilter over that copy. That prefilter only narrows retrieval; the rule here
stays the authority, and `revoked_doc_ids` lists what the copy may still admit
until the index is re-projected.

The policy fails closed. `load_policy` refuses an empty, unreadable or
unparsable file, unknown top-level keys and malformed rules (pydantic,
`extra="forbid"`; NUL and control characters in a glob are refused), naming
the file. At query time such a refusal, or a policy file that existed and
disappeared, becomes the *unavailable* policy (`Policy.unavailable`, read by
`canon/registry/live_policy.py`): it revokes everything, and `canon ask`,
`canon resolve` and `canon lineage` answer `deny` with reason
`policy_unavailable` until a valid policy is back (docs/contracts.md,
"Access policy").
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Iterable, Protocol, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from canon.core.errors import CanonInputError

NO_POLICY_REVISION = "none"
UNAVAILABLE_REVISION = "unavailable"
# A glob is matched against ids and role names: control characters (NUL
# included) never occur in either and only hide what a rule really says.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class RevokeRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1)
    doc_id: str | None = None
    object_id: str | None = None

    @field_validator("role", "doc_id", "object_id")
    @classmethod
    def _printable_glob(cls, v: str | None) -> str | None:
        if v is not None and _CONTROL.search(v):
            raise ValueError("a glob must not contain NUL or control characters")
        return v

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
    # Unknown top-level keys are refused: a misspelled `revokes:` must not read as "no revocations".
    model_config = ConfigDict(extra="forbid")

    revision: str = NO_POLICY_REVISION
    revoke: list[RevokeRule] = Field(default_factory=list)
    # Why the live policy could not be read; never set from a file (see `unavailable`).
    _unavailable: str | None = PrivateAttr(default=None)

    @classmethod
    def unavailable(cls, why: str) -> "Policy":
        """The fail-closed policy: it revokes every (document, role) pair."""
        p = cls(revision=UNAVAILABLE_REVISION)
        p._unavailable = why
        return p

    @property
    def available(self) -> bool:
        return self._unavailable is None

    @property
    def unavailable_reason(self) -> str | None:
        return self._unavailable

    @model_validator(mode="before")
    @classmethod
    def _revision_as_text(cls, data):
        if isinstance(data, dict) and "revision" in data and data["revision"] is not None:
            data = {**data, "revision": str(data["revision"])}
        return data

    def revokes(self, role: str, doc_id: str, object_id: str) -> bool:
        """Does any revoke rule take this (document, role) away? Everything, when unavailable."""
        if self._unavailable is not None:
            return True
        return any(rule.matches(role, doc_id, object_id) for rule in self.revoke)

    def visibility_key(self) -> tuple:
        """Everything visibility under this policy depends on: the revision and
        every revoke rule (a cache of visible sets is keyed by it)."""
        return (self.revision, self._unavailable, tuple((r.role, r.doc_id, r.object_id) for r in self.revoke))


class Readable(Protocol):
    doc_id: str
    object_id: str
    allowed_roles: Iterable[str]


R = TypeVar("R", bound=Readable)


def load_policy(path: Path | None) -> Policy:
    """Read policy.yml; a missing file is the empty policy, a broken one an error naming it.

    Broken: unreadable (a directory, no permission), not UTF-8, not YAML, empty,
    not a mapping, an unknown top-level key or a malformed rule."""
    if path is None or not Path(path).exists():
        return Policy()
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise CanonInputError(path, "is a directory, not a policy file") from None
    except UnicodeDecodeError as exc:
        raise CanonInputError(path, f"not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise CanonInputError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise CanonInputError(path, f"not valid YAML: {exc}", line=None if line is None else line + 1) from None
    if data is None:
        # An empty file is a truncated or botched write far more often than a policy.
        raise CanonInputError(path, "the policy file is empty; write `revision:` and `revoke: []` for no revocations")
    if not isinstance(data, dict):
        raise CanonInputError(path, "policy must be a mapping with 'revision' and 'revoke'")
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = ("unknown key: a policy has only 'revision' and 'revoke', a revoke rule only "
                   "'role', 'doc_id' and 'object_id'")
        raise CanonInputError(path, msg, field=field) from None


def is_visible(policy: Policy, role: str, doc_id: str, object_id: str, allowed_roles: Iterable[str]) -> bool:
    """The visibility rule: the document's ACL admits the role and the live policy does not revoke it."""
    if role not in set(allowed_roles):
        return False
    return not policy.revokes(role, doc_id, object_id)


def visible(doc: Readable, role: str, policy: Policy) -> bool:
    return is_visible(policy, role, doc.doc_id, doc.object_id, doc.allowed_roles)


def visible_docs(docs: Iterable[R], role: str, policy: Policy) -> list[R]:
    """The documents `role` may see under `policy`, in their given order."""
    return [d for d in docs if visible(d, role, policy)]


def revoked_doc_ids(docs: Iterable[Readable], role: str, policy: Policy) -> list[str]:
    """Doc ids, in their given order, whose ACL admits the role but which the
    live policy revokes: what the index's copy of the ACL may still admit."""
    return [d.doc_id for d in docs if role in d.allowed_roles and not visible(d, role, policy)]


def project(docs: Iterable, policy: Policy) -> list:
    """The ACL the index should carry under `policy`: each document's roles minus
    those a revoke rule removes. The index is a projection; the live check at
    query time stays the authority."""
    out = []
    for d in docs:
        roles = tuple(r for r in d.allowed_roles if not policy.revokes(r, d.doc_id, d.object_id))
        out.append(d if roles == tuple(d.allowed_roles) else d.model_copy(update={"allowed_roles": roles}))
    return out

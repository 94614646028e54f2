"""What a query must name before Canon looks at anything: a question with
words in it and a role Canon knows. Both are input errors (CLI exit 2), not
answers: a blank question would otherwise be answered by whatever retrieval
ranks first, and a misspelled role would read as a plain `deny`."""

from __future__ import annotations

from typing import Iterable

from canon.core.errors import CanonInputError
from canon.registry.policy import Policy

_WILDCARDS = set("*?[")


def require_question(question: str) -> str:
    if not question or not question.strip():
        raise CanonInputError("question", "the question is empty; ask about a governed object or a date")
    return question


def known_roles(docs: Iterable, policy: Policy) -> set[str]:
    """Every role some document's `allowed_roles` lists, and every role a revoke
    rule names literally (a glob names no role in particular)."""
    roles: set[str] = set()
    for d in docs:
        roles.update(d.allowed_roles)
    roles.update(r.role for r in policy.revoke if not (_WILDCARDS & set(r.role)))
    return roles


def require_known_role(role: str, docs: Iterable, policy: Policy, *, document_roles: set[str] | None = None) -> str:
    """The role, if Canon knows it; the error does not list the known roles.
    `document_roles`: the roles the documents list, when the caller read them
    without loading the documents (canon/ask/scope.py, `registry_roles`)."""
    if not role or not role.strip():
        raise CanonInputError("--role", "the role is empty")
    known = known_roles(docs, policy) if document_roles is None else known_roles((), policy) | document_roles
    if role not in known:
        raise CanonInputError("--role", f"unknown role {role!r}: no document's allowed_roles nor the policy "
                                        "names it (check the spelling)")
    return role

"""Who is asking: the principal the context server fixes for every call.

Over stdio the role is fixed when the server is launched (`canon serve mcp
--role ROLE`). Over HTTP each request carries a bearer token; the server looks
its sha256 up in a server-side tokens file (docs/contracts.md, "Context
server"). No tool takes a role, a principal or a policy: a principal never
comes from a tool argument or from retrieved text.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from canon.core.errors import CanonInputError

SHA256_HEX = r"^[0-9a-f]{64}$"


@dataclass(frozen=True)
class Principal:
    name: str        # recorded in answer_log.principal; explain_answer shows a principal only its own answers
    role: str        # what the one visibility rule (canon/registry/policy.py) is evaluated for
    transport: str   # "stdio" or "http", recorded in answer_log.transport


def stdio_principal(role: str) -> Principal:
    if not role.strip():
        raise CanonInputError("--role", "a role is required")
    return Principal(name=f"stdio:{role}", role=role, transport="stdio")


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sha256: str = Field(pattern=SHA256_HEX)
    principal: str = Field(min_length=1, max_length=200)
    role: str = Field(min_length=1, max_length=200)


class TokensFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: list[TokenEntry]


def load_tokens(path: Path) -> dict[str, Principal]:
    """sha256 hex -> principal. A missing or broken file is an input error naming it."""
    path = Path(path)
    if not path.exists():
        raise CanonInputError(path, "tokens file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CanonInputError(path, f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CanonInputError(path, "a tokens file is a mapping with a 'tokens' list")
    try:
        parsed = TokensFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        # The field and the reason only: the rejected value may be a token pasted by mistake.
        raise CanonInputError(path, err["msg"], field=".".join(str(p) for p in err["loc"])) from None
    out: dict[str, Principal] = {}
    for i, t in enumerate(parsed.tokens):
        if t.sha256 in out:
            raise CanonInputError(path, "the same token hash is listed twice", field=f"tokens.{i}.sha256")
        out[t.sha256] = Principal(name=t.principal, role=t.role, transport="http")
    return out


class TokenTable:
    """The tokens file, re-read when it changes on disk, so removing a token
    takes effect on the next request."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._stamp: tuple | None = None
        self._by_hash: dict[str, Principal] = {}
        self.refresh()

    def refresh(self) -> None:
        st = os.stat(self.path) if self.path.exists() else None
        stamp = None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self._stamp or stamp is None:
            self._by_hash = load_tokens(self.path)
            self._stamp = stamp

    def lookup(self, authorization: str | None) -> Principal | None:
        """The principal of an `Authorization: Bearer <token>` header, or None."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        self.refresh()
        return self._by_hash.get(token_sha256(token.strip()))

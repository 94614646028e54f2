"""Pydantic models for the binding document contract (docs/contracts.md, "Documents")."""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from canon.core.ids import content_hash as hash_text

# The dossier's metadata keys, exactly; anything else is kept as metadata.
CONTRACT_KEYS = (
    "doc_id", "object_id", "kind", "title", "status", "authority", "version",
    "valid_from", "valid_to", "allowed_roles", "supersedes", "content_hash",
)


class Status(str, Enum):
    approved = "approved"
    draft = "draft"
    superseded = "superseded"
    deprecated = "deprecated"
    untrusted = "untrusted"
    observed = "observed"


class Document(BaseModel):
    """One evidence revision. `doc_id` is immutable per revision; `object_id` is
    the stable semantic object across revisions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str = Field(min_length=1)
    object_id: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    title: str = Field(min_length=1)
    status: Status
    authority: int = Field(ge=0, le=100)
    version: str
    valid_from: dt.date
    valid_to: dt.date | None = None
    allowed_roles: tuple[str, ...]
    supersedes: str | None = None
    content_hash: str = ""
    text: str
    # Where it came from: file path (relative to the corpus root) or dbt unique id.
    source_uri: str = ""
    source_system: str = "corpus"
    source_revision: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v

    @field_validator("allowed_roles", mode="before")
    @classmethod
    def _roles_as_list(cls, v: Any) -> Any:
        if isinstance(v, str):
            return (v,)
        return v

    @model_validator(mode="after")
    def _check_interval_and_hash(self) -> "Document":
        if self.valid_to is not None and self.valid_to <= self.valid_from:
            raise ValueError(f"valid_to {self.valid_to} <= valid_from {self.valid_from}")
        if not self.content_hash:
            object.__setattr__(self, "content_hash", hash_text(self.text))
        return self

    def in_effect(self, day: dt.date) -> bool:
        """Half-open business time: valid_from <= day < valid_to."""
        return self.valid_from <= day and (self.valid_to is None or day < self.valid_to)

    @property
    def is_authoritative(self) -> bool:
        return self.status == Status.approved

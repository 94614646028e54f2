"""The configuration file named by CANON_CONFIG, as written: its keys (pydantic,
unknown keys refused) and reading it with bounded work. Resolving it against the
environment and the demo defaults is canon/core/settings.py; the keys are
described in docs/contracts.md, "Configuration"."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from canon.core.bounded_yaml import load_bounded
from canon.core.dates import MONTHS
from canon.core.fiscal_calendar import NAMED_BY

# A configuration file is a few dozen lines; anything this large is not one.
MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the configuration: the file, the dotted key and the reason."""

    file: str
    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file} [{self.key}]: {self.reason}" if self.key else f"{self.file}: {self.reason}"


class _Keys(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DbtKeys(_Keys):
    project_dir: str | None = None
    profiles_dir: str | None = None
    target: str | None = None
    artifacts_dir: str | None = None


class DocumentKeys(_Keys):
    path: str
    contract: str | None = None


class GoldKeys(_Keys):
    file: str
    corpus: str | None = None
    name: str | None = None


class ReleaseGateKeys(_Keys):
    gold: list[GoldKeys]

    @field_validator("gold", mode="before")
    @classmethod
    def _file_only(cls, v: Any) -> Any:
        # `- gold/cases.json` is short for `- {file: gold/cases.json}`.
        return [{"file": x} if isinstance(x, str) else x for x in v] if isinstance(v, list) else v


class CalendarKeys(_Keys):
    # The month the fiscal year starts: 1 to 12 or its English name ("July", "jul").
    fiscal_year_start: int | str
    fiscal_year_named_by: str = "end"

    @field_validator("fiscal_year_start", mode="after")
    @classmethod
    def _month(cls, v: int | str) -> int:
        if isinstance(v, int):
            if not 1 <= v <= 12:
                raise ValueError(f"{v} is no month: write 1 to 12 or a month's name")
            return v
        named = {i for m, i in MONTHS.items() if len(v.strip()) >= 3 and m.startswith(v.strip().lower())}
        if len(named) != 1:
            raise ValueError(f"{v!r} is no month: write 1 to 12 or a month's name")
        return named.pop()

    @field_validator("fiscal_year_named_by", mode="after")
    @classmethod
    def _named_by(cls, v: str) -> str:
        if v not in NAMED_BY:
            raise ValueError(f"{v!r}: write end (FY2027 ends in 2027) or start (FY2027 starts in 2027)")
        return v


class ConfigKeys(_Keys):
    home: str | None = None
    dbt: DbtKeys | None = None
    documents: list[DocumentKeys] | None = None
    policy: str | None = None
    default_roles: list[str] | None = None
    release_gate: ReleaseGateKeys | None = None
    calendar: CalendarKeys | None = None

    @field_validator("documents", mode="before")
    @classmethod
    def _path_only(cls, v: Any) -> Any:
        # `- docs/` is short for `- {path: docs/}`.
        return [{"path": x} if isinstance(x, str) else x for x in v] if isinstance(v, list) else v

    @field_validator("default_roles", mode="before")
    @classmethod
    def _one_role(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v   # as `allowed_roles`: one string is a one-item list

    @field_validator("default_roles", mode="after")
    @classmethod
    def _roles_named(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("is empty: name at least one role, or leave the key out")
        for i, role in enumerate(v or []):
            if not role.strip() or role != role.strip():
                raise ValueError(f"role {i} ({role!r}) is empty or has leading or trailing whitespace")
        return v


def _key(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems(path: Path, exc: ValidationError) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            reason = "unknown key (see docs/contracts.md, \"Configuration\")"
        else:
            reason = err["msg"].removeprefix("Value error, ")
        out.append(Problem(str(path), _key(loc) or "(top level)", reason))
    return out


def read_config_file(path: Path) -> tuple[ConfigKeys | None, list[Problem]]:
    """The file's keys, or None and every problem found (never a traceback)."""
    where = str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None, [Problem(where, "", "configuration file does not exist (CANON_CONFIG names it)")]
    except OSError as exc:
        return None, [Problem(where, "", f"cannot read the configuration file: {exc.strerror or exc}")]
    if path.is_dir():
        return None, [Problem(where, "", "is a directory, not a configuration file")]
    if size > MAX_CONFIG_BYTES:
        return None, [Problem(where, "", f"file is {size} bytes, over the {MAX_CONFIG_BYTES}-byte limit "
                                         "of a configuration file")]
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [Problem(where, "", f"not UTF-8 text (byte offset {exc.start})")]
    except OSError as exc:
        return None, [Problem(where, "", f"cannot read the configuration file: {exc.strerror or exc}")]

    class _Refused(Exception):
        pass

    try:
        data = load_bounded(text, what="the configuration file", error=_Refused)
    except _Refused as exc:
        return None, [Problem(where, "", str(exc))]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        return None, [Problem(where, "", f"invalid YAML: {line}{problem}")]
    if data is None:
        data = {}   # an empty file: every key at its default
    if not isinstance(data, dict):
        return None, [Problem(where, "", f"a configuration is a YAML mapping of keys, got {type(data).__name__}")]
    try:
        return ConfigKeys.model_validate(data), []
    except ValidationError as exc:
        return None, _problems(path, exc)

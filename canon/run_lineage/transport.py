"""Where run events go: the transport settings and the openlineage-python transport built from them.

Secrets never travel in events: the http token is read at send time from the
environment variable *named* by `api_key_env` and goes only into the
Authorization header (see docs/design.md, "Lineage at two grains").

Credentials never travel in a URL either: userinfo, a query string or a
fragment in the url or the endpoint is refused (Dagster's compute logs and
error messages print URLs), and the http transport refuses an `api_key_env`
that names no set variable (a token pasted there would otherwise send every
event unauthenticated). `redact_url` is what any log line shows of a URL.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from openlineage.client.serde import Serde
from openlineage.client.transport.console import ConsoleConfig, ConsoleTransport
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport, TokenProvider
from openlineage.client.transport.http_common import DEFAULT_RETRY_CONFIG
from openlineage.client.transport.noop import NoopConfig, NoopTransport
from openlineage.client.transport.transport import Transport
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from canon.core.config import CanonPaths, inside_root
from canon.core.errors import CanonInputError

_ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TransportKind = Literal["file", "console", "http", "none"]

# Environment variables read by TransportConfig.from_env, by config field.
ENV_VARS: dict[str, str] = {
    "kind": "CANON_OPENLINEAGE_TRANSPORT",
    "path": "CANON_OPENLINEAGE_PATH",
    "url": "CANON_OPENLINEAGE_URL",
    "endpoint": "CANON_OPENLINEAGE_ENDPOINT",
    "timeout_s": "CANON_OPENLINEAGE_TIMEOUT_S",
    "retries": "CANON_OPENLINEAGE_RETRIES",
    "api_key_env": "CANON_OPENLINEAGE_API_KEY_ENV",
}


class TransportConfig(BaseModel):
    """Where run events go. Defaults to a JSONL file under CANON_HOME."""

    # hide_input_in_errors: a token pasted into the wrong field must not be echoed back.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    kind: TransportKind = "file"
    # file: relative to CANON_HOME, or absolute but inside it. None = $CANON_HOME/openlineage/events.jsonl.
    path: Path | None = None
    # None = CANON_HOME from the environment (canon.core.config.CanonPaths).
    canon_home: Path | None = None
    # http: base url of the lineage service; the endpoint is joined onto it.
    url: str | None = None
    endpoint: str = "api/v1/lineage"
    timeout_s: float = Field(default=5.0, gt=0, le=300)
    # Retries per event (connect, read, 5xx). Small on purpose: a down endpoint must not stall runs.
    retries: int = Field(default=1, ge=0, le=10)
    # The NAME of an environment variable holding a bearer token, never the token.
    api_key_env: str | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _normalise_kind(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("api_key_env")
    @classmethod
    def _is_env_var_name(cls, v: str | None, info: ValidationInfo) -> str | None:
        # The messages never repeat the value: it may be the token itself.
        if v is not None and not _ENV_VAR_NAME.match(v):
            raise ValueError("must be the name of an environment variable holding the token, not the token itself")
        if v is not None and info.data.get("kind") == "http" and not os.environ.get(v, "").strip():
            raise ValueError("names an environment variable that is not set: it must be the NAME of the "
                             "variable holding the token, not the token itself, and that variable must be set")
        return v

    @field_validator("url")
    @classmethod
    def _plain_http_url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        v = v.strip()
        try:
            parts = urlsplit(v)
            parts.port  # noqa: B018 -- a malformed port raises here, not at the first event
        except ValueError:
            raise ValueError("must be an http(s) URL such as http://localhost:5000") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as http://localhost:5000")
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            # userinfo would surface in logs and error messages; tokens go through api_key_env.
            raise ValueError("must not carry credentials; name the token's environment variable in api_key_env")
        _no_query(parts.query, parts.fragment)
        return v

    @field_validator("endpoint")
    @classmethod
    def _plain_endpoint(cls, v: str) -> str:
        parts = urlsplit(v)
        _no_query(parts.query, parts.fragment)
        if parts.scheme or parts.netloc:
            raise ValueError("must be a path such as api/v1/lineage, not a URL")
        return v

    @model_validator(mode="after")
    def _complete_for_kind(self) -> "TransportConfig":
        if self.kind == "http" and not self.url:
            raise ValueError("the http transport needs a url (CANON_OPENLINEAGE_URL)")
        if self.kind == "file" or self.path is not None:
            self.file_path()  # refuses a path outside CANON_HOME now, not at the first event
        return self

    def home(self) -> Path:
        return (self.canon_home or CanonPaths.from_env().home).resolve()

    def file_path(self) -> Path:
        """The JSONL file for the file transport, guaranteed inside CANON_HOME."""
        home = self.home()
        candidate = self.path if self.path is not None else CanonPaths(home).openlineage_file
        return inside_root(home, Path(candidate), what="OpenLineage event file")

    def target(self) -> str:
        """Where events go, safe to log (no token, no credentials)."""
        if self.kind == "file":
            return str(self.file_path())
        if self.kind == "http":
            return redact_url(_join_url(self.url or "", self.endpoint))
        return self.kind

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "TransportConfig":
        """Read CANON_OPENLINEAGE_* variables; non-None `overrides` win over the environment.

        Errors are CanonInputError naming the variable (or field) and the reason.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        source: dict[str, str] = {}
        for fld, var in ENV_VARS.items():
            raw = env.get(var)
            if raw is not None and raw.strip() != "":
                values[fld] = raw.strip()
                source[fld] = var
        for fld, value in overrides.items():
            if value is not None:
                values[fld] = value
                source[fld] = fld
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = str(err["loc"][0]) if err.get("loc") else ""
            where = source.get(loc, loc) or ", ".join(source.values()) or "defaults"
            reason = str(err["msg"]).removeprefix("Value error, ")
            raise CanonInputError("OpenLineage transport settings", reason, field=where) from None


def _no_query(query: str, fragment: str) -> None:
    if query or fragment:
        # A query string (?api_key=...) is where tokens hide, and it is printed wherever the URL is.
        raise ValueError("must not carry a query string or fragment (credentials in a URL end up in logs); "
                         "name the token's environment variable in api_key_env")


def redact_url(url: str) -> str:
    """The URL as logs may show it: scheme, host, port and path; never userinfo,
    query or fragment (the settings refuse them; this keeps a log line safe regardless)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparsable url>"
    if ":" in host:
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def _join_url(url: str, endpoint: str) -> str:
    # urljoin("http://h/base", "api/v1/lineage") would drop "base": keep the base path.
    return url.rstrip("/") + "/" + endpoint.lstrip("/")


class _EnvTokenProvider(TokenProvider):
    """Bearer token read from the environment at send time; never stored on the config."""

    def __init__(self, env_name: str) -> None:
        super().__init__({})
        self.env_name = env_name

    def get_bearer(self) -> str | None:
        token = os.environ.get(self.env_name, "").strip()
        return f"Bearer {token}" if token else None

    def __repr__(self) -> str:
        return f"_EnvTokenProvider(env_name={self.env_name!r})"


class _StdoutTransport(ConsoleTransport):
    """The client's console transport logs at INFO, which no default logging setup shows.

    Printing keeps "console" visible in a terminal and in Dagster's captured stdout.
    """

    def emit(self, event: Any) -> None:
        sys.stdout.write(Serde.to_json(event) + "\n")
        sys.stdout.flush()


def build_transport(config: TransportConfig) -> Transport:
    if config.kind == "file":
        path = config.file_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        # append=True: one JSON object per line in one file (the default writes a file per event).
        return FileTransport(FileConfig(log_file_path=str(path), append=True))
    if config.kind == "console":
        return _StdoutTransport(ConsoleConfig())
    if config.kind == "http":
        retry = {**DEFAULT_RETRY_CONFIG, "total": config.retries, "connect": config.retries,
                 "read": config.retries, "backoff_factor": 0.2}
        return HttpTransport(
            HttpConfig(
                url=(config.url or "").rstrip("/") + "/",
                endpoint=config.endpoint.lstrip("/"),
                timeout=config.timeout_s,
                auth=_EnvTokenProvider(config.api_key_env) if config.api_key_env else TokenProvider({}),
                retry=retry,
            )
        )
    return NoopTransport(NoopConfig())

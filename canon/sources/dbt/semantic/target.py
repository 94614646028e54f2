"""The warehouse a metric value runs against: the one the configured dbt target names.

The team's `profiles.yml` is rendered by dbt itself (`dbt.config.profile.Profile`,
the code `dbt run` uses), so `env_var()`, `as_number` and target selection behave
exactly as in dbt; the result is the adapter's own credentials object. Nothing
here logs, stores or repeats a credential: error messages name the file, the
profile and the target, and dbt's own message (which names a missing variable,
never its value).

- DuckDB: the `path` (a relative path as dbt resolves it: relative to the dbt
  project folder, where dagster-dbt starts dbt, resources/dbt.py), the catalog
  dbt-duckdb names for it (`database`: the file's stem, or an `attach` alias
  the profile names instead) and the attached files, each opened read-only by
  canon/sources/dbt/semantic/warehouse.py.
- Any other adapter (PostgreSQL through dbt-postgres): the credentials, for a
  connection opened by the adapter's own connection manager
  (canon/sources/dbt/semantic/warehouse.py, AdapterWarehouse).

dbt is imported on first use only: `canon ask` pays for it only when a question
needs a metric value (canon/registry/workspace.py builds the engine lazily).
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from canon.sources.dbt.semantic.errors import NotComputable

_DBT_LOCK = threading.Lock()   # dbt's global flags are set once per process
_QUIET_LOCK = threading.RLock()


@dataclass(frozen=True)
class Attached:
    alias: str
    path: str            # a file path (made absolute) or a URL dbt-duckdb hands to ATTACH as is
    type: str | None = None


@dataclass(frozen=True)
class WarehouseTarget:
    """One rendered dbt target: where metric SQL runs."""

    adapter: str                         # dbt's adapter type: "duckdb", "postgres", …
    profile: str
    target: str
    database: str                        # the catalog dbt writes relations into (node_relation.database)
    profiles_file: Path
    path: Path | None = None             # DuckDB: the database file
    attached: tuple[Attached, ...] = ()  # DuckDB: `attach` entries
    # The adapter's credentials (other adapters): kept out of repr and comparisons.
    credentials: Any = field(default=None, repr=False, compare=False)

    @property
    def describe(self) -> str:
        return f"target {self.target!r} of profile {self.profile!r} ({self.profiles_file})"


def project_profile_name(project_dir: Path) -> str:
    """The `profile:` of dbt_project.yml (dbt has no default: a project without one is an error)."""
    project_file = project_dir / "dbt_project.yml"
    try:
        data = yaml.safe_load(project_file.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise NotComputable(f"{project_file}: cannot read the dbt project: {exc}") from None
    name = data.get("profile") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise NotComputable(f"{project_file}: names no `profile:`, so no dbt target names a warehouse")
    return name.strip()


@contextlib.contextmanager
def quiet_dbt() -> Iterator[None]:
    """dbt's event loggers off for one call: importing dbt_common adds a stdout logger, and an
    event (e.g. an adapter that fails to import) would land in `canon ask --json`'s output."""
    with _QUIET_LOCK:
        from dbt_common.events.event_manager_client import get_event_manager

        manager = get_event_manager()
        saved, manager.loggers = list(manager.loggers), []
        try:
            yield
        finally:
            manager.loggers = saved


def safe_message(exc: BaseException, env: Mapping[str, str]) -> str:
    """dbt's message on one line, with no value in it: dbt's secret variables (DBT_ENV_SECRET_*)
    scrubbed as dbt scrubs them, and the value a credentials check quotes ("'x' is not of type
    'integer'") dropped, since that value may be a secret."""
    text = " ".join(str(exc).split())
    for key, value in env.items():
        if key.startswith("DBT_ENV_SECRET_") and value.strip():
            text = text.replace(value, "*****")
    return _QUOTED_VALUE.sub("a value is not of type", text)


_QUOTED_VALUE = re.compile(r"(?:'[^']*'|\S+) is not of type")


def _render_profile(profiles_dir: Path, profile: str, target: str | None, env: Mapping[str, str]):
    """dbt's Profile for (profile, target), rendered with `env` as dbt's environment."""
    with _DBT_LOCK, quiet_dbt():
        from argparse import Namespace

        from dbt.config.profile import Profile, read_profile
        from dbt.config.renderer import ProfileRenderer
        from dbt.flags import get_flags, set_flags
        from dbt_common.context import set_invocation_context

        if not hasattr(get_flags(), "LOG_CACHE_EVENTS"):
            # The one global flag building a dbt Profile reads (LOG_CACHE_EVENTS); dbt's full flag
            # set (dbt.flags.set_from_args) would import dbt's CLI, about 1 s more.
            set_flags(Namespace(**{**vars(get_flags()), "LOG_CACHE_EVENTS": False}))
        # env_var() reads dbt's invocation context (a context variable: this thread only).
        set_invocation_context(dict(env))
        raw = read_profile(str(profiles_dir))
        if not raw:
            raise NotComputable(f"{profiles_dir / 'profiles.yml'} does not exist or is empty")
        return Profile.from_raw_profiles(raw, profile, ProfileRenderer({}), target_override=target)


# The one Jinja expression a plain profile may hold: `{{ env_var('NAME') }}` or
# `{{ env_var('NAME', 'default') }}`, single or double quotes, no filter.
_ENV_VAR = re.compile(r"""\{\{\s*env_var\(\s*(['"])([A-Za-z_][A-Za-z0-9_]*)\1\s*(?:,\s*(['"])([^'"{}]*)\3\s*)?\)\s*\}\}""")
_JINJA = ("{{", "{%", "{#")


def _render_plain(value: Any, env: Mapping[str, str]) -> Any:
    """`value` (a profile's parsed YAML) with each env_var() replaced as dbt renders it, or
    LookupError when anything else needs dbt: another expression, a filter, an unset variable
    without a default."""
    if isinstance(value, dict):
        return {k: _render_plain(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_render_plain(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(m: re.Match) -> str:
        name, default = m.group(2), m.group(4)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise LookupError(name)

    out = _ENV_VAR.sub(one, value)
    if any(j in _ENV_VAR.sub("", value) for j in _JINJA):
        raise LookupError("jinja")
    return out


def plain_duckdb_target(project_dir: Path, profiles_dir: Path, profile_name: str, target: str | None,
                        env: Mapping[str, str]) -> WarehouseTarget | None:
    """The DuckDB target of a profile that needs no dbt to render, read without importing dbt
    (importing it is about 4 s of a `canon ask` process): YAML whose only Jinja is env_var().
    The same values dbt-duckdb derives (its DuckDBCredentials: `database` is the path's catalog
    unless the profile names an attach alias). Anything else is None, and dbt renders it and
    says what is wrong: another adapter, another expression, an unset variable, a path that is
    not a local file, a `database` the path contradicts. tests/test_warehouse_targets.py
    compares both readings."""
    try:
        raw = yaml.safe_load((profiles_dir / "profiles.yml").read_text(encoding="utf-8"))
        profile = (raw or {})[profile_name]
        # Only what dbt reads for this target is rendered (another output may need dbt).
        name = target or _render_plain(profile.get("target"), env) or "default"
        out = _render_plain(profile["outputs"][name], env)
    except (OSError, yaml.YAMLError, LookupError, TypeError, AttributeError):
        return None
    path = out.get("path") if isinstance(out, dict) else None
    if out.get("type") != "duckdb" or not isinstance(path, str) or not path or path == ":memory:" \
            or "://" in path or path.startswith("md:") or out.get("remote"):
        return None
    attach = out.get("attach") or []
    if not isinstance(attach, list) or not all(isinstance(a, dict) and isinstance(a.get("path"), str) for a in attach):
        return None
    aliases = [a["alias"] for a in attach if a.get("alias")]
    database = out.get("database", _catalog_of(path))
    if database != _catalog_of(path) and database not in aliases:
        return None
    return WarehouseTarget(
        adapter="duckdb", profile=profile_name, target=name, database=str(database),
        profiles_file=profiles_dir / "profiles.yml", path=Path(_local(path, project_dir)),
        attached=tuple(Attached(alias=a.get("alias") or _catalog_of(a["path"]), path=_local(a["path"], project_dir),
                                type=a.get("type")) for a in attach))


def resolve_target(project_dir: Path, profiles_dir: Path, target: str | None,
                   env: Mapping[str, str]) -> WarehouseTarget:
    """The warehouse of the configured dbt target, or NotComputable naming the file and why.

    `env` is the environment dbt would see (the demo's profile reads CANON_HOME from it)."""
    profile_name = project_profile_name(project_dir)
    plain = plain_duckdb_target(project_dir, profiles_dir, profile_name, target, env)
    if plain is not None:
        return plain
    return dbt_rendered_target(project_dir, profiles_dir, profile_name, target, env)


def dbt_rendered_target(project_dir: Path, profiles_dir: Path, profile_name: str, target: str | None,
                        env: Mapping[str, str]) -> WarehouseTarget:
    """resolve_target through dbt's own rendering (every profile dbt reads)."""
    profiles_file = profiles_dir / "profiles.yml"
    try:
        profile = _render_profile(profiles_dir, profile_name, target, env)
    except NotComputable:
        raise
    except Exception as exc:  # dbt's DbtProfileError, EnvVarMissingError, a credentials validation error
        # dbt's message names the profile, target or variable; safe_message drops any value in it.
        detail = safe_message(exc, env)
        raise NotComputable(f"{profiles_file}: profile {profile_name!r}"
                            f"{f', target {target!r}' if target else ''} cannot be rendered by dbt: {detail}") from None
    creds = profile.credentials
    adapter = str(getattr(creds, "type", "") or "")
    database = str(getattr(creds, "database", "") or "")
    common = dict(adapter=adapter, profile=profile_name, target=profile.target_name, database=database,
                  profiles_file=profiles_file)
    if adapter != "duckdb":
        return WarehouseTarget(**common, credentials=creds)
    raw_path = str(getattr(creds, "path", "") or "")
    if raw_path in ("", ":memory:") or "://" in raw_path or raw_path.startswith("md:"):
        raise NotComputable(f"{profiles_file}: DuckDB target {profile.target_name!r} of profile {profile_name!r} "
                            f"is not a local database file ({raw_path or ':memory:'}): Canon reads a file read-only")
    attached = tuple(
        Attached(alias=a.alias or _catalog_of(a.path), path=_local(a.path, project_dir), type=a.type)
        for a in (getattr(creds, "attach", None) or []))
    return WarehouseTarget(**common, path=Path(_local(raw_path, project_dir)), attached=attached)


def _local(path: str, base: Path) -> str:
    """A relative file path as dbt resolves it (from the project folder dbt runs in); URLs as they are."""
    if "://" in path or path.startswith("md:"):
        return path
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else (base / p).resolve())


def _catalog_of(path: str) -> str:
    """DuckDB's catalog name for a file (dbt-duckdb's rule: the first dot-separated part of its name)."""
    return Path(path).name.lstrip(".").split(".")[0] or "memory"


def configured_warehouse(settings, home: Path, environ: Mapping[str, str]):
    """The warehouse metric values run against, for a configuration (canon.core.settings.Settings):
    its dbt target's, rendered on first use. In artifacts mode Canon runs no dbt and reads no
    profile, so every value is NotComputable with that reason."""
    from canon.sources.dbt.semantic.warehouse import ConfiguredWarehouse, warehouse_of

    def resolve():
        if not settings.runs_dbt or settings.dbt_project_dir is None:
            raise NotComputable(
                f"{settings.mode} mode: Canon reads dbt's artifacts in {settings.dbt_artifacts_dir} but no dbt "
                "profile, so no warehouse connection computes metric values (project mode's dbt.project_dir, "
                "dbt.profiles_dir and dbt.target name the warehouse)")
        # The environment dbt gets from Canon for every invocation (resources/dbt.py): CANON_HOME set.
        env = {**environ, "CANON_HOME": str(Path(home).resolve())}
        target = resolve_target(Path(settings.dbt_project_dir), Path(settings.dbt_profiles_dir or settings.dbt_project_dir),
                                settings.dbt_target, env)
        return warehouse_of(target)

    return ConfiguredWarehouse(resolve)

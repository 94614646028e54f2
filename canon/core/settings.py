"""What Canon is configured to read and where it writes: the file named by
CANON_CONFIG (relative paths relative to it), environment variables over it,
and the demo wherever neither says otherwise. With neither, the configuration
is the demo's: the dbt project in dbt_project/, the documents in knowledge/,
home ./var, the two release gold sets.

Four modes, from the `dbt` keys: `demo` (Canon builds the embedded dbt
project from its raw loaders), `project` (Canon runs the team's dbt project
through dagster-dbt, `dbt.project_dir`), `artifacts` (dbt runs elsewhere;
Canon reads the artifacts in `dbt.artifacts_dir` and never runs dbt) and
`documents` (a configuration file with `documents` and no `dbt` keys: the
team's documents alone, no dbt evidence at all).

`load_settings` raises a CanonInputError naming the file and the dotted key;
`inspect_settings` returns every problem instead, for `canon doctor`. The keys
and variables are described in docs/contracts.md, "Configuration"."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from canon.core.errors import CanonInputError
from canon.core.fiscal_calendar import FiscalCalendar
from canon.core.settings_file import ConfigKeys, Problem, read_config_file

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The demo, used wherever the configuration names nothing else.
DEMO_CORPUS = PROJECT_ROOT / "knowledge"
DEMO_DBT_PROJECT = PROJECT_ROOT / "dbt_project"
DEMO_HOME = PROJECT_ROOT / "var"
DEFAULT_CONTRACT = PROJECT_ROOT / "contracts" / "knowledge.yml"
# The demo's release gold sets (name, corpus, gold): the original 11 cases and Canon's harder set.
DEMO_RELEASE_SETS = (
    ("dossier", PROJECT_ROOT / "tests/fixtures/dossier/corpus.jsonl", PROJECT_ROOT / "tests/fixtures/dossier/gold.json"),
    ("hard", PROJECT_ROOT / "tests/gold_hard/corpus", PROJECT_ROOT / "tests/gold_hard/gold.json"),
)
POLICY_FILE = "policy.yml"
DOCUMENT_SUFFIXES = (".md", ".jsonl", ".json")

ENV_CONFIG = "CANON_CONFIG"
# Each variable overrides one key of the file.
ENV_KEYS = {
    "CANON_HOME": "home",
    "CANON_CORPUS": "documents",
    "CANON_POLICY": "policy",
    "CANON_DBT_PROJECT_DIR": "dbt.project_dir",
    "CANON_DBT_PROFILES_DIR": "dbt.profiles_dir",
    "CANON_DBT_TARGET": "dbt.target",
    "CANON_DBT_ARTIFACTS_DIR": "dbt.artifacts_dir",
}
ENVIRONMENT = "environment"   # the "file" a problem names when a variable set the value

DEMO, PROJECT, ARTIFACTS, DOCUMENTS = "demo", "project", "artifacts", "documents"


@dataclass(frozen=True)
class DocumentSource:
    path: Path          # a folder, or one .jsonl / .json / .md file
    contract: Path      # its source contract (contracts/knowledge.yml unless the source names one)
    key: str            # where it was configured: "documents[0]", "CANON_CORPUS", "demo"


@dataclass(frozen=True)
class GoldSet:
    name: str
    corpus: Path
    gold: Path
    contract: Path


@dataclass(frozen=True)
class Settings:
    mode: str
    home: Path
    config_file: Path | None = None
    dbt_project_dir: Path | None = None      # demo and project mode
    dbt_profiles_dir: Path | None = None
    dbt_target: str | None = None
    dbt_artifacts_dir: Path | None = None    # artifacts mode only
    documents: tuple[DocumentSource, ...] = ()
    policy: Path = DEMO_CORPUS / POLICY_FILE
    default_roles: tuple[str, ...] = ()
    release_gate: tuple[GoldSet, ...] = ()
    calendar: FiscalCalendar | None = None   # the fiscal year (`calendar`); None: none configured
    # key -> where its value came from ("CANON_HOME", the file, "default"), for `canon doctor`
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def runs_dbt(self) -> bool:
        """Canon runs dbt itself (demo and project mode); in artifacts mode it only reads."""
        return self.mode in (DEMO, PROJECT)

    @property
    def is_demo(self) -> bool:
        return self.mode == DEMO

    @property
    def has_dbt(self) -> bool:
        """There is dbt evidence (artifacts Canon reads or builds); not in documents mode."""
        return self.mode != DOCUMENTS


def resolve_policy_path(policy: str | os.PathLike | None, corpus: str | os.PathLike | None) -> Path:
    """The live policy file, the one rule every reader uses (the CLI, the Dagster
    resource resources/paths.py, checks and sensors): `policy`, else policy.yml in
    `corpus`, else the demo corpus's. Never what a registry build recorded: moving
    the corpus (and pointing the configuration at it) keeps its policy."""
    if policy:
        return Path(policy).resolve()
    return Path(corpus or DEMO_CORPUS).resolve() / POLICY_FILE


@dataclass
class _Reader:
    """Picks each value from the environment, else the file, and records problems."""

    environ: Mapping[str, str]
    keys: ConfigKeys
    config_file: Path | None
    problems: list[Problem] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        return str(self.config_file) if self.config_file else ENVIRONMENT

    @property
    def base(self) -> Path:
        return self.config_file.parent if self.config_file else Path.cwd()

    def env_var(self, key: str) -> str | None:
        return next((var for var, k in ENV_KEYS.items() if k == key and self.environ.get(var)), None)

    def value(self, key: str, from_file: str | None) -> tuple[str | None, str, str]:
        """(raw value, file, key to name in a problem): the variable wins over the file."""
        var = self.env_var(key)
        if var is not None:
            self.origins[key] = var
            return self.environ[var], ENVIRONMENT, var
        if from_file is not None:
            self.origins[key] = self.file_name
        return from_file, self.file_name, key

    def path(self, raw: str, file: str) -> Path:
        # Variables are relative to the working directory, the file's values to the file.
        base = Path.cwd() if file == ENVIRONMENT else self.base
        return (base / Path(raw).expanduser()).resolve()

    def problem(self, file: str, key: str, reason: str) -> None:
        self.problems.append(Problem(file, key, reason))


def _dbt(r: _Reader) -> dict:
    dbt = r.keys.dbt
    project_raw, project_file, project_key = r.value("dbt.project_dir", dbt and dbt.project_dir)
    artifacts_raw, artifacts_file, artifacts_key = r.value("dbt.artifacts_dir", dbt and dbt.artifacts_dir)
    profiles_raw, profiles_file, profiles_key = r.value("dbt.profiles_dir", dbt and dbt.profiles_dir)
    target, target_file, target_key = r.value("dbt.target", dbt and dbt.target)
    if project_raw and artifacts_raw:
        file = project_file if project_file == artifacts_file else f"{project_file}, {artifacts_file}"
        r.problem(file, f"{project_key}, {artifacts_key}",
                  "both are set: Canon either runs a dbt project (project_dir) or reads artifacts dbt wrote "
                  "elsewhere (artifacts_dir); keep one")
    out: dict = {"mode": PROJECT if project_raw else ARTIFACTS if artifacts_raw else DEMO}
    if artifacts_raw and not project_raw:
        folder = r.path(artifacts_raw, artifacts_file)
        out["dbt_artifacts_dir"] = folder
        if not folder.is_dir():
            r.problem(artifacts_file, artifacts_key, f"{folder} is not a folder")
        elif not (folder / "manifest.json").is_file():
            r.problem(artifacts_file, artifacts_key, f"{folder} holds no manifest.json (dbt's target folder, "
                                                     "or a copy of its artifacts)")
    if project_raw:
        folder = r.path(project_raw, project_file)
        out["dbt_project_dir"] = out["dbt_profiles_dir"] = folder
        if not folder.is_dir():
            r.problem(project_file, project_key, f"{folder} is not a folder")
        elif not (folder / "dbt_project.yml").is_file():
            r.problem(project_file, project_key, f"{folder} holds no dbt_project.yml")
    elif out["mode"] == DEMO:
        out["dbt_project_dir"] = out["dbt_profiles_dir"] = DEMO_DBT_PROJECT
    for raw, file, key, what in ((profiles_raw, profiles_file, profiles_key, "dbt.profiles_dir"),
                                 (target, target_file, target_key, "dbt.target")):
        if raw and not project_raw:
            r.problem(file, key, f"{what} applies only with dbt.project_dir (project mode)")
    if profiles_raw and project_raw:
        folder = r.path(profiles_raw, profiles_file)
        out["dbt_profiles_dir"] = folder
        if not (folder / "profiles.yml").is_file():
            r.problem(profiles_file, profiles_key, f"{folder} holds no profiles.yml")
    elif project_raw and out["dbt_project_dir"].is_dir() and not (out["dbt_project_dir"] / "profiles.yml").is_file():
        # dagster-dbt hands dbt --profiles-dir: without the key that is the project folder itself.
        r.problem(r.file_name if r.keys.dbt is not None else project_file, "dbt.profiles_dir",
                  f"missing: {out['dbt_project_dir']} holds no profiles.yml; name the folder that does "
                  "(e.g. `profiles_dir: ~/.dbt`)")
    if target is not None and project_raw:
        if not target.strip():
            r.problem(target_file, target_key, "is empty: name a target of profiles.yml, or leave the key out")
        out["dbt_target"] = target
    return out


def _documents(r: _Reader, mode: str) -> tuple[DocumentSource, ...]:
    corpus = r.environ.get("CANON_CORPUS")
    if corpus:
        r.origins["documents"] = "CANON_CORPUS"
        sources = [DocumentSource(r.path(corpus, ENVIRONMENT), DEFAULT_CONTRACT, "CANON_CORPUS")]
        files = [ENVIRONMENT]
    elif r.keys.documents is not None:
        r.origins["documents"] = r.file_name
        sources = [DocumentSource(r.path(d.path, r.file_name),
                                  r.path(d.contract, r.file_name) if d.contract else DEFAULT_CONTRACT,
                                  f"documents[{i}]") for i, d in enumerate(r.keys.documents)]
        files = [r.file_name] * len(sources)
    elif mode == DEMO:
        return (DocumentSource(DEMO_CORPUS, DEFAULT_CONTRACT, "demo"),)
    else:
        return ()   # a team's dbt project alone: no documents beside it
    # A documents path that does not exist yet is not a configuration error (the registry build and
    # `canon build` report it, `canon doctor` lists it: missing_documents); a file that is no
    # document, one that cannot be read, and sources that overlap are.
    for s, file in zip(sources, files):
        key = _source_key(s)
        if s.path.is_file() and s.path.suffix not in DOCUMENT_SUFFIXES:
            r.problem(file, key, f"{s.path}: a documents file must be .jsonl, .json or .md")
        elif s.path.exists() and not os.access(s.path, os.R_OK | (os.X_OK if s.path.is_dir() else 0)):
            r.problem(file, key, f"{s.path}: cannot be read (permission denied)")
        if not s.contract.is_file():
            r.problem(file, f"{s.key}.contract", f"contract file {s.contract} does not exist")
    for i, (s, file) in enumerate(zip(sources, files)):
        for earlier in sources[:i]:
            # Several folders may share one contract (read as one source, canon/registry/build.py),
            # but a file read twice would be its own duplicate.
            if s.path == earlier.path:
                r.problem(file, _source_key(s), f"{s.path} is listed twice (also {earlier.key})")
            elif s.path.is_relative_to(earlier.path) or earlier.path.is_relative_to(s.path):
                inner, outer = (s, earlier) if s.path.is_relative_to(earlier.path) else (earlier, s)
                r.problem(file, _source_key(s), f"{inner.path} ({inner.key}) is inside {outer.path} ({outer.key}): "
                                                "its files would be read twice; list one of them")
    return tuple(sources)


def _source_key(s: DocumentSource) -> str:
    return s.key if s.key in ("CANON_CORPUS", "demo") else f"{s.key}.path"


def missing_documents(settings: Settings) -> list[Problem]:
    """The documents sources that do not exist (the build would stop on them)."""
    file = str(settings.config_file) if settings.config_file else ENVIRONMENT
    return [Problem(ENVIRONMENT if s.key == "CANON_CORPUS" else file, _source_key(s), f"{s.path} does not exist")
            for s in settings.documents if not s.path.exists()]


def _policy(r: _Reader, documents: tuple[DocumentSource, ...]) -> Path:
    raw, file, key = r.value("policy", r.keys.policy)
    if raw:
        path = r.path(raw, file)
        if path.is_dir():
            r.problem(file, key, f"{path} is a folder, not a policy file")
        return path
    if documents:
        return resolve_policy_path(None, documents[0].path)
    if r.config_file is not None:
        return r.config_file.parent / POLICY_FILE
    return DEMO_CORPUS / POLICY_FILE


def _release_gate(r: _Reader, mode: str, documents: tuple[DocumentSource, ...]) -> tuple[GoldSet, ...]:
    gate = r.keys.release_gate
    if gate is None:
        return tuple(GoldSet(n, c, g, DEFAULT_CONTRACT) for n, c, g in DEMO_RELEASE_SETS) if mode == DEMO else ()
    r.origins["release_gate.gold"] = r.file_name
    contracts = {d.path: d.contract for d in documents}
    out: list[GoldSet] = []
    for i, g in enumerate(gate.gold):
        key = f"release_gate.gold[{i}]"
        gold = r.path(g.file, r.file_name)
        if not gold.is_file():
            r.problem(r.file_name, f"{key}.file", f"gold file {gold} does not exist")
        if g.corpus:
            corpus = r.path(g.corpus, r.file_name)
            if not corpus.exists():
                r.problem(r.file_name, f"{key}.corpus", f"{corpus} does not exist")
        elif documents:
            corpus = documents[0].path
        else:
            r.problem(r.file_name, f"{key}.corpus", "no corpus: name the documents the gold cases are asked over "
                                                    "(`corpus:`), or configure `documents`")
            continue
        name = g.name or gold.stem
        if any(s.name == name for s in out):
            r.problem(r.file_name, f"{key}.name", f"a gold set named {name!r} is configured twice")
        out.append(GoldSet(name, corpus, gold, contracts.get(corpus, DEFAULT_CONTRACT)))
    if not gate.gold:
        r.problem(r.file_name, "release_gate.gold", "is empty: list the gold files, or leave release_gate out")
    return tuple(out)


def inspect_settings(environ: Mapping[str, str] | None = None) -> tuple[Settings, list[Problem]]:
    """The resolved configuration and every problem with it (empty when it is usable)."""
    environ = os.environ if environ is None else environ
    config_file = None
    keys = ConfigKeys()
    problems: list[Problem] = []
    if environ.get(ENV_CONFIG):
        config_file = (Path.cwd() / Path(environ[ENV_CONFIG]).expanduser()).resolve()
        read, problems = read_config_file(config_file)
        keys = read or ConfigKeys()
    r = _Reader(environ, keys, config_file, problems)
    dbt = _dbt(r)
    mode = dbt["mode"]
    if mode == DEMO and config_file is not None and (keys.documents is not None or environ.get("CANON_CORPUS")):
        # A team's documents without dbt: not the demo (no raw loaders, no demo dbt project, no demo gate).
        mode = dbt["mode"] = DOCUMENTS
        dbt.pop("dbt_project_dir", None)
        dbt.pop("dbt_profiles_dir", None)
    home_raw, home_file, home_key = r.value("home", keys.home)
    if home_raw:
        home = r.path(home_raw, home_file)
    elif config_file is not None:
        home = config_file.parent / "var"   # beside the file: a team's workspace is never the demo's
    else:
        home = DEMO_HOME
    if home.exists() and not home.is_dir():
        r.problem(home_file, home_key, f"{home} is a file, not a folder")
    documents = _documents(r, mode)
    for d in documents:
        if d.key.startswith("documents[") and home.is_relative_to(d.path):
            # Canon's own files (eval reports, logs, the registry's JSON) would be read as documents.
            r.problem(r.file_name, _source_key(d), f"{d.path} holds the home {home}: Canon would read its own "
                                                   "files as documents; point at the documents folder itself")
    roles = tuple(keys.default_roles or ())
    if mode not in (DEMO, DOCUMENTS) and not roles and config_file is not None and not read_failed(problems, config_file):
        r.problem(r.file_name, "default_roles",
                  "missing: a team's dbt evidence needs the roles that may read nodes without "
                  "meta.canon.allowed_roles (there is no default), e.g. `default_roles: [analyst]`")
    elif mode not in (DEMO, DOCUMENTS) and not roles and config_file is None:
        r.problem(ENVIRONMENT, "default_roles",
                  f"missing: a team's dbt evidence needs default_roles, which only the configuration file sets "
                  f"(name it with {ENV_CONFIG})")
    if roles:
        r.origins["default_roles"] = r.file_name
    settings = Settings(
        mode=mode, home=home, config_file=config_file,
        dbt_project_dir=dbt.get("dbt_project_dir"), dbt_profiles_dir=dbt.get("dbt_profiles_dir"),
        dbt_target=dbt.get("dbt_target"), dbt_artifacts_dir=dbt.get("dbt_artifacts_dir"),
        documents=documents, policy=_policy(r, documents), default_roles=roles,
        release_gate=_release_gate(r, mode, documents), calendar=_calendar(r, keys),
        origins=tuple(sorted(r.origins.items())),
    )
    return settings, r.problems


def _calendar(r: _Reader, keys: ConfigKeys) -> FiscalCalendar | None:
    if keys.calendar is None:
        return None
    r.origins["calendar"] = r.file_name
    return FiscalCalendar(keys.calendar.fiscal_year_start, keys.calendar.fiscal_year_named_by)


def read_failed(problems: list[Problem], config_file: Path) -> bool:
    """True when the file itself could not be read (its keys are then unknown)."""
    return any(p.file == str(config_file) and not p.key for p in problems)


_VARS = (ENV_CONFIG, *ENV_KEYS)
_cache: dict[tuple, Settings] = {}


def _cache_key(environ: Mapping[str, str]) -> tuple:
    values = tuple(environ.get(v) or "" for v in _VARS)
    stamp: tuple = ()
    if environ.get(ENV_CONFIG):
        try:
            st = Path(environ[ENV_CONFIG]).expanduser().stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = ("missing",)
    return (str(Path.cwd()), values, stamp)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The configuration, or a CanonInputError naming the file, the key and the reason
    (every other problem follows it). A usable configuration is remembered until the
    variables or the file change, so the many readers of a path do not re-read it."""
    environ = os.environ if environ is None else environ
    key = _cache_key(environ)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    settings, problems = inspect_settings(environ)
    if problems:
        first = problems[0]
        reason = first.reason
        if len(problems) > 1:
            reason += " (also: " + "; ".join(str(p) for p in problems[1:]) + ")"
        raise CanonInputError(first.file, reason, field=first.key or None)
    if len(_cache) > 32:
        _cache.clear()
    _cache[key] = settings
    return settings

"""`canon init | doctor | build`: point Canon at a team's own dbt project or
artifacts and documents (the configuration: canon/core/settings.py,
docs/contracts.md "Configuration").

- `init` writes a commented canon.yml for a dbt project or an artifacts folder;
- `doctor` prints what the configuration resolves to and every problem (exit 2 if any);
- `build` runs the configured main job headless, as `make run` does for the demo:
  the same runner (canon_run.py) in a child process, since canon/ never imports Dagster.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from canon.core.errors import CanonInputError
from canon.core.settings import ENV_CONFIG, PROJECT_ROOT, load_settings

# What the Makefile exports for `make run`; `canon build` gives its child the same defaults.
_RUN_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1",
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}


def _rel(path: Path, base: Path) -> str:
    """`path` as the configuration file will hold it: relative to the file's folder."""
    return os.path.relpath(path.resolve(), base.resolve())


def _template(args: argparse.Namespace, out: Path) -> str:
    base = out.parent
    lines = [
        "# Canon's configuration (docs/contracts.md, \"Configuration\"). Relative paths are relative",
        "# to this file; CANON_HOME, CANON_CORPUS, CANON_POLICY and CANON_DBT_* override the keys.",
        f"# Use it:  export {ENV_CONFIG}={out.resolve()}",
        "#          canon doctor   # what this resolves to, and every problem",
        "#          canon build    # the main job, headless (dbt, registry, index)",
        "#          canon ask \"…\" --role ROLE",
        "",
        "# Every file Canon writes (registry, index, dbt's target and logs, Dagster's storage).",
        "home: var",
        "",
        "dbt:",
    ]
    if args.dbt_project:
        project = Path(args.dbt_project)
        lines += ["  # project mode: Canon runs this dbt project through dagster-dbt (dbt build, source",
                  "  # freshness), with dbt's target and logs under home, never inside the project.",
                  f"  project_dir: {_rel(project, base)}"]
        home_profiles = Path("~/.dbt/profiles.yml").expanduser()
        if (project / "profiles.yml").is_file():
            lines.append("  # profiles_dir: ~/.dbt          # default: project_dir, which holds profiles.yml")
        elif home_profiles.is_file():
            lines.append("  profiles_dir: ~/.dbt            # the folder of profiles.yml (default: project_dir)")
        else:
            lines.append("  profiles_dir: ~/.dbt            # the folder of profiles.yml: none found yet, edit this")
        lines.append("  # target: dev                   # a target of profiles.yml (default: the profile's)")
    else:
        lines += ["  # artifacts mode: dbt runs elsewhere (CI, a scheduler, dbt Cloud); Canon reads manifest.json,",
                  "  # semantic_manifest.json, run_results.json, sources.json and catalog.json from this folder",
                  "  # and never runs or parses dbt.",
                  f"  artifacts_dir: {_rel(Path(args.dbt_artifacts), base)}"]
    lines += ["", "# Folders or .jsonl/.json files of documents (wiki pages, runbooks, memos), each optionally",
              "# with its own contract (default contracts/knowledge.yml; one contract per source)."]
    if args.documents:
        lines.append("documents:")
        lines += [f"  - {_rel(Path(d), base)}" for d in args.documents]
    else:
        lines += ["# documents:", "#   - docs", "#   - {path: notes.jsonl, contract: contracts/notes.yml}"]
    lines += ["", "# The live access policy (revocations). Default: policy.yml in the first documents folder.",
              "# policy: policy.yml", "",
              "# Who may read dbt-derived evidence whose node has no meta.canon.allowed_roles. Required:",
              "# there is no default."]
    roles = [r.strip() for r in (args.default_roles or "").split(",") if r.strip()]
    lines.append(f"default_roles: [{', '.join(roles)}]" if roles else
                 "# default_roles: [analyst]        # required: uncomment and name your roles")
    lines += ["", "# Your own gold sets for the release gate (canon eval's gold format). Absent: no release gate.",
              "# release_gate:", "#   gold:", "#     - {file: gold/cases.json, corpus: docs}", "",
              "# Your fiscal year, which questions naming one (\"FY2027\", \"Q3 FY27\", \"last fiscal year\") are",
              "# read in. Absent: such questions are asked back.",
              "# calendar:", "#   fiscal_year_start: July        # the month it starts (1-12 or a name)",
              "#   fiscal_year_named_by: end      # FY2027 ends in 2027 (end) or starts in it (start)", ""]
    return "\n".join(lines)


def _init(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.dbt_project:
        project = Path(args.dbt_project)
        if not (project / "dbt_project.yml").is_file():
            raise CanonInputError(project, "no dbt_project.yml here: --dbt-project names a dbt project folder",
                                  field="--dbt-project")
    else:
        artifacts = Path(args.dbt_artifacts)
        if not (artifacts / "manifest.json").is_file():
            raise CanonInputError(artifacts, "no manifest.json here: --dbt-artifacts names dbt's target folder "
                                             "(or a copy of its artifacts)", field="--dbt-artifacts")
    for d in args.documents or []:
        if not Path(d).exists():
            raise CanonInputError(d, "does not exist", field="--documents")
    if out.exists() and not args.force:
        raise CanonInputError(out, "already exists; pass --force to overwrite it", field="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_template(args, out), encoding="utf-8")
    print(f"wrote {out}")
    print(("next: name default_roles in it, then" if not args.default_roles else "next:")
          + f"\n  export {ENV_CONFIG}={out.resolve()}\n  canon doctor\n  canon build")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from canon.cli.doctor import diagnose, render

    report, problems = diagnose()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print("\n".join(render(report)))
    if problems:
        print(f"canon: error: {len(problems)} problem(s) in the configuration", file=sys.stderr)
        return 2
    return 0


def _build(args: argparse.Namespace) -> int:
    settings = load_settings()   # a bad configuration stops here: exit 2, the file and the key
    env = {**_RUN_ENV, "CANON_MODEL_CACHE": str(settings.home / "models"), **os.environ}
    # The runner imports the project's modules (definitions, assets): make them importable
    # wherever `canon` is started from, without changing the working directory relative
    # paths are resolved against.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "canon_run"], env=env).returncode


def register(sub) -> None:
    sp = sub.add_parser("init", help="write a commented canon.yml for a dbt project or a dbt artifacts folder")
    src = sp.add_mutually_exclusive_group(required=True)
    src.add_argument("--dbt-project", metavar="DIR", help="project mode: Canon runs this dbt project")
    src.add_argument("--dbt-artifacts", metavar="DIR", help="artifacts mode: Canon reads the artifacts in DIR")
    sp.add_argument("--out", default="canon.yml", help="the file to write (default canon.yml)")
    sp.add_argument("--documents", action="append", metavar="PATH", help="a documents folder or file (repeatable)")
    sp.add_argument("--default-roles", metavar="ROLE,...", help="who may read dbt evidence without meta.canon roles")
    sp.add_argument("--force", action="store_true", help="overwrite --out")
    sp.set_defaults(handler=_init)
    sp = sub.add_parser("doctor", help="what the configuration resolves to, and every problem with it")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_doctor)
    sp = sub.add_parser("build", help="run the configured main job headless (what `make run` does)")
    sp.set_defaults(handler=_build)

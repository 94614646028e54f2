"""The `canon` command line. Exit codes: 0 success, 1 a run or check failed,
2 bad configuration or input (the message names the file and the reason).

An empty question, an unknown role and a date that does not exist are input
errors (canon/ask/inputs.py, canon/core/dates.py); a live policy that cannot
be read is not: every query then answers `deny` / `policy_unavailable`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable

from canon.cli.lifecycle import register as register_lifecycle
from canon.cli.serve import register as register_serve
from canon.cli.setup import register as register_setup
from canon.core.dates import parse_as_of
from canon.core.errors import CanonInputError, CanonRunError
from canon.models.responses import Response


def _print_response(resp: Response, as_json: bool) -> None:
    data = resp.to_json_dict()
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    print(f"[{data['action']}] {data['answer']}")
    for ev in data["evidence"]:
        print(f"  - {ev['use']:<10} {ev['doc_id']} (v{ev['version']}, {ev['status']}, {ev['content_hash'][:19]})")
    for opt in data["options"]:
        print(f"  ? {opt}")
    if data.get("lineage"):
        for e in data["lineage"]["edges"]:
            print(f"    {e['parent']} -> {e['child']}")


def _warn_unavailable(policy) -> None:
    """The deny carries no detail; the person at the terminal gets the file and the reason."""
    if not policy.available:
        print(f"canon: warning: the live policy is unavailable, every query is denied: "
              f"{policy.unavailable_reason}", file=sys.stderr)


# Each command imports what it runs inside its handler: `canon resolve` must not pay for
# the index stack (LanceDB, the embedder) that `ask` and `eval` load.

def _object_command(args: argparse.Namespace, fn_name: str) -> int:
    from canon.ask import resolve as resolve_mod
    from canon.ask.inputs import require_known_role
    from canon.ask.scope import DBT_NODES_WHERE, dbt_nodes_params, registry_roles
    from canon.registry.store import load_document_heads
    from canon.registry.workspace import Workspace

    ws = Workspace.open(read_only=True)
    try:
        # The object's revisions only (and, for lineage, the documents of the nodes its graph
        # reaches), read from the registry: a new process never loads all of it.
        policy = ws.policy()
        day = parse_as_of(args.as_of)
        require_known_role(args.role, (), policy, document_roles=registry_roles(ws.con))
        _warn_unavailable(policy)
        docs = load_document_heads(ws.con, "object_id = ?", [args.object_id])
        if fn_name == "lineage":
            def supporting(node_ids: list[str], lineage_doc_id: str | None):
                return load_document_heads(ws.con, DBT_NODES_WHERE, dbt_nodes_params(node_ids, lineage_doc_id))
            resp = resolve_mod.lineage(ws.con, docs, args.object_id, day, args.role, policy, supporting=supporting)
        else:
            resp = resolve_mod.resolve(docs, args.object_id, day, args.role, policy)
    finally:
        ws.close()
    _print_response(resp, args.json)
    return 0


def _ask_command(args: argparse.Namespace) -> int:
    from canon.ask.answer_log import AnswerLogFile
    from canon.ask.context import ask_context
    from canon.ask.inputs import require_known_role, require_question
    from canon.ask.pipeline import ask
    from canon.ask.scope import registry_roles, scoped_context
    from canon.ask.understanding.catalog_store import catalog_is_current
    from canon.ask.understanding.parse import check_question
    from canon.registry.workspace import Workspace

    check_question(args.question)  # before the workspace is opened
    require_question(args.question)
    day = parse_as_of(args.as_of)
    ws = Workspace.open(read_only=True)  # the answer goes to its own log, not canon.duckdb
    try:
        policy = ws.policy()
        log = AnswerLogFile(ws.paths.answer_log_file)
        # A new process reads what its question needs (canon/ask/scope.py), unless the stored
        # catalog is older than the registry: then every document, as the warm server does.
        if catalog_is_current(ws.con):
            require_known_role(args.role, (), policy, document_roles=registry_roles(ws.con))
            ctx = scoped_context(ws.con, ws.paths.lancedb_dir, args.question, args.role, policy,
                                 metric_values=ws.metric_engine(), answer_store=log, catalog_checked=True,
                                 one_shot=True)
        else:
            docs = ws.documents()
            require_known_role(args.role, docs, policy)
            ctx = ask_context(ws.con, ws.paths.lancedb_dir, docs, policy, metric_values=ws.metric_engine(),
                              answer_store=log)
        _warn_unavailable(policy)
        resp = ask(ctx, args.question, args.role, day)
    finally:
        ws.close()
    _print_response(resp, args.json)
    if not args.json:
        print(f"  answer_id {resp.answer_id} · index {resp.index_revision or '-'} · policy {resp.policy_revision}")
    return 0


def _eval_command(args: argparse.Namespace) -> int:
    from canon.ask.context import make_embedder
    from canon.evaluation.report import markdown_table
    from canon.evaluation.run import evaluate

    if not args.json:
        print(f"canon eval: building a fresh index of {args.corpus} …", file=sys.stderr)
    result = evaluate(Path(args.corpus), Path(args.gold), embedder=make_embedder(args.embedder))
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        for c in result["cases"]:
            r = c["response"]
            mark = "ok " if c["passed"] else "FAIL"
            print(f"{mark} {c['id']:<6} expected {c['expected_action']:<15} got {r['action']:<15} "
                  f"evidence {[e['doc_id'] for e in r['evidence']][:3]}")
        print()
        print(markdown_table(result))
        gate = result["summary"]["gate"]
        print("\nrelease gate: " + ("PASS" if not gate else "FAIL — " + "; ".join(gate)))
    return 0 if not result["summary"]["gate"] else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canon", description="Governed answers over analytical documentation.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, help_ in (("resolve", "the governing revision of an object for a date"),
                        ("lineage", "the implementing model version and its upstream raw sources")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("object_id")
        sp.add_argument("--as-of", dest="as_of")
        sp.add_argument("--role", required=True)
        sp.add_argument("--json", action="store_true")
        sp.set_defaults(handler=lambda a, n=name: _object_command(a, n))
    sp = sub.add_parser("ask", help="a governed answer with cited evidence")
    sp.add_argument("question")
    sp.add_argument("--role", required=True)
    sp.add_argument("--as-of", dest="as_of")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_ask_command)
    sp = sub.add_parser("eval", help="build a fresh index of a corpus and answer every gold case")
    sp.add_argument("--corpus", required=True)
    sp.add_argument("--gold", required=True)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--embedder", choices=["sentence-transformers", "hashing"], default=None,
                    help="hashing is the deterministic test embedder (fast, meaningless vectors)")
    sp.set_defaults(handler=_eval_command)
    register_lifecycle(sub)
    register_serve(sub)
    register_setup(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except CanonInputError as exc:
        print(f"canon: error: {exc}", file=sys.stderr)
        return 2
    except CanonRunError as exc:
        print(f"canon: failed: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader closed the pipe (`canon ask … | head -1`): no traceback. Python's own advice
        # (the signal module's documentation): point stdout at devnull so the exit flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""`canon forget | impact | migrate | rollback`: the lifecycle commands.

Exit codes as everywhere: 0 done, 1 a run or check failed (a deletion that
does not verify, a migration that is refused), 2 bad input (unknown doc_id,
unknown version, nothing to migrate or roll back).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from canon.ask.answer_log import AnswerLogFile
from canon.core.errors import CanonInputError
from canon.lifecycle.impact import format_text, impact
from canon.registry.workspace import Workspace


def _dump(data: dict) -> None:
    print(json.dumps(data, indent=2, default=str))


def _say(msg: str) -> None:
    print(f"canon: {msg}", file=sys.stderr)


# ------------------------------------------------------------------ forget

def _forget(args: argparse.Namespace) -> int:
    from canon.lifecycle import forget as lifecycle  # deferred: loads lancedb, heavy for every other command

    if not args.json:
        _say(f"forgetting {args.doc_id} in every store …")
    try:
        res = lifecycle.forget(args.doc_id)
    except lifecycle.DeletionNotVerified as exc:
        res = exc.result
        if args.json:
            _dump(res.to_dict())
        else:
            _print_forget(res)
        print(f"canon: failed: {exc}", file=sys.stderr)
        return 1
    if args.json:
        _dump(res.to_dict())
    else:
        _print_forget(res)
    return 0


def _print_forget(res) -> None:
    state = "VERIFIED" if res.verified else "NOT VERIFIED"
    print(f"{res.doc_id}: {state} ({res.state}), deletion {res.deletion_id}"
          + (" — resumed an interrupted deletion" if res.resumed and res.attempts > 1 else ""))
    if res.duration_seconds is not None:
        verdict = "within" if res.within_promise else "OUTSIDE"
        print(f"  completed in {res.duration_seconds:.2f} s, {verdict} the contract's "
              f"{res.promise_hours:g} h deletion promise")
    d = res.details
    reg, lin = d.get("registry", {}), d.get("lineage", {})
    print(f"  registry: {reg}  lineage: {lin}")
    for table, t in d.get("lancedb", {}).items():
        print(f"  lancedb {table}: {t.get('rows_removed', 0)} row(s) removed, versions holding it "
              f"{t.get('versions_holding')}, {t.get('cleanup', {}).get('versions_after', '-')} version(s) left"
              + (f", new revision {t['revision']}" if t.get("revision") else ""))
    print(f"  eval artefacts scrubbed: {len(d.get('eval', {}).get('files_scrubbed', []))}, "
          f"cache files removed: {len(d.get('cache', {}).get('files_removed', []))}, "
          f"canon.duckdb rewritten: {d.get('duckdb_file', {}).get('compacted')}")
    v = d.get("verification", {})
    if v:
        print(f"  verified: {v['probes']['chunk_ids']} chunk id(s), {v['probes']['phrases']} phrase(s), "
              f"{v['probes']['tokens']} word(s) across {v['lancedb']['versions_scanned']} LanceDB version(s), "
              f"{v['lancedb']['fts_queries']} FTS and {v['lancedb']['vector_queries']} vector queries, every "
              f"DuckDB table and {v['files_scanned']} file(s); answer log keeps "
              f"{v['duckdb'].get('answer_log_citations_kept', 0)} citation(s) by id")
        for s in v.get("source_copies", []):
            print(f"  note: the source still holds it: {s['store']} ({s['what']}) — remove it at the source")
    for f in res.findings:
        print(f"  FOUND {f.what} x{f.count} in {f.store} {f.probe}")


# ------------------------------------------------------------------ impact

def _impact(args: argparse.Namespace) -> int:
    ws = Workspace.open(read_only=True)
    try:
        report = impact(ws.con, args.doc_id, args.doc_version, log_file=AnswerLogFile(ws.paths.answer_log_file),
                        role=args.role, policy=ws.policy())
    finally:
        ws.close()
    if args.json:
        _dump(report)
    else:
        print(format_text(report))
    return 0


# ------------------------------------------------------------------ migrate / rollback

def _migrate(args: argparse.Namespace) -> int:
    from canon.lifecycle.migrate import migrate  # deferred: loads lancedb and the evaluation, heavy

    if args.embedding_model is None and args.max_seq_length is None and args.chunker_max_chars is None \
            and args.chunker_overlap is None:
        raise CanonInputError("canon migrate", "name what changes: --embedding-model, --max-seq-length, "
                              "--chunker-max-chars or --chunker-overlap")
    res = migrate(embedding_model=args.embedding_model, max_seq_length=args.max_seq_length,
                  chunker_max_chars=args.chunker_max_chars, chunker_overlap=args.chunker_overlap,
                  cut_over=not args.no_cutover, rollback_window=dt.timedelta(hours=args.rollback_window_hours),
                  progress=None if args.json else _say)
    if args.json:
        _dump(res.to_dict())
    else:
        cov = res.coverage
        print(f"migration {res.migration_id}: {res.status.upper()}")
        print(f"  from {res.from_revision} ({res.from_table}, {res.from_model_id})")
        print(f"  to   {res.to_table} ({res.to_model_id}, {res.to_config['chunker']} "
              f"{res.to_config['max_chars']}/{res.to_config['overlap']})")
        print(f"  build: {res.build}")
        print(f"  coverage: {cov['covered']}/{cov['live_chunks']} live chunks of the served revision have an "
              f"embedding in the candidate ({cov['same_chunk']} same id, {cov['rechunked']} re-chunked); "
              f"{len(cov['missing'])} missing" + (f": {cov['missing'][:20]}" if cov["missing"] else ""))
        print()
        print(res.table_markdown)
        print()
        print(f"decision: {res.decision}")
        print(f"eval reports: {res.report_path}")
    return 0 if res.status in ("cut_over", "built") else 1


def _rollback(args: argparse.Namespace) -> int:
    from canon.lifecycle.migrate import rollback  # deferred: loads lancedb, heavy

    res = rollback(migration_id=args.migration_id)
    if args.json:
        _dump(res.to_dict())
    else:
        print(f"rolled back migration {res.migration_id}: {res.rollback_revision} serves {res.table} "
              f"(version {res.lance_version}, {res.rows} chunks) again — the content of {res.restored_revision}; "
              f"{res.from_revision} no longer serves")
    return 0


# ------------------------------------------------------------------ registration

def register(subparsers) -> None:
    sp = subparsers.add_parser("forget", help="delete a document from every store, verify, record it")
    sp.add_argument("--doc-id", dest="doc_id", required=True)
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_forget)

    sp = subparsers.add_parser("impact", help="every logged answer that cited a document (or one revision)")
    sp.add_argument("--doc-id", dest="doc_id", required=True)
    sp.add_argument("--doc-version", dest="doc_version", help="a doc_version id or a content hash")
    sp.add_argument("--role", required=True, help="whose view: only documents and answers this role may see")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_impact)

    sp = subparsers.add_parser("migrate", help="build an index with another embedding model or chunking beside "
                                               "the live one; cut over when coverage and the release gate pass")
    sp.add_argument("--embedding-model", dest="embedding_model",
                    help="'default' (the bundled all-MiniLM-L6-v2, int8 ONNX), 'torch' (the same on PyTorch), "
                         "onnx-int8:PATH, a sentence-transformers model path or name (PyTorch), or hashing[:DIMS]")
    sp.add_argument("--max-seq-length", dest="max_seq_length", type=int)
    sp.add_argument("--chunker-max-chars", dest="chunker_max_chars", type=int)
    sp.add_argument("--chunker-overlap", dest="chunker_overlap", type=int)
    sp.add_argument("--rollback-window-hours", dest="rollback_window_hours", type=float, default=168.0)
    sp.add_argument("--no-cutover", dest="no_cutover", action="store_true",
                    help="build, check and evaluate only")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_migrate)

    sp = subparsers.add_parser("rollback", help="serve the index from before the last migration again")
    sp.add_argument("--migration-id", dest="migration_id")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(handler=_rollback)

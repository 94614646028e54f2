"""Read and gate only the corpus files that changed since the last registry build.

A re-run on an unchanged corpus used to re-read, re-parse and re-gate every file:
at 10,000 documents that was ~20 s of a no-op. Like git's index, this module keeps
one row per file in DuckDB (`corpus_files`): its stat (size, mtime, ctime, inode),
the key of the gate that judged it, the day it was judged, and each record's
doc_id, source_uri, source_revision, content hash and duplicate identity. A file
is trusted without being opened only when all of these hold:

- it is a regular file (not a symlink) with the same size, mtime, ctime and inode;
- the gate key is the same: the contract's full content, the corpus root and
  CACHE_VERSION (bumped whenever the gate's rules change);
- today is not before the day it was judged (the only time-dependent rule, the
  future-effective-date horizon, can only admit more as days pass);
- every record it holds is live in the registry with the same source_uri and
  source_revision (sha256 of its bytes): the registry holds exactly what the gate
  admitted, whatever happened in between (a failed run, `canon forget`, a doc_id
  won by another file).

Only files whose every record was admitted are recorded, and only once their
mtime is RACY_SECONDS old, so a write in the same clock tick as the stat cannot
hide (git's "racy clean" problem). Trusted records still pass the checks across
records (duplicate doc_ids) with the files that were read.

Several folders (or files) under one contract are one source (`scan` takes
them as `Root`s): each is read under its own label, which prefixes its paths and
source_uris (`handbook/onboarding.md`), and the gate's checks across records
run over all of them together. One folder alone has no label, as before.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import pyarrow as pa

from canon.core import schema
from canon.core.clock import utcnow
from canon.registry.contracts import Contract
from canon.registry.gate import Checked, GateResult, check_record, decide, require_accepted
from canon.sources.corpus.reader import DEFAULT_MAX_BYTES, corpus_files, read_file
from canon.sources.corpus.records import ReadFailure

CACHE_VERSION = "2"   # 2: ids and roles restricted to one character set (canon.registry.identity)
RACY_SECONDS = 2.0



_STRINGS = pa.list_(pa.string())
_COLUMNS = [("source_system", pa.string()), ("path", pa.string()), ("size", pa.int64()), ("mtime_ns", pa.int64()),
            ("ctime_ns", pa.int64()), ("inode", pa.int64()), ("gate_key", pa.string()), ("gated_on", pa.date32()),
            ("recorded_at", pa.timestamp("us")), ("source_uris", _STRINGS), ("doc_ids", _STRINGS),
            ("source_revisions", _STRINGS), ("content_hashes", _STRINGS), ("identities", _STRINGS)]


@dataclass
class CorpusScan:
    """The gate's verdict on a corpus folder, plus what to record once it is stored."""

    result: GateResult
    files: int = 0
    files_read: int = 0
    files_trusted: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    _rows: list[tuple] = field(default_factory=list, repr=False)
    _paths: list[str] = field(default_factory=list, repr=False)
    _system: str = ""
    _key: str = ""

    def summary(self) -> dict[str, int]:
        return {"files": self.files, "files_read": self.files_read, "files_trusted": self.files_trusted}


ensure_schema = schema.ensure_corpus_files


@dataclass(frozen=True)
class Root:
    """One folder of a source, or one file (`only`: its name in `path`, the folder holding it)."""

    path: Path
    label: str = ""            # prefix of its paths and source_uris; "" for a source of one folder
    only: str | None = None


def gate_key(contract: Contract, root: Path | Sequence[Root]) -> str:
    where = str(root) if isinstance(root, Path) else "\n".join(f"{r.label}={r.path}:{r.only or ''}" for r in root)
    material = "\n".join([CACHE_VERSION, where, contract.model_dump_json(by_alias=True)])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _labelled(item, label: str):
    """An item read under a root's label: its path and source_uri carry the label."""
    if not label:
        return item
    return replace(item, path=f"{label}/{item.path}", source_uri=f"{label}/{item.source_uri}")


def _fingerprint(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def scan(con: duckdb.DuckDBPyConnection, root: Path | Sequence[Root], contract: Contract, *, today: dt.date,
         max_bytes: int = DEFAULT_MAX_BYTES, owners: dict[str, str] | None = None) -> CorpusScan:
    """Gate a corpus folder, or several folders and files of one source (`Root`s), opening only
    the files that changed (see the module doc).
    `owners`: doc_id -> registered source_uri, for the duplicate rule (canon.registry.gate.decide)."""
    require_accepted(contract)
    ensure_schema(con)
    if isinstance(root, Path):
        root = Path(root).resolve()
        roots = [Root(root)]
        key = gate_key(contract, root)
    else:
        roots = [Root(r.path.resolve(), r.label, r.only) for r in root]
        key = gate_key(contract, roots)
    system = contract.source.system
    started_ns = time.time_ns()
    t0 = time.perf_counter()

    files: list[str] = []
    folder_failures: list[ReadFailure] = []
    where: dict[str, tuple[Root, str]] = {}   # path as recorded -> (its root, its path inside the root)
    for r in roots:
        found, failed = ([r.only], []) if r.only is not None else corpus_files(r.path)
        folder_failures += [_labelled(f, r.label) for f in failed]
        for rel in found:
            shown = f"{r.label}/{rel}" if r.label else rel
            files.append(shown)
            where[shown] = (r, rel)
    files.sort()
    # One row per known file, with whether the registry still holds every one of its records
    # live and identical (checked in SQL: no Python pass over 10,000 documents).
    known = {r[0]: r[1:] for r in con.execute(
        """WITH recs AS (
               SELECT path, unnest(doc_ids) AS doc_id, unnest(source_uris) AS uri, unnest(source_revisions) AS rev
               FROM corpus_files WHERE source_system = $system AND gate_key = $key),
           live AS (
               SELECT r.path, bool_and(d.doc_id IS NOT NULL) AS ok FROM recs r
               LEFT JOIN documents d ON d.doc_id = r.doc_id AND d.source_uri = r.uri AND d.source_revision = r.rev
                    AND d.source_system = $system AND d.deleted_at IS NULL
               GROUP BY r.path)
           SELECT f.path, f.size, f.mtime_ns, f.ctime_ns, f.inode, f.gated_on, coalesce(l.ok, false), f.doc_ids
           FROM corpus_files f LEFT JOIN live l USING (path)
           WHERE f.source_system = $system AND f.gate_key = $key""",
        {"system": system, "key": key}).fetchall()}

    ordered: list[tuple[tuple[str, int], Checked | ReadFailure]] = [((f.path, 0), f) for f in folder_failures]
    read_files: list[tuple[str, os.stat_result, list[Checked | ReadFailure]]] = []
    trusted: dict[str, list[str]] = {}   # path -> its doc_ids
    out = CorpusScan(result=GateResult([], []), files=len(files), _system=system, _key=key, _paths=files)
    read_s = check_s = 0.0
    for rel in files:
        owner, inner = where[rel]
        try:
            st = os.lstat(str(owner.path) + os.sep + inner)
        except OSError:
            st = None
        entry = known.get(rel)
        if (st is not None and entry is not None and entry[5] and stat.S_ISREG(st.st_mode)
                and _fingerprint(st) == entry[:4] and today >= entry[4]):
            trusted[rel] = entry[6]
            continue
        r0 = time.perf_counter()
        items = [_labelled(i, owner.label) for i in read_file(owner.path, inner, max_bytes)]
        r1 = time.perf_counter()
        checked = [i if isinstance(i, ReadFailure) else check_record(i, contract, today) for i in items]
        check_s += time.perf_counter() - r1
        read_s += r1 - r0
        ordered.extend(((item.path, item.line or 0), c) for item, c in zip(items, checked))
        if st is not None:
            read_files.append((rel, st, checked))
    out.files_read = len(files) - len(trusted)
    out.files_trusted = len(trusted)

    # Trusted records cannot clash with each other (each is live under its own source_uri); only a
    # record read this time can claim one of their doc_ids. Those few take part in the duplicate rule.
    d0 = time.perf_counter()
    fresh_ids = {c.doc_id for _, c in ordered if isinstance(c, Checked) and c.doc_id}
    clashing = [rel for rel, ids in trusted.items() if fresh_ids.intersection(ids)] if fresh_ids else []
    if clashing:
        for rel, uris, ids, revs, hashes, idents in con.execute(
                "SELECT path, source_uris, doc_ids, source_revisions, content_hashes, identities FROM corpus_files "
                "WHERE source_system = ? AND path IN (SELECT unnest(?))", [system, clashing]).fetchall():
            for line, (uri, doc_id, rev, chash, ident) in enumerate(zip(uris, ids, revs, hashes, idents)):
                ordered.append(((rel, line), Checked(uri, None, None, [], doc_id, chash, ident,
                                                     source_revision=rev, cached=True)))
    ordered.sort(key=lambda pair: pair[0])  # stable: a .json list keeps its order
    decided = decide((item for _, item in ordered), contract, owners=owners)
    skip = set(clashing)
    unchanged = [doc_id for rel, ids in trusted.items() if rel not in skip for doc_id in ids]
    out.result = GateResult(decided.documents, decided.quarantine, decided.contract, decided.collapsed,
                            unchanged + decided.unchanged)
    out.timings = {"scan_s": d0 - t0 - read_s - check_s, "read_s": read_s, "check_s": check_s,
                   "decide_s": time.perf_counter() - d0}

    # What to record once the registry holds it: files whose every record was admitted.
    admitted = {d.source_uri for d in out.result.documents}
    racy_after = started_ns - int(RACY_SECONDS * 1e9)
    for rel, st, checked in read_files:
        if (not checked or not stat.S_ISREG(st.st_mode) or st.st_mtime_ns >= racy_after
                or any(isinstance(c, ReadFailure) or c.source_uri not in admitted for c in checked)):
            continue
        out._rows.append((system, rel, *_fingerprint(st), key, today, None,
                          [c.source_uri for c in checked], [c.doc_id for c in checked],
                          [c.source_revision for c in checked], [c.content_hash for c in checked],
                          [c.identity for c in checked]))
    return out


def record(con: duckdb.DuckDBPyConnection, scanned: CorpusScan, *, refused: set[str] = frozenset()) -> None:
    """After the registry stored `scanned.result`: remember the files read this time, forget
    files that left the corpus and entries judged under another gate key. `refused`: source_uris
    quarantined after the gate (canon.registry.claims); a file holding one is judged afresh next run."""
    now = utcnow()
    rows = [(*r[:8], now, *r[9:]) for r in scanned._rows if not refused.intersection(r[9])]
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM corpus_files WHERE source_system = ? AND (gate_key <> ? OR path NOT IN "
                    "(SELECT unnest(?)))", [scanned._system, scanned._key, scanned._paths])
        if rows:  # set-based: one statement, not one per file
            staged = pa.table({name: pa.array([r[i] for r in rows], type=typ) for i, (name, typ) in enumerate(_COLUMNS)})
            con.register("_canon_corpus_files", staged)
            try:
                con.execute("DELETE FROM corpus_files WHERE (source_system, path) IN "
                            "(SELECT (source_system, path) FROM _canon_corpus_files)")
                con.execute("INSERT INTO corpus_files SELECT * FROM _canon_corpus_files")
            finally:
                con.unregister("_canon_corpus_files")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def forget_doc(con: duckdb.DuckDBPyConnection, doc_id: str) -> int:
    """`canon forget`: no trace of the doc_id may stay, and its file must be judged afresh."""
    return con.execute("DELETE FROM corpus_files WHERE list_contains(doc_ids, ?)", [doc_id]).fetchall()[0][0]

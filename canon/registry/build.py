"""Builds the evidence registry: each documents source (a folder or a file, the
configuration's `documents`) and the dbt-rendered documents pass their own
contract gates, then land in DuckDB together."""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import duckdb

from canon.core.clock import utcnow
from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.registry import claims, contract_state, corpus_cache, publication
from canon.registry import store as registry
from canon.registry.contracts import Contract
from canon.registry.gate import GateResult, QuarantineEntry, check_record, decide, gate, require_accepted
from canon.registry.tombstones import forgotten_doc_ids, forgotten_reason
from canon.sources.corpus.reader import read_corpus
from canon.sources.corpus.records import RawRecord, ReadFailure


@dataclass
class RegistryBuild:
    diffs: dict[str, registry.RegistryDiff] = field(default_factory=dict)
    quarantined: list[QuarantineEntry] = field(default_factory=list)
    documents: int = 0
    corpus_files: dict[str, int] = field(default_factory=dict)   # files, files_read, files_trusted
    timings: dict[str, float] = field(default_factory=dict)      # seconds per stage of the corpus build

    def summary(self) -> dict:
        return {
            "documents": self.documents,
            "quarantined": len(self.quarantined),
            **{f"{system}/{k}": v for system, d in self.diffs.items() for k, v in d.as_metadata().items()},
            **{f"corpus/{k}": v for k, v in self.corpus_files.items()},
        }


def records_from_documents(docs: list[Document]) -> list[RawRecord]:
    """Documents produced by Canon itself (from dbt artifacts) go through the
    same gate as any corpus record."""
    out = []
    for d in docs:
        fields = d.model_dump(mode="json", exclude={"source_uri", "source_system", "source_revision"})
        fields["allowed_roles"] = list(d.allowed_roles)
        raw = json.dumps(fields, sort_keys=True).encode("utf-8")
        out.append(RawRecord(fields=fields, source_uri=d.source_uri, raw=raw, path=d.source_uri,
                             source_system=d.source_system, source_revision=d.source_revision))
    return out


def _without_forgotten(con: duckdb.DuckDBPyConnection, result: GateResult, contract: Contract) -> GateResult:
    """A forgotten doc_id (canon forget) never comes back: it is reported as
    quarantined with the date it was forgotten, and nothing of it is stored."""
    gone = forgotten_doc_ids(con)
    if not gone:
        return result
    now = utcnow()
    label, system = contract.label, contract.source.system
    quarantine = [e for e in result.quarantine if e.doc_id not in gone]
    quarantine += [QuarantineEntry(d.source_uri, d.doc_id, [forgotten_reason(gone[d.doc_id])], d.content_hash, now,
                                   label, system) for d in result.documents if d.doc_id in gone]
    quarantine += [QuarantineEntry(e.source_uri, e.doc_id, [forgotten_reason(gone[e.doc_id])], e.content_hash,
                                   e.quarantined_at, e.contract, e.source_system)
                   for e in result.quarantine if e.doc_id in gone]
    return GateResult([d for d in result.documents if d.doc_id not in gone], quarantine, result.contract,
                      result.collapsed, [i for i in result.unchanged if i not in gone])


def _store(con: duckdb.DuckDBPyConnection, result: GateResult, contract: Contract, run_id: str,
           build: RegistryBuild, others: claims.Others, *, yields: bool = True) -> set[str]:
    """Store one source's gate result after the checks across sources; returns the source_uris
    those checks quarantined."""
    system = contract.source.system
    result = _without_forgotten(con, result, contract)
    result, refused = claims.screen(con, result, contract, others, yields=yields, now=utcnow())
    build.diffs[system] = registry.sync_documents(
        con, result.documents, source_system=system, contract_version=contract.label, run_id=run_id,
        unchanged=result.unchanged)
    registry.sync_quarantine(con, [_keyed(e) for e in result.quarantine], source_system=system, run_id=run_id)
    build.quarantined.extend(result.quarantine)
    return refused


def _keyed(e: QuarantineEntry) -> QuarantineEntry:
    # A file that could not be read has no content hash; key it by its path.
    if e.content_hash:
        return e
    return QuarantineEntry(e.source_uri, e.doc_id, e.reasons, f"unread:{e.source_uri}", e.quarantined_at,
                           e.contract, e.source_system)


def build_registry(
    con: duckdb.DuckDBPyConnection,
    *,
    corpus: Path | None = None,
    corpus_contract: Contract | None = None,
    dbt_documents: list[Document] | None = None,
    dbt_contract: Contract | None = None,
    run_id: str,
    today: dt.date | None = None,
    documents: Sequence[tuple[Path, Contract]] | None = None,
) -> RegistryBuild:
    """`documents`: the document sources, each a folder or file with its own contract (the
    configuration's `documents`); without it, the one `corpus` under `corpus_contract`."""
    today = today or dt.date.today()
    registry.ensure_schema(con)
    build = RegistryBuild()
    if documents is None:
        if corpus is not None and corpus_contract is None:
            raise TypeError("build_registry: corpus needs its corpus_contract")
        documents = [(Path(corpus), corpus_contract)] if corpus is not None else []
    groups = _by_system(documents)
    # dbt owns the doc_ids and objects it renders, so the corpus is screened against them first
    # (canon.registry.claims); every contract is known to every screen for `owns_objects`.
    rendered = dbt_documents if dbt_documents is not None and dbt_contract is not None else []
    if rendered:  # undeclared effective time from the artifacts' publication history (canon.registry.publication)
        rendered = publication.with_history(con, rendered, source_system=dbt_contract.source.system, today=today)
    contracts = [c for _, c in documents] + ([dbt_contract] if dbt_contract is not None else [])
    for i, (sources, contract) in enumerate(groups):
        _build_corpus(con, sources, contract, build, run_id=run_id, today=today, rendered=rendered,
                      contracts=contracts, record_root=i == 0)
    if dbt_documents is not None and dbt_contract is not None:
        contract_state.apply(con, dbt_contract, source=f"contract {dbt_contract.label}")
        others = claims.others_for(con, dbt_contract.source.system, contracts=contracts)
        _store(con, gate(records_from_documents(rendered), dbt_contract, today=today), dbt_contract, run_id,
               build, others, yields=False)
    build.documents = con.execute("SELECT count(*) FROM documents WHERE deleted_at IS NULL").fetchall()[0][0]
    return build


def _by_system(documents: Sequence[tuple[Path, Contract]]) -> list[tuple[list[Path], Contract]]:
    """The sources grouped by their contract's source system, in first-seen order: the registry keeps
    a source's documents by that system, so several folders under one contract are one source (read
    together, canon.registry.corpus_cache). Two different contracts with one system are an error."""
    groups: dict[str, tuple[list[Path], Contract]] = {}
    for source, contract in documents:
        system = contract.source.system
        if system in groups and groups[system][1] != contract:
            first = groups[system][0][0]
            raise CanonInputError(source, f"documents source under contract {contract.label} has source system "
                                          f"{system!r}, as {first} under {groups[system][1].label} has: give each "
                                          "contract its own source.system, or put both sources under one contract",
                                  field="contract")
        groups.setdefault(system, ([], contract))[0].append(Path(source))
    return list(groups.values())


def root_labels(sources: Sequence[Path]) -> list[str]:
    """A label per source of one contract, unique among them: the fewest trailing parts of its folder
    (a file's: the folder holding it) that tell them apart. One source alone has none."""
    if len(sources) == 1:
        return [""]
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in sources]
    for depth in range(1, max(len(f.parts) for f in folders) + 1):
        labels = ["/".join(f.parts[-depth:]).lstrip("/") or "root" for f in folders]
        # a folder listed twice keeps one label (the settings refuse that); files of one folder share it
        if len(set(labels)) == len(set(folders)):
            return labels
    return [str(i) for i in range(len(sources))]


def _build_corpus(con: duckdb.DuckDBPyConnection, sources: list[Path], contract: Contract, build: RegistryBuild, *,
                  run_id: str, today: dt.date, rendered: list[Document], contracts: list[Contract],
                  record_root: bool) -> None:
    contract_state.apply(con, contract, source=f"contract {contract.label}")
    system = contract.source.system
    others = claims.others_for(con, system, rendered=rendered, contracts=contracts)
    owners = claims.live_owners(con, system)
    root = sources[0].resolve()
    if len(sources) > 1 or root.is_dir():  # only changed files are opened (canon.registry.corpus_cache)
        if len(sources) > 1:
            for source in sources:
                if not source.exists():
                    raise CanonInputError(source, "documents path does not exist")
            roots = [corpus_cache.Root(s.resolve(), label) if s.is_dir() else
                     corpus_cache.Root(s.resolve().parent, label, s.resolve().name)
                     for s, label in zip(sources, root_labels(sources))]
            scanned = corpus_cache.scan(con, roots, contract, today=today, owners=owners)
        else:
            scanned = corpus_cache.scan(con, root, contract, today=today, owners=owners)
        t0 = time.perf_counter()
        refused = _store(con, scanned.result, contract, run_id, build, others)
        t1 = time.perf_counter()
        corpus_cache.record(con, scanned, refused=refused)
        timings = {**scanned.timings, "store_s": t1 - t0, "record_s": time.perf_counter() - t1}
        for k, v in timings.items():
            build.timings[k] = build.timings.get(k, 0.0) + v
        for k, v in scanned.summary().items():
            build.corpus_files[k] = build.corpus_files.get(k, 0) + v
    else:  # a single .jsonl/.json/.md file: read whole (CanonInputError if it does not exist)
        checked = [item if isinstance(item, ReadFailure) else check_record(item, contract, today)
                   for item in read_corpus(sources[0])]
        require_accepted(contract)
        _store(con, decide(checked, contract, owners=owners), contract, run_id, build, others)
    if record_root:  # the first source: where `canon forget` looks for source copies
        registry.set_setting(con, "corpus_root", str(root if root.is_dir() else root.parent))

"""The contract gate: runs before any chunking (docs/design.md, "Enforcing the contract at the gate").

One module on purpose: every reason a record can be refused, in the order it is checked, is
the gate's contract with a person reading quarantine (id rules: canon/registry/identity.py;
ownership across sources: canon/registry/claims.py).

Every raw record is checked against its source's contract. A record that
passes becomes a `Document`; one that fails goes to quarantine with ALL its
reasons -- never silently dropped, never partly indexed. Read-level failures
from `canon.sources.corpus.reader` (undecodable text, over size, path escape, bad JSON or
front matter) are quarantined the same way, so one table explains everything
that did not make it into the index.

Reasons name the field and the rule, and echo a value only when it is short and
holds no PII (a PII finding reports kinds and offsets, never the text).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from pydantic import ValidationError

from canon.core.errors import CanonInputError
from canon.core.ids import content_hash as hash_text
from canon.models.documents import CONTRACT_KEYS, Document
from canon.registry import identity as ids
from canon.registry import pii
from canon.registry.contracts import Contract
from canon.registry.defaults import with_defaults
from canon.sources.corpus.markdown import NO_FRONT_MATTER
from canon.sources.corpus.records import CorpusRead, RawRecord, ReadFailure

# Fields that hold hashes, not prose: never PII-scanned.
_NOT_SCANNED = {"content_hash"}
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_REAL_SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")
_MAX_PII_LOCATIONS = 10


@dataclass(frozen=True)
class QuarantineEntry:
    """One record (or file) that did not pass, with every reason it failed."""

    source_uri: str
    doc_id: str | None
    reasons: list[str]
    content_hash: str | None        # stated hash, else hash of the text, else of the raw bytes; None if unread
    quarantined_at: dt.datetime     # UTC; one timestamp per gate run
    contract: str = ""              # "<name>@<version>" of the contract applied
    source_system: str = ""

    def as_row(self) -> dict[str, Any]:
        """A flat row for a `quarantine` table (reasons stay a list: VARCHAR[])."""
        return {
            "source_uri": self.source_uri,
            "doc_id": self.doc_id,
            "reasons": list(self.reasons),
            "content_hash": self.content_hash,
            "quarantined_at": self.quarantined_at,
            "contract": self.contract,
            "source_system": self.source_system,
        }


@dataclass(frozen=True)
class GateResult:
    documents: list[Document]
    quarantine: list[QuarantineEntry]
    contract: Contract | None = None
    # Later identical copies of an admitted doc_id (dropped silently, listed here for audit).
    collapsed: list[str] = field(default_factory=list)
    # Admitted doc_ids whose record came from the gate cache (canon.registry.corpus_cache): the registry
    # already holds exactly this revision, so no Document was rebuilt for them.
    unchanged: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.quarantine


# --- value helpers -------------------------------------------------------------------
def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, str):
        return not v.strip()
    if isinstance(v, (list, tuple, dict)):
        return len(v) == 0
    return False


def _show(v: Any) -> str:
    """A value fit for a reason: short, and withheld when it contains PII."""
    s = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
    found = pii.scan(s)
    if found:
        return f"<value withheld: contains {', '.join(pii.kinds(found))}>"
    if len(s) > 60:
        s = s[:57] + "..."
    return repr(s) if isinstance(v, str) else s


def _parse_date(v: Any) -> dt.date | None:
    if isinstance(v, dt.datetime):
        return v.date() if v.time() == dt.time(0) and v.tzinfo is None else None
    if isinstance(v, dt.date):
        return v
    if isinstance(v, str) and _ISO_DATE.match(v.strip()):
        try:
            return dt.date.fromisoformat(v.strip())
        except ValueError:
            return None
    return None


def _strings(v: Any, where: str) -> Iterable[tuple[str, str]]:
    """(location, string) for every string inside a field value."""
    if isinstance(v, str):
        yield where, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(x, f"{where}.{k}")
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            yield from _strings(x, f"{where}[{i}]")


def _pydantic_reason(err: dict[str, Any]) -> str:
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "missing":
        return f"missing field '{loc}' (the document model requires it)"
    msg = err["msg"].removeprefix("Value error, ")
    msg = msg[:1].lower() + msg[1:]
    if "input" in err:
        return f"field {loc}: {msg}, got {_show(err['input'])}"
    return f"field {loc}: {msg}"


# --- one record ----------------------------------------------------------------------
@dataclass
class Checked:
    """One record after its own checks, before the checks across records (duplicates).

    `cached`: the outcome was recorded by an earlier run for the same bytes under the same
    contract (canon.registry.corpus_cache); it passed then, and `document` is not rebuilt."""

    source_uri: str
    source_system: str | None
    document: Document | None
    reasons: list[str]
    doc_id: str | None
    content_hash: str | None
    identity: str     # sha256 of what "the same content" means for duplicate detection
    source_revision: str | None = None
    cached: bool = False

    @property
    def admitted(self) -> bool:
        return not self.reasons and (self.document is not None or self.cached)


def check_record(rec: RawRecord, c: Contract, today: dt.date) -> Checked:
    """The checks of one record on its own (all but the duplicate rule)."""
    return _check(rec, c, today)


def _identity(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check(rec: RawRecord, c: Contract, today: dt.date) -> Checked:
    if c.defaults is not None:   # what the record does not state, its contract does (canon.registry.defaults)
        rec = replace(rec, fields=with_defaults(rec.fields, rec.path, c.defaults))
    elif not rec.front_matter:   # plain Markdown under a contract that says nothing of it
        return Checked(rec.source_uri, rec.source_system, None, [NO_FRONT_MATTER], None, rec.raw_sha256,
                       _identity("invalid:" + rec.raw_sha256), source_revision=rec.source_revision or rec.raw_sha256)
    f = rec.fields
    reasons: list[str] = []
    flagged: set[str] = set()     # fields already explained; pydantic must not repeat them

    for name in c.schema_.required:
        if _is_missing(f.get(name)):
            reasons.append(f"missing required field '{name}'")
            flagged.add(name)

    # Ids and roles: one character set, NFKC-normal (canon.registry.identity).
    for name in ("doc_id", "object_id", "supersedes"):
        if name in flagged or f.get(name) is None:
            continue
        problem = ids.id_problem(f.get(name), name)
        if problem is not None:
            reasons.append(problem)
            flagged.add(name)
    if "allowed_roles" not in flagged and f.get("allowed_roles") is not None:
        role_reasons = ids.role_problems(f.get("allowed_roles"))
        if role_reasons:
            reasons.extend(role_reasons)
            flagged.add("allowed_roles")

    for name, allowed in c.schema_.enums.items():
        v = f.get(name)
        if name in flagged or _is_missing(v):
            continue
        values = v if isinstance(v, (list, tuple)) else [v]
        bad = [x for x in values if not isinstance(x, str) or x not in allowed]
        if bad:
            reasons.append(f"field {name}: {_show(bad[0])} is not one of {', '.join(allowed)}")
            flagged.add(name)

    dates: dict[str, dt.date] = {}
    for name in ("valid_from", "valid_to"):
        v = f.get(name)
        if name in flagged or v is None:
            continue
        d = _parse_date(v)
        if d is None:
            reasons.append(f"field {name}: invalid date {_show(v)} (expected YYYY-MM-DD)")
            flagged.add(name)
        else:
            dates[name] = d
    if "valid_from" in dates and "valid_to" in dates and dates["valid_to"] <= dates["valid_from"]:
        reasons.append(
            f"field valid_to: valid_to <= valid_from ({dates['valid_to']} <= {dates['valid_from']})"
        )
        flagged.add("valid_to")
    horizon = today + dt.timedelta(days=c.quality.max_future_effective_days)
    if "valid_from" in dates and dates["valid_from"] > horizon:
        reasons.append(
            f"field valid_from: effective date {dates['valid_from']} is more than "
            f"{c.quality.max_future_effective_days} days after today ({today})"
        )

    authority = f.get("authority")
    if "authority" not in flagged and authority is not None:
        if isinstance(authority, bool) or not (
            isinstance(authority, int) or (isinstance(authority, str) and re.fullmatch(r"-?\d+", authority.strip()))
        ):
            reasons.append(f"field authority: {_show(authority)} is not an integer")
            flagged.add("authority")
        else:
            authority = int(authority)
            if not 0 <= authority <= 100:
                reasons.append(f"field authority: {authority} is out of range 0..100")
                flagged.add("authority")

    text = f.get("text")
    if isinstance(text, str) and "text" not in flagged:
        n_chars = len(text.strip())
        if n_chars < c.quality.min_body_chars:
            reasons.append(f"body is {n_chars} characters, shorter than min_body_chars {c.quality.min_body_chars}")
        n_bytes = len(text.encode("utf-8"))
        if n_bytes > c.quality.max_body_bytes:
            reasons.append(f"body is {n_bytes} bytes, over max_body_bytes {c.quality.max_body_bytes}")

    if not c.source.pii_allowed:
        found = [
            (where, hit)
            for key in sorted(f, key=lambda k: (k != "text", k))  # the body first, then fields by name
            if key not in _NOT_SCANNED
            for where, s in _strings(f[key], key)
            for hit in pii.scan(s)
        ]
        if found:
            kinds = sorted({hit.kind for _, hit in found})
            places = "; ".join(f"{hit.kind} in {where} at offset {hit.start}" for where, hit in found[:_MAX_PII_LOCATIONS])
            more = f"; and {len(found) - _MAX_PII_LOCATIONS} more" if len(found) > _MAX_PII_LOCATIONS else ""
            reasons.append(f"PII found in a source with pii_allowed false: {', '.join(kinds)} ({places}{more})")

    stated = f.get("content_hash")
    if stated is not None and not isinstance(stated, str):
        reasons.append(f"field content_hash: must be a string, got {_show(stated)}")
        flagged.add("content_hash")
        stated = None
    stated = stated or None
    if (c.quality.verify_content_hash and stated and isinstance(text, str)
            and _REAL_SHA256.match(stated) and stated != hash_text(text)):
        reasons.append("field content_hash: the stated sha256 does not match the text (changed source material?)")
        flagged.add("content_hash")

    system = rec.source_system or c.source.system
    if system != c.source.system:
        reasons.append(f"source_system {system!r} is not this contract's source system {c.source.system!r}")

    # Build the Document: contract keys are fields, anything else is metadata.
    kwargs: dict[str, Any] = {k: f[k] for k in CONTRACT_KEYS if k in f}
    kwargs.update(dates)
    if "authority" not in flagged and authority is not None:
        kwargs["authority"] = authority
    if not stated:
        kwargs.pop("content_hash", None)
    extras = {k: v for k, v in f.items() if k not in CONTRACT_KEYS and k != "text"}
    metadata = dict(extras.pop("metadata")) if isinstance(extras.get("metadata"), dict) else {}
    metadata.update(extras)
    kwargs.update(
        text=text,
        source_uri=rec.source_uri,
        source_system=system,
        source_revision=rec.source_revision or rec.raw_sha256,
        metadata=metadata,
    )
    if text is None:
        kwargs.pop("text")
    doc: Document | None = None
    try:
        doc = Document(**kwargs)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            top = str(err["loc"][0]) if err["loc"] else ""
            if top in flagged or (not top and "valid_to" in flagged):
                continue
            reasons.append(_pydantic_reason(err))
    if reasons:
        doc = None

    doc_id = f.get("doc_id") if isinstance(f.get("doc_id"), str) and f.get("doc_id").strip() else None
    if doc_id is not None and ids.id_problem(doc_id, "doc_id") is not None:
        doc_id = None  # not an id: never a key of any table (the reason shows it escaped)
    if doc is not None:
        chash = doc.content_hash
        identity = json.dumps(doc.model_dump(mode="json", exclude={"source_uri", "source_revision"}), sort_keys=True)
    else:
        chash = stated or (hash_text(text) if isinstance(text, str) else rec.raw_sha256)
        identity = "invalid:" + json.dumps(f, sort_keys=True, default=str)
    return Checked(rec.source_uri, rec.source_system, doc, reasons, doc_id, chash, _identity(identity),
                   source_revision=rec.source_revision or rec.raw_sha256)


# --- the gate --------------------------------------------------------------------------
def gate(
    records: CorpusRead | Iterable[RawRecord | ReadFailure],
    contract: Contract,
    *,
    today: dt.date,
    now: dt.datetime | None = None,
) -> GateResult:
    """Check every record against `contract`; documents pass, the rest is quarantined.

    Order is the input order (read_corpus: sorted path, then line). For a doc_id
    seen more than once the first copy decides: later copies with different
    content are quarantined, identical ones collapse silently.
    `now` stamps `quarantined_at` (default: the current UTC time).
    """
    require_accepted(contract)
    checked = (item if isinstance(item, ReadFailure) else _check(item, contract, today) for item in records)
    return decide(checked, contract, now=now)


def require_accepted(contract: Contract) -> None:
    if not contract.accepted:
        raise CanonInputError(
            contract.label,
            f"major version {contract.major} not accepted by consumers yet (accepted_major {contract.accepted_major})",
            field="accepted_major",
        )


def decide(items: Iterable[Checked | ReadFailure], contract: Contract, *, now: dt.datetime | None = None,
           owners: dict[str, str] | None = None) -> GateResult:
    """The checks across records, over every record in input order.

    Without `owners` (a gate over records alone) the first copy of a doc_id decides; later
    copies with different content are quarantined, identical ones collapse silently.
    With `owners` (doc_id -> the source_uri the registry holds it live from; the registry
    build, canon.registry.build) a doc_id belongs to its registered file, whatever the sort
    order: a claim with other content from another file is quarantined naming the owner,
    and when no claimant is the registered owner, none is admitted."""
    require_accepted(contract)
    stamp = now or dt.datetime.now(dt.timezone.utc)
    label = contract.label
    documents: list[Document] = []
    unchanged: list[str] = []
    quarantine: list[QuarantineEntry] = []
    collapsed: list[str] = []
    items = list(items)
    winner = _winners(items, owners) if owners is not None else {}
    first_seen: dict[str, tuple[str, str]] = {}   # doc_id -> (source_uri, identity)

    for out in items:
        if isinstance(out, ReadFailure):
            quarantine.append(QuarantineEntry(out.source_uri, None, [out.reason], out.raw_sha256,
                                              stamp, label, contract.source.system))
            continue
        if out.doc_id is not None and out.doc_id in winner:
            verdict = winner[out.doc_id]
            if verdict.identity is None or verdict.identity != out.identity:
                out.reasons.append(verdict.reason_for(out))
                out.document = None
            elif out.doc_id in first_seen:
                collapsed.append(out.source_uri)
                continue
            else:
                first_seen[out.doc_id] = (out.source_uri, out.identity)
        elif out.doc_id is not None:
            if out.doc_id in first_seen:
                first_uri, first_identity = first_seen[out.doc_id]
                if first_identity == out.identity:
                    collapsed.append(out.source_uri)
                    continue
                out.reasons.append(
                    f"duplicate doc_id {out.doc_id!r} with different content (first seen at {first_uri})"
                )
                out.document = None
            else:
                first_seen[out.doc_id] = (out.source_uri, out.identity)
        if out.admitted and out.document is not None:
            documents.append(out.document)
        elif out.admitted:
            unchanged.append(out.doc_id)
        else:
            quarantine.append(QuarantineEntry(out.source_uri, out.doc_id, out.reasons, out.content_hash,
                                              stamp, label, out.source_system or contract.source.system))
    return GateResult(documents, quarantine, contract, collapsed, unchanged)


DUPLICATE_DOC_ID = "duplicate doc_id"   # how every doc_id collision reason begins (canon.registry.checks)


@dataclass(frozen=True)
class _Verdict:
    """Who keeps a doc_id that files claim with different content: the registered owner's
    content (`identity`), or nobody (`identity` None)."""

    doc_id: str
    identity: str | None
    owner: str | None
    claimants: tuple[str, ...]

    def reason_for(self, out: Checked) -> str:
        if self.owner is not None:
            return (f"{DUPLICATE_DOC_ID} {self.doc_id!r} with different content: it belongs to "
                    f"{self.owner}, which registered it first")
        others = ", ".join(u for u in self.claimants if u != out.source_uri)
        return (f"{DUPLICATE_DOC_ID} {self.doc_id!r} with different content also claimed by {others}: "
                f"no file is admitted for it until one claim is removed")


def _winners(items: list[Checked | ReadFailure], owners: dict[str, str]) -> dict[str, _Verdict]:
    """The doc_ids claimed with more than one content, and who keeps each (see `decide`)."""
    claims: dict[str, list[Checked]] = {}
    for out in items:
        if isinstance(out, Checked) and out.doc_id is not None:
            claims.setdefault(out.doc_id, []).append(out)
    verdicts = {}
    for doc_id, group in claims.items():
        if len({c.identity for c in group}) < 2:
            continue
        owner = owners.get(doc_id)
        owned = [c for c in group if c.source_uri == owner]
        uris = tuple(dict.fromkeys(c.source_uri for c in group))
        verdicts[doc_id] = _Verdict(doc_id, owned[0].identity if owned else None,
                                    owner if owned else None, uris)
    return verdicts

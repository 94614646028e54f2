"""Reading a corpus, source contracts and the contract gate (canon.sources.corpus.reader,
canon.registry.contracts, canon.registry.gate)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest

from canon.core.config import PROJECT_ROOT
from canon.core.errors import CanonInputError
from canon.core.ids import content_hash
from canon.registry.contracts import Contract, check_upgrade, contract_from_dict, load_contract, load_contracts
from canon.registry.gate import gate
from canon.sources.corpus.markdown import parse_markdown
from canon.sources.corpus.reader import read_corpus
from canon.sources.corpus.records import RawRecord, ReadFailure

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "hostile_corpus"
CONTRACTS = PROJECT_ROOT / "contracts"
TODAY = dt.date(2026, 10, 10)
NOW = dt.datetime(2026, 10, 10, 12, 0, tzinfo=dt.timezone.utc)


def _dossier() -> Path:
    # The dossier gold set (docs/design.md, "The dossier gold set"), committed so a fresh clone tests it.
    return HERE / "fixtures" / "dossier" / "corpus.jsonl"


@pytest.fixture(scope="module")
def knowledge() -> Contract:
    return load_contract(CONTRACTS / "knowledge.yml")


def _by_uri(result):
    return {q.source_uri: q for q in result.quarantine}


# --- the dossier fixture --------------------------------------------------------------
def test_dossier_loads_verbatim(knowledge):
    path = _dossier()
    read = read_corpus(path)
    assert len(read.records) == 12 and read.failures == []
    result = gate(read, knowledge, today=TODAY, now=NOW)
    assert result.quarantine == [] and len(result.documents) == 12
    given = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for doc, src in zip(result.documents, given):
        assert doc.doc_id == src["doc_id"]
        assert doc.content_hash == src["content_hash"]          # the given hash is kept
        assert doc.text == src["text"]
        assert doc.allowed_roles == tuple(src["allowed_roles"])
        assert doc.valid_from.isoformat() == src["valid_from"]
        assert (doc.valid_to.isoformat() if doc.valid_to else None) == src["valid_to"]
        assert doc.metadata == {}
        assert doc.source_system == "corpus"
    assert [d.source_uri for d in result.documents] == [f"corpus.jsonl#L{i}" for i in range(1, 13)]
    # The source revision is the hash of the record's own bytes (the jsonl line).
    assert result.documents[0].source_revision.startswith("sha256:")


def test_dossier_passes_even_with_a_late_today(knowledge):
    # Nothing in the dossier is "too far in the future" for any today >= 2025.
    result = gate(read_corpus(_dossier()), knowledge, today=dt.date(2025, 1, 1), now=NOW)
    assert result.quarantine == []


def test_missing_corpus_raises():
    with pytest.raises(CanonInputError, match="does not exist"):
        read_corpus(HOSTILE / "no_such_folder")


# --- the hostile corpus ------------------------------------------------------------------
GOOD = {
    "good/freshness_snapshot.md": "freshness.net_revenue.2026-09-30T0900Z",
    "good/net_revenue_runbook.md": "runbook.net_revenue.close",
    "good_notes.jsonl#L1": "wiki.vat.v3",
}

# source_uri -> substrings every one of which must appear in that entry's reasons.
EXPECTED = {
    "authority_out_of_range.jsonl#L1": ["field authority: 150 is out of range 0..100"],
    "bad_date.md": ["field valid_from: invalid date 'yesterday'"],
    "bad_enum.md": ["field status: 'final' is not one of approved, draft"],
    "bad_front_matter.md": ["invalid YAML front matter at line 11"],
    "bad_json.json": ["invalid JSON at line 3, column 4"],
    "duplicate_key.md": ["duplicate key 'status'"],
    "future_effective.md": ["field valid_from: effective date 2031-01-01 is more than 730 days after today (2026-10-10)"],
    "good_notes.jsonl#L2": ["invalid JSON at line 2"],
    "good_notes.jsonl#L4": ["line 4 is a JSON list, expected an object"],
    "inverted_interval.json#/0": ["field valid_to: valid_to <= valid_from (2026-01-01 <= 2026-07-01)"],
    "inverted_interval.json#/1": ["list item 1 is a string, expected an object"],
    "many_reasons.md": [
        "field status: 'final' is not one of",
        "field valid_to: valid_to <= valid_from (2025-12-31 <= 2026-01-01)",
        "field authority: 500 is out of range 0..100",
        "body is 6 characters, shorter than min_body_chars 40",
    ],
    "missing_fields.jsonl#L1": [
        "missing required field 'object_id'",
        "missing required field 'title'",
        "missing required field 'allowed_roles'",
    ],
    "no_front_matter.md": ["no YAML front matter"],
    "pii.md": ["PII found in a source with pii_allowed false: card_number, email, iban, phone"],
    "short_body.md": ["body is 10 characters, shorter than min_body_chars 40"],
    "unterminated_front_matter.md": ["unterminated YAML front matter"],
    "zz_duplicate_conflict.jsonl#L1": [
        "duplicate doc_id 'wiki.vat.v3' with different content (first seen at good_notes.jsonl#L1)"
    ],
}

# Added at run time to a copy of the corpus (awkward or impossible to commit).
EXPECTED_RUNTIME = {
    "invalid_utf8.md": ["not valid UTF-8 (first bad byte at offset"],
    "oversize.md": ["file is 1000001 bytes, over the size limit of 1000000 bytes"],
    "escape_relative.md": ["path escapes the corpus root"],
    "escape_absolute.jsonl": ["path escapes the corpus root"],
    "escape_dir": ["path escapes the corpus root (symlinked folder"],
    "broken_link.md": ["cannot read file"],
    "lines.jsonl#L2": ["not valid UTF-8"],
    "lines.jsonl#L3": ["line is over the size limit of 1000000 bytes"],
}


def _assert_reasons(entry, expected):
    joined = " | ".join(entry.reasons)
    for fragment in expected:
        assert fragment in joined, f"{entry.source_uri}: {fragment!r} not in {joined!r}"


def test_hostile_corpus_committed_files(knowledge):
    result = gate(read_corpus(HOSTILE), knowledge, today=TODAY, now=NOW)
    assert {d.source_uri: d.doc_id for d in result.documents} == GOOD
    quarantined = _by_uri(result)
    assert set(quarantined) == set(EXPECTED)
    for uri, fragments in EXPECTED.items():
        _assert_reasons(quarantined[uri], fragments)
    # ALL reasons, not only the first
    assert len(quarantined["many_reasons.md"].reasons) == 4
    assert len(quarantined["missing_fields.jsonl#L1"].reasons) == 3
    # the identical later copy of a good doc collapses silently
    assert result.collapsed == ["good_notes.jsonl#L3"]
    # the contract, the timestamp and the doc_id travel with each entry
    entry = quarantined["bad_enum.md"]
    assert entry.doc_id == "wiki.bad_enum" and entry.quarantined_at == NOW
    assert entry.contract == "knowledge@1.0.0" and entry.source_system == "corpus"
    assert entry.content_hash.startswith("sha256:")
    assert quarantined["bad_json.json"].doc_id is None


def test_pii_reason_reports_kinds_and_offsets_never_values(knowledge):
    entry = _by_uri(gate(read_corpus(HOSTILE), knowledge, today=TODAY, now=NOW))["pii.md"]
    reason = " ".join(entry.reasons)
    assert "email in text at offset" in reason and "iban in text at offset" in reason
    for secret in ("jana.novak", "601 123 456", "3704 0044", "4111"):
        assert secret not in reason


@pytest.fixture()
def hostile_copy(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(HOSTILE, corpus, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ndoc_id: secret\n---\nOutside the corpus root.\n", encoding="utf-8")
    (outside / "secret.jsonl").write_text('{"doc_id": "secret"}\n', encoding="utf-8")
    (corpus / "invalid_utf8.md").write_bytes(b"---\ndoc_id: wiki.latin1\n---\nCaf\xe9 menu \xff\xfe\n")
    (corpus / "oversize.md").write_bytes(b"x" * 1_000_001)
    os.symlink("../outside/secret.md", corpus / "escape_relative.md")
    os.symlink(outside / "secret.jsonl", corpus / "escape_absolute.jsonl")
    os.symlink(outside, corpus / "escape_dir", target_is_directory=True)
    os.symlink("missing_target.md", corpus / "broken_link.md")
    os.symlink("good/net_revenue_runbook.md", corpus / "zz_alias.md")  # inside the root: read, collapses
    good_line = (HOSTILE / "good_notes.jsonl").read_bytes().splitlines()[0]
    (corpus / "lines.jsonl").write_bytes(
        good_line.replace(b"wiki.vat.v3", b"wiki.vat.lines") + b"\n"
        + b'{"doc_id": "wiki.bad_bytes", "text": "\xff"}\n'
        + b'{"text": "' + b"y" * 1_000_001 + b'"}\n'
        + b"\n"
        + good_line.replace(b"wiki.vat.v3", b"wiki.vat.after_long_line") + b"\n"
    )
    return corpus


def test_hostile_corpus_with_runtime_failures(hostile_copy, knowledge):
    result = gate(read_corpus(hostile_copy), knowledge, today=TODAY, now=NOW)
    quarantined = _by_uri(result)
    assert set(quarantined) == set(EXPECTED) | set(EXPECTED_RUNTIME)
    for uri, fragments in {**EXPECTED, **EXPECTED_RUNTIME}.items():
        _assert_reasons(quarantined[uri], fragments)
    docs = {d.source_uri: d.doc_id for d in result.documents}
    # one bad line does not take its file with it
    assert docs == {**GOOD, "lines.jsonl#L1": "wiki.vat.lines", "lines.jsonl#L5": "wiki.vat.after_long_line"}
    assert "zz_alias.md" in result.collapsed
    # nothing from outside the root was read: no hash of its bytes either
    assert quarantined["escape_relative.md"].content_hash is None
    assert all("secret" != d.doc_id for d in result.documents)


def test_symlink_inside_root_is_read(tmp_path):
    (tmp_path / "real").mkdir()
    src = HOSTILE / "good" / "net_revenue_runbook.md"
    shutil.copy(src, tmp_path / "real" / "doc.md")
    os.symlink("real/doc.md", tmp_path / "link.md")
    read = read_corpus(tmp_path)
    assert [r.source_uri for r in read.records] == ["link.md", "real/doc.md"]
    assert read.records[0].raw == read.records[1].raw


def test_single_file_corpus_and_unknown_suffix(tmp_path):
    read = read_corpus(HOSTILE / "good" / "net_revenue_runbook.md")
    assert [r.source_uri for r in read.records] == ["net_revenue_runbook.md"]
    (tmp_path / "corpus.csv").write_text("a,b\n")
    with pytest.raises(CanonInputError, match="must be .jsonl, .json or .md"):
        read_corpus(tmp_path / "corpus.csv")


def test_json_single_object_and_policy_skipped(tmp_path, knowledge):
    obj = json.loads((HOSTILE / "good_notes.jsonl").read_text().splitlines()[0])
    (tmp_path / "one.json").write_text(json.dumps(obj), encoding="utf-8")
    (tmp_path / "policy.yml").write_text("revision: r1\nrevoke: []\n")
    (tmp_path / ".hidden.json").write_text("not even json")
    read = read_corpus(tmp_path)
    assert [r.source_uri for r in read.records] == ["one.json"] and read.failures == []
    assert gate(read, knowledge, today=TODAY).documents[0].doc_id == "wiki.vat.v3"


# --- markdown front matter ------------------------------------------------------------------
def test_markdown_front_matter_parsing():
    fields = parse_markdown(
        "---\r\n"
        "doc_id: d1\r\n"
        "version: 1.10\r\n"
        "valid_from: 2026-07-01\r\n"
        "valid_to:\r\n"
        "allowed_roles:\r\n  - analyst\r\n  - finance_controller\r\n"
        "supersedes: no\r\n"
        "authority: 080\r\n"
        "sla_hours: 2\r\n"
        "pinned: true\r\n"
        "---\r\n"
        "\r\n# Title\r\n\r\nBody line.\r\n\r\n"
    )
    assert fields == {
        "doc_id": "d1",
        "version": "1.10",              # not the float 1.1
        "valid_from": "2026-07-01",     # the gate parses dates strictly
        "valid_to": None,
        "allowed_roles": ["analyst", "finance_controller"],
        "supersedes": "no",             # not the YAML 1.1 boolean False
        "authority": "080",             # not octal: the gate reads it as 80
        "sla_hours": 2,
        "pinned": True,
        "text": "# Title\n\nBody line.",
    }


def test_markdown_front_matter_maps_to_document(knowledge):
    result = gate(read_corpus(HOSTILE / "good" / "net_revenue_runbook.md"), knowledge, today=TODAY, now=NOW)
    (doc,) = result.documents
    assert doc.version == "1.10" and doc.valid_from == dt.date(2026, 7, 1) and doc.valid_to is None
    assert doc.allowed_roles == ("analyst", "finance_controller") and doc.supersedes is None
    assert doc.metadata == {"owner_team": "finance-data", "review_cycle": "quarterly"}
    assert doc.text.startswith("# Month-end close") and doc.content_hash == content_hash(doc.text)


@pytest.mark.parametrize("text, reason", [
    ("no fence\n", "no YAML front matter"),
    ("---\na: 1\n", "unterminated YAML front matter"),
    ("---\n- a\n- b\n---\nbody\n", "front matter is a list, expected a mapping"),
    ("---\ntext: hi\n---\nbody\n", "has a 'text' key"),
    ("---\na: [1\n---\nbody\n", "invalid YAML front matter at line"),
])
def test_markdown_front_matter_errors(text, reason):
    from canon.sources.corpus.records import BadRecord
    with pytest.raises(BadRecord, match=reason):
        parse_markdown(text)


# --- gate details ---------------------------------------------------------------------------------
def _record(**fields) -> RawRecord:
    base = json.loads((HOSTILE / "good_notes.jsonl").read_text().splitlines()[0])
    base.update(fields)
    base = {k: v for k, v in base.items() if v is not ...}
    raw = json.dumps(base, sort_keys=True, default=str).encode()
    return RawRecord(base, "mem.jsonl#L1", raw, "mem.jsonl", 1)


def test_pydantic_errors_become_readable_reasons(knowledge):
    result = gate([_record(title=12, allowed_roles=[1, "analyst"], kind=...)], knowledge, today=TODAY, now=NOW)
    (entry,) = result.quarantine
    assert "missing required field 'kind'" in entry.reasons
    assert "field title: input should be a valid string, got 12" in entry.reasons
    assert any(r.startswith("field allowed_roles.0: input should be a valid string") for r in entry.reasons)


def test_bad_values_are_named_but_pii_values_withheld(knowledge):
    result = gate([_record(valid_from="call +420 601 123 456")], knowledge, today=TODAY, now=NOW)
    reasons = " | ".join(result.quarantine[0].reasons)
    assert "field valid_from: invalid date <value withheld: contains phone>" in reasons
    assert "601" not in reasons


@pytest.mark.parametrize("value, ok", [
    ("2026-02-29", False), ("2026-7-1", False), ("20260701", False), ("2026-07-01T00:00:00Z", False),
    (dt.date(2026, 7, 1), True), ("2026-07-01", True), (None, False),
])
def test_valid_from_parsing(value, ok, knowledge):
    result = gate([_record(valid_from=value)], knowledge, today=TODAY, now=NOW)
    assert bool(result.documents) is ok


@pytest.mark.parametrize("value, reason", [
    (-1, "field authority: -1 is out of range 0..100"),
    (101, "field authority: 101 is out of range 0..100"),
    ("high", "field authority: 'high' is not an integer"),
    (True, "field authority: true is not an integer"),
    (90.5, "field authority: 90.5 is not an integer"),
])
def test_authority_range(value, reason, knowledge):
    result = gate([_record(authority=value)], knowledge, today=TODAY, now=NOW)
    assert result.quarantine[0].reasons == [reason]


def test_authority_bounds_and_numeric_strings_pass(knowledge):
    for value in (0, 100, "75"):
        assert gate([_record(authority=value)], knowledge, today=TODAY).documents


def test_future_horizon_is_inclusive(knowledge):
    edge = TODAY + dt.timedelta(days=730)
    assert gate([_record(valid_from=edge.isoformat())], knowledge, today=TODAY).documents
    late = gate([_record(valid_from=(edge + dt.timedelta(days=1)).isoformat())], knowledge, today=TODAY)
    assert "more than 730 days after today" in late.quarantine[0].reasons[0]


def test_pii_in_title_and_metadata_is_found(knowledge):
    result = gate([_record(title="Ask bob@example.org", contact={"desk": "+44 20 7946 0958"})],
                  knowledge, today=TODAY, now=NOW)
    reason = result.quarantine[0].reasons[0]
    assert reason.startswith("PII found in a source with pii_allowed false: email, phone (")
    assert "email in title at offset 4" in reason and "phone in contact.desk at offset 0" in reason


def test_pii_allowed_source_passes(knowledge):
    relaxed = knowledge.model_copy(update={"source": knowledge.source.model_copy(update={"pii_allowed": True})})
    assert gate([_record(title="Ask bob@example.org")], relaxed, today=TODAY).documents


def test_content_hash_kept_computed_or_verified(knowledge):
    text = "A body long enough to pass the minimum body length check of the contract."
    kept = gate([_record(text=text, content_hash="sha256:given-by-source")], knowledge, today=TODAY)
    assert kept.documents[0].content_hash == "sha256:given-by-source"
    computed = gate([_record(text=text, content_hash=None)], knowledge, today=TODAY)
    assert computed.documents[0].content_hash == content_hash(text)
    good = gate([_record(text=text, content_hash=content_hash(text))], knowledge, today=TODAY)
    assert good.documents
    wrong = gate([_record(text=text, content_hash=content_hash(text + "!"))], knowledge, today=TODAY)
    assert wrong.quarantine[0].reasons == [
        "field content_hash: the stated sha256 does not match the text (changed source material?)"
    ]


def test_duplicates_first_by_path_wins(knowledge):
    first = _record(doc_id="d")
    later = RawRecord({**first.fields, "status": "draft"}, "z.jsonl#L1", b"other", "z.jsonl", 1)
    same = RawRecord(dict(first.fields), "y.md", b"same content, other bytes", "y.md")
    result = gate([first, same, later], knowledge, today=TODAY, now=NOW)
    assert [d.source_uri for d in result.documents] == ["mem.jsonl#L1"]
    assert result.collapsed == ["y.md"]
    assert [q.source_uri for q in result.quarantine] == ["z.jsonl#L1"]


def test_extra_keys_and_explicit_metadata_go_to_metadata(knowledge):
    result = gate([_record(metadata={"team": "fin"}, region="eu", source_uri="spoofed")], knowledge, today=TODAY)
    doc = result.documents[0]
    assert doc.metadata == {"team": "fin", "region": "eu", "source_uri": "spoofed"}
    assert doc.source_uri == "mem.jsonl#L1"


def test_record_from_another_source_system_is_refused(knowledge):
    rec = _record()
    rec = RawRecord(rec.fields, rec.source_uri, rec.raw, rec.path, rec.line, source_system="dbt")
    reasons = gate([rec], knowledge, today=TODAY).quarantine[0].reasons
    assert reasons == ["source_system 'dbt' is not this contract's source system 'corpus'"]


def test_read_failures_pass_through_the_gate(knowledge):
    failure = ReadFailure("x.md", "not valid UTF-8 (first bad byte at offset 3)", "x.md")
    (entry,) = gate([failure], knowledge, today=TODAY, now=NOW).quarantine
    assert entry.as_row() == {
        "source_uri": "x.md", "doc_id": None, "reasons": ["not valid UTF-8 (first bad byte at offset 3)"],
        "content_hash": None, "quarantined_at": NOW, "contract": "knowledge@1.0.0", "source_system": "corpus",
    }


def test_gate_refuses_a_contract_not_yet_accepted(knowledge):
    unaccepted = knowledge.model_copy(update={"version": "2.0.0"})
    with pytest.raises(CanonInputError, match="major version 2 not accepted"):
        gate([], unaccepted, today=TODAY)


# --- determinism -------------------------------------------------------------------------------------
def test_order_is_sorted_and_runs_are_identical(tmp_path, knowledge):
    corpus = tmp_path / "c"
    shutil.copytree(HOSTILE, corpus)
    read_a = read_corpus(corpus)
    uris = [i.source_uri for i in read_a]
    files = [u.split("#")[0] for u in uris]
    assert files == sorted(files)
    # touching files in another order changes nothing
    for p in sorted(corpus.rglob("*"), reverse=True):
        if p.is_file():
            p.write_bytes(p.read_bytes())
    read_b = read_corpus(corpus)
    assert read_a.items == read_b.items
    one, two = gate(read_a, knowledge, today=TODAY, now=NOW), gate(read_b, knowledge, today=TODAY, now=NOW)
    assert one.documents == two.documents and one.quarantine == two.quarantine
    assert [d.model_dump() for d in one.documents] == [d.model_dump() for d in two.documents]


def test_json_list_items_keep_list_order(tmp_path):
    base = json.loads((HOSTILE / "good_notes.jsonl").read_text().splitlines()[0])
    items = [dict(base, doc_id=f"d{i}") for i in range(12)]
    (tmp_path / "list.json").write_text(json.dumps(items))
    read = read_corpus(tmp_path)
    assert [r.fields["doc_id"] for r in read.records] == [f"d{i}" for i in range(12)]
    assert read.records[10].source_uri == "list.json#/10"


# --- contracts -----------------------------------------------------------------------------------------
def test_repository_contracts_load():
    contracts = load_contracts(CONTRACTS)
    assert set(contracts) == {"knowledge", "dbt_artifacts"}
    k, d = contracts["knowledge"], contracts["dbt_artifacts"]
    assert k.source.pii_allowed is False and k.quality.min_body_chars == 40
    assert k.quality.max_future_effective_days == 730 and k.freshness.max_lag_hours == 24
    assert k.processing.chunker == "entity-aligned-v1" and k.processing.embedding_model == "all-MiniLM-L6-v2"
    assert k.retention.delete_propagation_hours == 24 and k.accepted
    assert d.source.system == "dbt" and d.processing == k.processing and d.retention == k.retention
    assert k.schema.enums["status"] == ("approved", "draft", "superseded", "deprecated", "untrusted", "observed")


def _contract_dict() -> dict:
    import yaml
    return yaml.safe_load((CONTRACTS / "knowledge.yml").read_text())


def _write(tmp_path: Path, data) -> Path:
    import yaml
    p = tmp_path / "c.yml"
    p.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return p


@pytest.mark.parametrize("mutate, field, reason", [
    (lambda d: d["quality"].pop("min_body_chars"), "quality.min_body_chars", "Field required"),
    (lambda d: d["quality"].update(min_body_char=3), "quality.min_body_char", "Extra inputs are not permitted"),
    (lambda d: d.update(version="1.0"), "version", "is not a semantic version"),
    (lambda d: d["source"].update(pii_allowed="maybe"), "source.pii_allowed", "valid boolean"),
    (lambda d: d["schema"]["enums"].update(status=[]), "schema.enums", "has no values"),
    (lambda d: d.update(accepted_major=3), "accepted_major", "3 is ahead of the contract's major version (1.0.0)"),
])
def test_contract_errors_name_file_and_field(tmp_path, mutate, field, reason):
    data = _contract_dict()
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(CanonInputError) as info:
        load_contract(path)
    assert info.value.path == str(path) and info.value.field == field
    assert reason in info.value.reason
    assert str(path) in str(info.value) and f"[{field}]" in str(info.value)


def test_contract_bad_yaml_names_the_line(tmp_path):
    path = _write(tmp_path, "contract: x\nsource: [unclosed\nowner: y\n")
    with pytest.raises(CanonInputError) as info:
        load_contract(path)
    assert info.value.line is not None and "invalid YAML" in info.value.reason
    with pytest.raises(CanonInputError, match="a contract is a YAML mapping"):
        load_contract(_write(tmp_path, "- a\n- b\n"))
    with pytest.raises(CanonInputError, match="does not exist"):
        load_contract(tmp_path / "missing.yml")


def test_status_enum_defaults_when_not_listed():
    data = _contract_dict()
    data["schema"] = {"required": ["doc_id", "text"]}
    c = contract_from_dict(data)
    assert c.schema.enums["status"][0] == "approved" and c.schema.required == ("doc_id", "text")


def _bump(c: Contract, version: str, **changes) -> Contract:
    data = c.model_dump(by_alias=True)
    data["version"] = version
    for dotted, value in changes.items():
        target = data
        *parents, leaf = dotted.split("__")
        for p in parents:
            target = target[p]
        target[leaf] = value
    return contract_from_dict(data)


def test_check_upgrade_semantics(knowledge):
    k = knowledge
    # minor: thresholds, owner, consumers
    assert check_upgrade(k, _bump(k, "1.1.0", quality__min_body_chars=80, consumers=["x"])) == []
    # major changes in a minor release are refused, each named
    refused = check_upgrade(k, _bump(k, "1.1.0", processing__chunker="heading-aware-v4",
                                     schema__enums={"status": ["approved", "draft"]}))
    assert refused == [
        "major change without major version bump: schema.enums.status changed "
        "(removed superseded, deprecated, untrusted, observed)",
        "major change without major version bump: processing.chunker changed (entity-aligned-v1 -> heading-aware-v4)",
    ]
    for changes in ({"processing__embedding_model": "bge-small"},
                    {"schema__required": ["doc_id", "text"]},
                    {"schema__enums": {"status": list(k.schema.enums["status"]) + ["final"]}},
                    {"source__pii_allowed": True}):
        (reason,) = check_upgrade(k, _bump(k, "1.0.1", **changes))
        assert reason.startswith("major change without major version bump: ")
    # a new major is refused until consumers accept it
    v2 = _bump(k, "2.0.0", processing__embedding_model="bge-small")
    assert check_upgrade(k, v2) == ["major version 2 not accepted by consumers yet (accepted_major 1)"]
    assert check_upgrade(k, _bump(k, "2.0.0", processing__embedding_model="bge-small", accepted_major=2)) == []
    # versions must move forward when anything changes
    assert check_upgrade(k, _bump(k, "0.9.0", accepted_major=0)) == ["version goes backwards (1.0.0 -> 0.9.0)"]
    assert check_upgrade(k, _bump(k, "1.0.0", owner="someone@else")) == [
        "contract changed without a version bump (still 1.0.0)"
    ]
    assert check_upgrade(k, k) == []
    assert "different contract" in check_upgrade(k, _bump(k, "1.0.0", contract="other"))[0]


def test_symlink_loop_is_a_failure_not_a_crash(tmp_path):
    os.symlink("loop_b.md", tmp_path / "loop_a.md")
    os.symlink("loop_a.md", tmp_path / "loop_b.md")
    os.symlink(".", tmp_path / "self_dir")
    read = read_corpus(tmp_path)
    assert read.records == []
    assert [f.source_uri for f in read.failures] == ["loop_a.md", "loop_b.md"]
    assert all(f.reason.startswith("cannot") for f in read.failures)


def test_exclude_keeps_a_gold_file_out(tmp_path):
    shutil.copy(HOSTILE / "good_notes.jsonl", tmp_path / "corpus.jsonl")
    (tmp_path / "gold.json").write_text('[{"id": "G1", "question": "?"}]')
    assert len(read_corpus(tmp_path).records) == 3
    assert [r.path for r in read_corpus(tmp_path, exclude=["gold.json"]).records] == ["corpus.jsonl"] * 2
    assert [r.path for r in read_corpus(tmp_path, exclude=[tmp_path / "gold.json"]).records] == ["corpus.jsonl"] * 2

"""canon.registry.pii: positives of each kind, and the numbers analytical documentation
is full of (dates, timestamps, versions, amounts, hashes, ids) as negatives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canon.registry.pii import Finding, iban_valid, kinds, luhn_valid, redact, scan

HERE = Path(__file__).resolve().parent


def _hits(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.span[0]:f.span[1]]) for f in scan(text)]


@pytest.mark.parametrize("text, kind, value", [
    # e-mail
    ("mail jane.doe@example.com now", "email", "jane.doe@example.com"),
    ("<ops+alerts@data.company.co.uk>", "email", "ops+alerts@data.company.co.uk"),
    ("Contact: J_Smith99@sub-domain.example.org.", "email", "J_Smith99@sub-domain.example.org"),
    # phone: international
    ("call +420 601 123 456.", "phone", "+420 601 123 456"),
    ("+44 (0)20 7946 0958", "phone", "+44 (0)20 7946 0958"),
    ("+1-202-555-0143", "phone", "+1-202-555-0143"),
    ("+4915123456789", "phone", "+4915123456789"),
    ("0044 20 7946 0958", "phone", "0044 20 7946 0958"),
    ("phone: +49 30 1234567", "phone", "+49 30 1234567"),
    # phone: national formats
    ("(555) 123-4567", "phone", "(555) 123-4567"),
    ("ring 555-123-4567 today", "phone", "555-123-4567"),
    ("555.123.4567", "phone", "555.123.4567"),
    ("1-800-555-0199", "phone", "1-800-555-0199"),
    ("020 7946 0958", "phone", "020 7946 0958"),
    ("030 12345678", "phone", "030 12345678"),
    ("01 23 45 67 89", "phone", "01 23 45 67 89"),
    ("0171-1234567", "phone", "0171-1234567"),
    ("tel: 601123456", "phone", "601123456"),
    ("Mobile no. 601 123 456", "phone", "601 123 456"),
    # IBAN (mod-97 valid)
    ("IBAN DE89 3704 0044 0532 0130 00 please", "iban", "DE89 3704 0044 0532 0130 00"),
    ("DE89370400440532013000", "iban", "DE89370400440532013000"),
    ("GB82 WEST 1234 5698 7654 32", "iban", "GB82 WEST 1234 5698 7654 32"),
    ("pay to CZ65 0800 0000 1920 0014 5399.", "iban", "CZ65 0800 0000 1920 0014 5399"),
    ("BE68 5390 0754 7034 then", "iban", "BE68 5390 0754 7034"),
    ("fr1420041010050500013m02606", "iban", "fr1420041010050500013m02606"),
    # cards (Luhn valid, known issuer)
    ("4111 1111 1111 1111", "card_number", "4111 1111 1111 1111"),
    ("card 4111-1111-1111-1111.", "card_number", "4111-1111-1111-1111"),
    ("5555555555554444", "card_number", "5555555555554444"),
    ("Amex 3782 822463 10005", "card_number", "3782 822463 10005"),
    ("6011 1111 1111 1117 used in 2026", "card_number", "6011 1111 1111 1117"),
])
def test_positives(text, kind, value):
    assert _hits(text) == [(kind, value)]


NEGATIVES = [
    "2026-10-10", "2026-10-10T09:00:00Z", "2026-10-10T0900Z", "freshness.net_revenue.2026-10-10T0900Z",
    "2026-10-10T09:00:00+02:00", "observed 2026-10-10 09:00:00 UTC", "12:30:45", "01/02/2026", "10.10.2026",
    "2025-2026", "between 2026-01-01 and 2026-12-31 (365 days)", "Q4 2026", "2026-Q4", "FY2026",
    "7.5 percent", "1,234,567.89", "USD 1 234 567", "EUR 12 345 678,90", "-1 200 000", "+12.5%",
    "version 1.2.3", "v10.4.12", "dbt 1.11.16", "python 3.11.9", "lancedb==0.40.0", "192.168.100.200",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "sha256:0000000000000000000000000000000000000000000000000000000000000000"[:30],
    "uuid 7c1e0f4a-0b7d-4a55-9a61-2f3f0d2c9b10", "run 2026-09-29T02:14:07Z", "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "20261010090000", "epoch 1791536400", "1234567890123", "order_line_id 123456", "SLA 26 hours", "1000000 bytes",
    "pkg@1.2.3", "@asset decorator", "user@localhost", "model.analytics.fct_revenue.v2", "ISBN 978-3-16-148410-0",
    "DE00 0000 0000 0000 0000 00", "4111 1111 1111 1112", "0000 0000 0000 0000", "ids 100 200 300 400",
    "0.12345678", "x = 0.000123456789", "intel 80486 DX2", "Tel Aviv 2026", "price 1 299 000 CZK",
    "index v41 v42", "rows 12345678 of 98765432", "2026-10-10T09:00:00.123456Z", "P1Y2M10DT2H30M",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_negatives(text):
    assert scan(text) == []


def _dossier_texts() -> list[str]:
    p = HERE / "fixtures" / "dossier" / "corpus.jsonl"
    return [v for line in p.read_text().splitlines() if line.strip()
            for v in json.loads(line).values() if isinstance(v, str)]


def test_dossier_corpus_has_no_pii():
    texts = _dossier_texts()
    assert len(texts) > 100
    assert [t for t in texts if scan(t)] == []


def test_hostile_good_docs_have_no_pii():
    for p in (HERE / "hostile_corpus" / "good").glob("*.md"):
        assert scan(p.read_text()) == [], p.name


def test_several_findings_sorted_with_offsets():
    text = "a@b.io, +420 601 123 456, DE89 3704 0044 0532 0130 00 and 4111111111111111"
    found = scan(text)
    assert [f.kind for f in found] == ["email", "phone", "iban", "card_number"]
    assert [f.start for f in found] == sorted(f.start for f in found)
    assert kinds(found) == ["card_number", "email", "iban", "phone"]


def test_card_beats_phone_reading_of_the_same_digits():
    assert [f.kind for f in scan("4111 1111 1111 1111")] == ["card_number"]


def test_finding_never_carries_the_value():
    text = "write to secret.person@example.com"
    (f,) = scan(text)
    assert f == Finding("email", (9, 34))
    assert str(f) == "email at offset 9" and "secret" not in repr(f)


def test_redact():
    assert redact("mail a@b.io or call +1 202 555 0143.") == "mail [email] or call [phone]."
    assert redact("nothing here 2026-10-10") == "nothing here 2026-10-10"


def test_checksums():
    assert iban_valid("GB82WEST12345698765432") and not iban_valid("GB82WEST12345698765433")
    assert not iban_valid("XX82WEST12345698765432")      # unknown country
    assert not iban_valid("DE8937040044053201300")       # wrong length for DE
    assert luhn_valid("79927398713") and not luhn_valid("79927398710")


def test_empty_and_plain_text():
    assert scan("") == []
    assert scan("Net revenue equals gross order-line amount minus discounts.") == []

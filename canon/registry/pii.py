"""A small, deterministic PII detector for the contract gate.

No maintained offline PII library is installed (Presidio needs spaCy models),
so Canon carries its own narrow detector for the four kinds a knowledge source
must never smuggle into a shared index: e-mail addresses, phone numbers, IBANs
and payment-card numbers. Every candidate is checked structurally (IBAN mod-97,
card Luhn + issuer prefix, phone digit counts) so that the numbers analytical
documentation is full of -- ISO dates, timestamps, versions, amounts, hashes,
ids such as `2026-10-10T0900Z` -- do not match.

A `Finding` carries the kind and the span, never the matched text: whatever is
logged or stored about a finding cannot leak the value it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EMAIL = "email"
PHONE = "phone"
IBAN = "iban"
CARD = "card_number"

# Higher wins when two findings overlap (a card number also looks like a phone).
_PRIORITY = {IBAN: 3, CARD: 3, EMAIL: 2, PHONE: 1}


@dataclass(frozen=True, order=True)
class Finding:
    """One PII hit: its kind and the [start, end) character span. No value."""

    kind: str
    span: tuple[int, int]

    @property
    def start(self) -> int:
        return self.span[0]

    def __str__(self) -> str:  # safe to log: kind and offset only
        return f"{self.kind} at offset {self.span[0]}"


# --- e-mail -----------------------------------------------------------------
_EMAIL_RE = re.compile(
    r"(?<![\w.%+-])"
    r"[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*"          # local part, no leading/trailing dot
    r"@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,63}"                                    # a real TLD: letters only (not `pkg@1.2.3`)
    r"(?![\w-]|\.[A-Za-z0-9])"
)

# --- IBAN -------------------------------------------------------------------
# Lengths from the SWIFT IBAN registry; a country not listed is not an IBAN.
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
# Compact (DE89370400440532013000) or printed in groups of four separated by spaces.
_IBAN_RE = re.compile(
    r"(?<![A-Za-z0-9])"
    r"([A-Za-z]{2}[0-9]{2}(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,3})?))"
    r"(?![A-Za-z0-9])"
)


def iban_valid(candidate: str) -> bool:
    """Country length + ISO 13616 mod-97 check (spaces ignored, case-insensitive)."""
    s = candidate.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(s[:2]) != len(s) or not s[2:4].isdigit():
        return False
    rearranged = s[4:] + s[:4]
    digits = "".join(str(int(c, 36)) for c in rearranged)
    return int(digits) % 97 == 1


# --- payment cards ------------------------------------------------------------
# 13-19 digits, compact or in groups separated by one kind of separator.
_CARD_RE = re.compile(r"(?<![\w.,+-])(\d(?:[ -]?\d){12,18})(?![\w-]|[.,]\d)")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _issuer_known(d: str) -> bool:
    """Issuer identification prefixes of the networks in use (Visa, Mastercard,
    Amex, Discover, JCB, Diners, UnionPay, Maestro). Timestamps such as
    20261010090000 start with 20 and are no card."""
    two, four = int(d[:2]), int(d[:4])
    return (
        d[0] == "4"
        or 51 <= two <= 55 or 2221 <= four <= 2720
        or two in (34, 37, 36, 38, 62, 65) or 300 <= int(d[:3]) <= 305
        or 3528 <= four <= 3589
        or d.startswith("6011") or 644 <= int(d[:3]) <= 649
        or two in (50, 56, 57, 58, 63, 67)
    )


def _card_candidate_ok(raw: str) -> bool:
    seps = set(re.sub(r"\d", "", raw))
    if len(seps) > 1:  # mixed separators: not a printed card number
        return False
    digits = re.sub(r"\D", "", raw)
    if not 13 <= len(digits) <= 19:
        return False
    if seps:
        groups = re.split(r"[ -]", raw)
        # printed cards use groups of 4 (or Amex 4-6-5); a last short group is fine
        if any(len(g) < 3 for g in groups[:-1]) or len(groups[0]) != 4:
            return False
    return _issuer_known(digits) and luhn_valid(digits)


# --- phone numbers --------------------------------------------------------------
_SEP = r"[ .\-]"
# International: +CC or 00CC, then groups (an optional "(0)" trunk and a
# parenthesised area code allowed). Digits are counted afterwards (E.164: 8-15).
_PHONE_INTL_RE = re.compile(
    r"(?<![\w+])"
    r"((?:\+|00)[1-9]\d{0,2}"
    r"(?:" + _SEP + r"?\(0\))?"
    r"(?:" + _SEP + r"?\(?\d{1,5}\)?){1,6})"
    r"(?![\w]|[.,:\-]?\d)"
)
# North American: (555) 123-4567, 555-123-4567, 555.123.4567, 1-555-123-4567.
_PHONE_NANP_RE = re.compile(
    r"(?<![\w.+\-/:])"
    r"((?:1[ .\-])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[ .\-])\d{3}[ .\-]\d{4})"
    r"(?![\w]|[.,:\-/]\d)"
)
# National numbers with a trunk 0, in groups: 020 7946 0958, 030 12345678,
# 01 23 45 67 89, 0171-1234567. At least one separator: a bare 0-leading run
# of digits is more often an id than a phone number.
_PHONE_TRUNK_RE = re.compile(
    r"(?<![\w.+\-/:])"
    r"(\(?0\d{1,4}\)?(?:[ \-/]\d{2,8}){1,4})"
    r"(?![\w]|[.,:\-/]\d)"
)
# Any digit sequence announced as a phone number: "tel: 123 456 789".
_PHONE_LABELLED_RE = re.compile(
    r"\b(?:phone|tel|telephone|mobile|mob|cell|fax|whatsapp)\b\.?(?:\s*(?:no\.?|number|#))?\s*[:=]?\s*"
    r"(\+?\(?\d[\d ().\-/]{5,22}\d)",
    re.IGNORECASE,
)

_DATE_LIKE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$")


def _digits(s: str) -> int:
    return sum(c.isdigit() for c in s)


# Triggers: a cheap necessary condition for each pattern above (every full match contains
# a trigger match). The full patterns open with a lookbehind, which defeats the regex
# engine's fast skip to a first character, so each costs a full scan of the text;
# a trigger starts with a plain character class and skips ahead at C speed. A text
# without a trigger cannot match, so the full pattern is not run on it.
_CARD_TRIGGER = re.compile(r"\d(?:[ -]?\d){12}")
_IBAN_TRIGGER = re.compile(r"[A-Za-z]{2}[0-9]{2}(?:[A-Za-z0-9]{11}| [A-Za-z0-9]{4})")
_PHONE_INTL_TRIGGER = re.compile(r"(?:\+|00)[1-9]")
_PHONE_NANP_TRIGGER = re.compile(r"\d{3}[ .\-]\d{4}")
_PHONE_TRUNK_TRIGGER = re.compile(r"0\d{1,4}\)?[ \-/]\d{2}")
_ANY_DIGIT = re.compile(r"\d")
_PHONE_LABEL_WORDS = ("phone", "tel", "mobile", "mob", "cell", "fax", "whatsapp")  # "tel" covers telephone


def _phone_findings(text: str) -> list[Finding]:
    out: list[Finding] = []
    if _PHONE_INTL_TRIGGER.search(text):
        for m in _PHONE_INTL_RE.finditer(text):
            if 8 <= _digits(m.group(1)) <= 15:
                out.append(Finding(PHONE, m.span(1)))
    if _PHONE_NANP_TRIGGER.search(text):
        for m in _PHONE_NANP_RE.finditer(text):
            out.append(Finding(PHONE, m.span(1)))
    if _PHONE_TRUNK_TRIGGER.search(text):
        for m in _PHONE_TRUNK_RE.finditer(text):
            s = m.group(1)
            if 9 <= _digits(s) <= 12 and not _DATE_LIKE.match(s):
                out.append(Finding(PHONE, m.span(1)))
    folded = text.casefold()  # what IGNORECASE matches, e.g. the long s in "whatſapp"
    if any(word in folded for word in _PHONE_LABEL_WORDS):
        for m in _PHONE_LABELLED_RE.finditer(text):
            s = m.group(1)
            if 7 <= _digits(s) <= 15 and not _DATE_LIKE.match(s.strip()):
                out.append(Finding(PHONE, m.span(1)))
    return out


def _validated(text: str, pattern: re.Pattern[str], kind: str, valid) -> list[Finding]:
    """Regex candidates that pass `valid`. A grouped candidate that fails is
    retried without its trailing groups: the regex is greedy and may have
    swallowed the next word or number ("... 7034 then", "... 1111 2026")."""
    out = []
    for m in pattern.finditer(text):
        start, raw = m.start(1), m.group(1)
        cuts = [i for i, c in enumerate(raw) if c in " -"]
        for end in [len(raw)] + cuts[::-1]:
            if valid(raw[:end]):
                out.append(Finding(kind, (start, start + end)))
                break
    return out


def scan(text: str) -> list[Finding]:
    """Every PII finding in `text`, sorted by offset, overlaps resolved (an IBAN
    or card beats a phone reading of the same digits)."""
    if not text:
        return []
    found: list[Finding] = [Finding(EMAIL, m.span()) for m in _EMAIL_RE.finditer(text)] if "@" in text else []
    if not _ANY_DIGIT.search(text):  # every other kind needs digits
        return _resolve_overlaps(found)
    if _IBAN_TRIGGER.search(text):
        found += _validated(text, _IBAN_RE, IBAN, iban_valid)
    if _CARD_TRIGGER.search(text):
        found += _validated(text, _CARD_RE, CARD, _card_candidate_ok)
    found += _phone_findings(text)
    return _resolve_overlaps(found)


def _resolve_overlaps(found: list[Finding]) -> list[Finding]:
    """Keep the strongest, then longest, finding of any overlapping group.

    The characters already taken are marked in a bytearray, so each finding costs
    the length of its span, not the number kept so far: one pattern's matches never
    overlap each other, so the work stays linear in the text even when a large
    adversarial text yields tens of thousands of findings."""
    found.sort(key=lambda f: (-_PRIORITY[f.kind], -(f.span[1] - f.span[0]), f.span))
    taken = bytearray(max((f.span[1] for f in found), default=0))
    kept: list[Finding] = []
    for f in found:
        start, end = f.span
        if taken.find(1, start, end) == -1:
            taken[start:end] = b"\x01" * (end - start)
            kept.append(f)
    return sorted(kept, key=lambda f: f.span)


def kinds(findings: list[Finding]) -> list[str]:
    """The distinct kinds, in a stable order."""
    return sorted({f.kind for f in findings})


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """`text` with every finding replaced by `[kind]`."""
    findings = scan(text) if findings is None else findings
    out, pos = [], 0
    for f in sorted(findings, key=lambda f: f.span):
        out.append(text[pos:f.span[0]])
        out.append(f"[{f.kind}]")
        pos = f.span[1]
    out.append(text[pos:])
    return "".join(out)

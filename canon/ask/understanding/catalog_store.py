"""The object catalog (canon/ask/understanding/match.py, `object_catalog`)
kept in the registry database, so that a new `canon ask` process finds which
objects its question can name without loading every document.

`refresh_catalog` is called by the writers after the documents change (the
registry asset, the evaluation, the benchmark's build): it runs the same
`object_catalog` over every live document and stores its names, name cores,
distinctive tokens and the bigram postings of the cores, with a fingerprint of
the documents table. `candidate_objects` is `MatchIndex.candidates` over those
tables: each way an entry can reach the match threshold is looked up in SQL
(whole names, the bigram bound of `fuzzy_filter` for `partial_ratio`, the
words of multi-word names, distinctive tokens), so the objects it returns are
a superset of those `match_objects` can return, and scoring them with
`match_objects` gives the same matches as scoring the whole catalog
(tests/test_scoped_ask.py compares the two on every gold set).

A catalog whose fingerprint differs from the documents table's (a writer that
did not refresh it: a forget, an older build) is not used: `catalog_is_current`
is false and the caller loads the whole registry, as before.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Iterable, NamedTuple

import duckdb
import pyarrow as pa
from rapidfuzz import fuzz, process

from canon.ask.understanding import match as match_module
from canon.ask.understanding.fuzzy_filter import required_shared_bigrams
from canon.ask.understanding.match import (
    _DOMAIN_BONUS,
    _MARGIN,
    STATING_KINDS,
    _name_core,
    normalize,
    object_catalog,
    question_tokens,
)
from canon.core import db
from canon.core.schema import ensure_ask_catalog
from canon.registry import store as registry

FINGERPRINT_KEY = "ask_catalog_documents_fingerprint"
# MatchIndex's fuzzy word cutoff (fuzz.ratio >= 88, less the rounding margin).
_WORD_CUTOFF = 88 - _MARGIN


class _Head(NamedTuple):
    """What `object_catalog` reads of a document: its text only where it is an approved
    definition whose body may state other names for its object (`match.states_names`)."""
    object_id: str
    kind: str
    title: str
    metadata: dict
    status: str = ""
    text: str = ""


# The code that derives an object's names from its documents: a Canon upgrade that names objects
# otherwise ("TAT" of "Aircraft turnaround time (TAT)") makes a stored catalog stale as a changed
# document does.
_NAMING_CODE = hashlib.sha256(Path(match_module.__file__).read_bytes()).hexdigest()[:16]


def documents_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """Changes when a document is added, removed, deleted or changes any field the
    catalog or visibility reads (its text through content_hash), and when the naming code
    changes (`_NAMING_CODE`). Hashes the short columns only: the text column is most of the
    table."""
    row = con.execute(
        "SELECT count(*), coalesce(sum(h::HUGEINT), 0), coalesce(bit_xor(h), 0) FROM ("
        "SELECT hash(doc_id, object_id, kind, title, status, authority, version, valid_from, valid_to, "
        "allowed_roles, supersedes, content_hash, metadata_json, deleted_at) AS h FROM documents)").fetchall()[0]
    return ":".join([*(str(v) for v in row), _NAMING_CODE])


def catalog_is_current(con: duckdb.DuckDBPyConnection) -> bool:
    if not db.has_table(con, "ask_catalog_names"):
        return False
    return registry.get_setting(con, FINGERPRINT_KEY) == documents_fingerprint(con)


def _bigram_pairs(s: str) -> list[tuple[str, int]]:
    """(bigram, k) for k = 1..count: the postings `fuzzy_filter.BigramIndex` keeps."""
    counts = Counter(s[i:i + 2] for i in range(len(s) - 1))
    return [(bg, k) for bg, n in counts.items() for k in range(1, n + 1)]


def refresh_catalog(con: duckdb.DuckDBPyConnection) -> int:
    """Rebuild the stored catalog from the live documents; the number of objects."""
    ensure_ask_catalog(con)
    heads = [_Head(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5] or "") for r in con.execute(
        "SELECT object_id, kind, title, metadata_json, status, "
        "CASE WHEN status = 'approved' AND kind IN (SELECT unnest(?)) THEN text END "
        "FROM documents WHERE deleted_at IS NULL ORDER BY doc_id", [list(STATING_KINDS)]).fetchall()]
    catalog = object_catalog(heads)
    names: dict[str, list] = {"object_id": [], "name": [], "exact": [], "core": [], "core_words": [], "n_core_words": [],
                              "n_words": []}
    cores: dict[str, int] = {}
    for entry in catalog.values():
        # Ids, derived initialisms and stated names match only written out whole: no core, no words to fuzz.
        rows = ([(n, False, False) for n in sorted(entry.names)] + [(n, True, True) for n in sorted(entry.exact)]
                + [(n, False, True) for n in sorted((set(entry.initials) | entry.stated) - entry.names)])
        for name, exact, whole_only in rows:
            words, core = _name_core(name) if not whole_only else ((), "")
            names["object_id"].append(entry.object_id)
            names["name"].append(name)
            names["exact"].append(exact)
            names["core"].append(core if len(core) >= 5 else None)
            names["core_words"].append(list(dict.fromkeys(words)))
            names["n_core_words"].append(len(words))   # MatchIndex counts repeated words
            names["n_words"].append(len(name.split()))
            if len(core) >= 5:
                cores.setdefault(core, len(cores))
    bigrams: dict[str, list] = {"core_id": [], "bigram": [], "k": []}
    for core, cid in cores.items():
        for bg, k in _bigram_pairs(core):
            bigrams["core_id"].append(cid)
            bigrams["bigram"].append(bg)
            bigrams["k"].append(k)
    words = sorted({w for ws, n in zip(names["core_words"], names["n_core_words"]) if n >= 2 for w in ws})
    tokens = {"object_id": [], "token": []}
    for oid, toks in sorted(catalog.distinctive.items()):
        for t in sorted(toks):
            tokens["object_id"].append(oid)
            tokens["token"].append(t)
    tables = {
        "ask_catalog_names": pa.table(names),
        "ask_catalog_cores": pa.table({"core_id": list(cores.values()), "core": list(cores),
                                       "len": [len(c) for c in cores]}),
        "ask_catalog_bigrams": pa.table(bigrams, schema=pa.schema([("core_id", pa.int64()), ("bigram", pa.string()),
                                                                  ("k", pa.int64())])),
        # the words of multi-word names, and each without its trailing s's (MatchIndex's plurals)
        "ask_catalog_words": pa.table({"word": words, "stem": [w.rstrip("s") for w in words]},
                                      schema=pa.schema([("word", pa.string()), ("stem", pa.string())])),
        "ask_catalog_tokens": pa.table(tokens, schema=pa.schema([("object_id", pa.string()),
                                                                ("token", pa.string())])),
    }
    con.execute("BEGIN")
    try:
        for name, table in tables.items():
            con.register("_catalog_rows", table)
            try:
                con.execute(f"DELETE FROM {name}")
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _catalog_rows")
            finally:
                con.unregister("_catalog_rows")
        registry.set_setting(con, FINGERPRINT_KEY, documents_fingerprint(con))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(catalog)


def _fuzzy_hits(words: Iterable[str], vocabulary: list[str]) -> set[str]:
    """Vocabulary strings whose fuzz.ratio with some of `words` reaches the word cutoff
    (what `BigramIndex.ratio_any` returns)."""
    out: set[str] = set()
    if not vocabulary:
        return out
    for w in words:
        if w:
            out.update(s for s, _, _ in process.extract(w, vocabulary, scorer=fuzz.ratio,
                                                        score_cutoff=_WORD_CUTOFF, limit=None))
    return out


def _strings(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[str]:
    return [r[0] for r in con.execute(sql, params or []).fetchall()]


def candidate_objects(con: duckdb.DuckDBPyConnection, question: str, threshold: float = 85.0) -> set[str] | None:
    """The object ids `MatchIndex(...).candidates(question, threshold)` would return
    (possibly a few more); None when every object is a candidate (a question of one
    character, for which the bigram bound admits everything)."""
    q = normalize(question)
    q_words = q.split()
    q_tokens = sorted(question_tokens(q))
    cutoff = threshold - _DOMAIN_BONUS - _MARGIN
    if q and required_shared_bigrams(min(5, len(q)), cutoff) <= 0:
        return None
    out: set[str] = set()
    # 1. names and object ids written out whole
    longest = con.execute("SELECT coalesce(max(n_words), 0) FROM ask_catalog_names").fetchall()[0][0]
    n = len(q_words)
    grams = sorted({" ".join(q_words[i:j]) for i in range(n) for j in range(i + 1, min(n, i + longest) + 1)})
    if grams:
        out.update(_strings(con, "SELECT DISTINCT object_id FROM ask_catalog_names WHERE name IN (SELECT unnest(?))",
                            [grams]))
    # 2. partial_ratio(core, question) >= cutoff: cores sharing enough bigram occurrences, then scored
    pairs = _bigram_pairs(q)
    if pairs:
        longest_core = con.execute("SELECT coalesce(max(len), 0) FROM ask_catalog_cores").fetchall()[0][0]
        # need[n]: the fewest shared bigram occurrences at needle length n (fuzzy_filter's bound)
        need = [required_shared_bigrams(m, cutoff) for m in range(min(longest_core, len(q)) + 1)]
        need = [v if v != float("inf") else 1 << 30 for v in need]
        rows = con.execute(
            "SELECT c.core FROM ask_catalog_bigrams b "
            "JOIN (SELECT unnest(?) AS bigram, unnest(?) AS k) q USING (bigram, k) "
            "JOIN ask_catalog_cores c USING (core_id) GROUP BY c.core, c.len "
            "HAVING count(*) >= list_extract(?, least(c.len, ?) + 1)",
            [[p[0] for p in pairs], [p[1] for p in pairs], need, len(q)]).fetchall()
        passing = [core for (core,) in rows if fuzz.partial_ratio(q, core, score_cutoff=cutoff)]
        if passing:
            out.update(_strings(con, "SELECT DISTINCT object_id FROM ask_catalog_names WHERE core IN "
                                     "(SELECT unnest(?))", [passing]))
    # 3. every word of a multi-word name matched by a question word (equal, plural, misspelled)
    matched = set(_strings(con, "SELECT word FROM ask_catalog_words WHERE word IN (SELECT unnest(?)) "
                                "OR stem IN (SELECT unnest(?))", [q_tokens, sorted({w.rstrip("s") for w in q_tokens})]))
    long_q = [w for w in q_tokens if len(w) >= 5]
    if long_q:
        vocab = _strings(con, "SELECT word FROM ask_catalog_words WHERE length(word) >= 5 ORDER BY word")
        matched |= _fuzzy_hits(long_q, vocab)
    if matched:
        out.update(_strings(con, "SELECT DISTINCT object_id FROM ask_catalog_names WHERE n_core_words >= 2 "
                                 "AND list_has_all(?, core_words)", [sorted(matched)]))
    # 4. distinctive tokens, written or misspelled
    out.update(_strings(con, "SELECT DISTINCT object_id FROM ask_catalog_tokens WHERE token IN (SELECT unnest(?))",
                        [q_tokens]))
    long_tokens = _strings(con, "SELECT DISTINCT token FROM ask_catalog_tokens WHERE length(token) >= 5 ORDER BY 1")
    hits = _fuzzy_hits(q_tokens, long_tokens)
    if hits:
        out.update(_strings(con, "SELECT DISTINCT object_id FROM ask_catalog_tokens WHERE token IN "
                                 "(SELECT unnest(?))", [sorted(hits)]))
    return out


def known_name_words(con: duckdb.DuckDBPyConnection, words: Iterable[str]) -> set[str]:
    """Which of `words` are core words of some name in the stored catalog (what
    `compounds.catalog_words` holds for the catalog in memory)."""
    ws = sorted(set(words))
    if not ws:
        return set()
    return set(_strings(con, "SELECT DISTINCT w FROM (SELECT unnest(core_words) AS w FROM ask_catalog_names) "
                             "WHERE w IN (SELECT unnest(?))", [ws]))


def names_with_prefixes(con: duckdb.DuckDBPyConnection, prefixes: Iterable[str]) -> set[tuple[str, ...]]:
    """The core-word tuples of the stored names holding a word that starts with one of
    `prefixes` (what `clippings.catalog_names_with` returns for the catalog in memory)."""
    ps = sorted(set(prefixes))
    if not ps:
        return set()
    rows = con.execute("SELECT DISTINCT n.core_words FROM ask_catalog_names n, (SELECT unnest(?) AS p) q "
                       "WHERE len(list_filter(n.core_words, lambda w: starts_with(w, q.p))) > 0", [ps]).fetchall()
    return {tuple(ws) for (ws,) in rows}


def distinctive_of(con: duckdb.DuckDBPyConnection, object_ids: Iterable[str]) -> dict[str, set[str]]:
    """The catalog-wide distinctive tokens of these objects (a token names exactly one
    object of the whole catalog, not of the documents a question loaded)."""
    out: dict[str, set[str]] = {}
    ids = sorted(set(object_ids))
    if not ids:
        return out
    for oid, token in con.execute("SELECT object_id, token FROM ask_catalog_tokens WHERE object_id IN "
                                  "(SELECT unnest(?))", [ids]).fetchall():
        out.setdefault(oid, set()).add(token)
    return out

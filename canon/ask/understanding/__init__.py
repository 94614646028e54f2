"""Understanding a question before anything is retrieved, from governance
metadata (and, of document text, only the names an approved definition states
for its own object, never deciding a denial):

- `parse`: the question → `ParsedQuestion`: reporting date or month, intent
  words (read outside attributed claims), the governed objects it names, and
  the named sources.
- `named_sources`: clauses attributing a claim to a document ("the old
  carrier cutoff runbook tells me…", "like the v3 proposal does") → the
  source's kinds, statuses and title words, and the claim's span; kept as
  conflict evidence by canon/ask/pipeline.py.
- `coverage`: whether a weak match's names cover the question's object phrase
  (else `no_matching_object`).
- `match`: matching question text to governed objects: the object catalog
  (names, initialisms derived from them, stated names), name cores and
  scoring, and the `MatchIndex` that prunes candidates without changing the
  result.
- `fuzzy_filter`: the lossless bigram prefilter `match` runs before rapidfuzz.
"""

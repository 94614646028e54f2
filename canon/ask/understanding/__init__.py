"""Understanding a question before anything is retrieved, from governance
metadata only (never document text):

- `parse`: the question → `ParsedQuestion`: reporting date or month, intent
  words, the governed objects it names, and named-source extraction
  (`extract_named_sources`: "the old wiki says…" → the source kind and status
  the user cites, kept as conflict evidence by canon/ask/pipeline.py).
- `match`: matching question text to governed objects: the object catalog,
  name cores and scoring, and the `MatchIndex` that prunes candidates without
  changing the result.
- `fuzzy_filter`: the lossless bigram prefilter `match` runs before rapidfuzz.
"""

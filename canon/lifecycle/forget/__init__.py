"""Deletion that provably propagates (docs/design.md, "Deletion that provably
propagates").

`forget(doc_id)` walks lineage forward from the source id and removes the
document from every store Canon writes, then *verifies* by querying each
store for the chunk ids and for distinctive phrases of the deleted text:

  store                       what happens                               what stays (ids only)
  --------------------------  -----------------------------------------  ---------------------------
  documents                   text, title, metadata blanked; deleted_at   doc_id, object_id, hashes
  document_versions           kept (no text: ids + content hashes)        everything (impact analysis)
  definitions                 rows deleted
  quarantine                  rows deleted
  chunk_lineage               deleted_at set                              the row (ids and spans)
  embedding_lineage           rows deleted (no embedding exists anymore)
  LanceDB, every table        rows rewritten into fresh files without the
                              document, then every older version pruned
                              (`canon.index.publish.cleanup`), so time travel and
                              the data files on disk hold none of it
  $CANON_HOME/eval            cited text replaced by "[forgotten]"        doc ids, chunk ids, hashes
  $CANON_HOME/cache           files that mention the document removed
  canon.duckdb (the file)     rewritten (COPY FROM DATABASE), because
                              DuckDB leaves deleted strings in free blocks
  answer_log                  nothing to do: ids and hashes only, by      cited ids
                              design (verification asserts it)

A row in `deletions` is both the record of the request and the *tombstone*:
`canon.registry.build` skips a forgotten doc_id that is still in the corpus
and reports it as quarantined ("forgotten on <date>"), so it does not come
back with the next build.

State machine (one row per doc_id): requested -> stores_cleared -> verified.
Clearing is idempotent, so an interrupted deletion simply runs again and
finishes; a verification failure leaves the row unverified with the findings
and raises `DeletionNotVerified` (an error, never a warning). The phrases the
verification looks for are kept only while the deletion is in flight, in a
0600 file under $CANON_HOME/lifecycle/inflight/, removed once verified; the
row keeps their sha256 for audit.

Completion time (requested_at -> completed_at) is compared with the source
contract's `retention.delete_propagation_hours` and emitted with the
OpenLineage run of the job (`canon_forget`).

Modules: probes.py (what verification searches for), clear.py (clearing each
store), verify.py (the deletion verifier), run.py (the state machine and its
record); canon/lifecycle/compaction.py rewrites the DuckDB file.
"""

from canon.lifecycle.forget.probes import Probes, distinctive_phrases, distinctive_tokens
from canon.lifecycle.forget.run import (
    STATES,
    DeletionNotVerified,
    ForgetResult,
    deletions,
    ensure_schema,
    forget,
)
from canon.lifecycle.forget.verify import Finding, verify

__all__ = [
    "STATES", "DeletionNotVerified", "Finding", "ForgetResult", "Probes", "deletions", "distinctive_phrases",
    "distinctive_tokens", "ensure_schema", "forget", "verify",
]

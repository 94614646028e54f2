"""Embedding-model (and chunker) migration under a coverage gate (docs/design.md,
"Migrating an embedding model under contract").

Vectors from different models cannot share a table, so a migration builds a
*candidate* index beside the live one and only then decides:

1. build: the registry's live documents (projected through the live policy)
   are published with the new configuration into their own LanceDB table,
   `chunks_<h(model_id, chunker, max_chars, overlap)>`, by the production
   `canon.index.publish.publish`. Its revision bookkeeping goes to a *staging* DuckDB
   ($CANON_HOME/migrations/<id>.duckdb), so nothing in the main database —
   in particular `served_revision()` (the highest-seq ready revision) —
   moves while the candidate is built, checked and evaluated;
2. coverage: every live chunk of the served revision must have an embedding
   in the candidate — the same chunk id, or, after a chunker change, chunks of
   the same document version whose spans cover its text. Counts and missing
   ids are recorded; a candidate holding a forgotten document fails too;
3. evaluation: the release gold sets are answered by both configurations
   (each on a fresh index, the production pipeline) and shown side by side;
4. cut-over, only when coverage is complete and the candidate passes the
   release gate: one DuckDB transaction adds a ready revision whose
   `lance_table` is the candidate table (highest seq, so it is served and
   pinned by every query), its chunk/embedding lineage, and the *active index
   configuration* (settings `index.active_config`) that later publishes and
   query embedding follow. The previous table is kept for a rollback window;
5. rollback: a new ready revision pointing back at the previous table (its
   latest version, checked against the previous revision's embedding
   lineage), and the previous configuration becomes active again.

`answer_log.index_revision` names the revision that served each answer, so a
quality change after a cut-over is attributable to it.

Modules: coverage.py (step 2), gate.py (step 3), cutover.py (steps 4 and 5),
run.py (the whole migration and its record).
"""

from canon.lifecycle.migrate.coverage import Coverage, coverage
from canon.lifecycle.migrate.cutover import (
    DEFAULT_ROLLBACK_WINDOW,
    RollbackResult,
    ensure_schema,
    expire_rollbacks,
    rollback,
)
from canon.lifecycle.migrate.gate import default_release_sets, evaluate_pair, side_by_side
from canon.lifecycle.migrate.run import MigrationResult, migrate

__all__ = [
    "DEFAULT_ROLLBACK_WINDOW", "Coverage", "MigrationResult", "RollbackResult", "coverage", "default_release_sets",
    "ensure_schema", "evaluate_pair", "expire_rollbacks", "migrate", "rollback", "side_by_side",
]

"""Every table Canon creates in its DuckDB database, in one place.

Each group of tables has one `ensure_*` function, called by the module that
writes it (the registry store, the index revisions, the answer log, ...), so
a reader finds a table's columns here and its writer by searching for the
function. Every statement is idempotent (`IF NOT EXISTS` / `OR REPLACE`).

The dbt metadata tables (`dbt_nodes`, `lineage_edges`, ...) are not here:
they are replaced whole from Arrow tables whose schemas live beside their
builders in canon/sources/dbt/, and only their revision log is declared here.
"""

from __future__ import annotations

import duckdb

REGISTRY_DDL = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id VARCHAR PRIMARY KEY,
    doc_version VARCHAR NOT NULL,
    object_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    authority INTEGER NOT NULL,
    version VARCHAR NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE,
    allowed_roles VARCHAR[] NOT NULL,
    supersedes VARCHAR,
    content_hash VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    source_uri VARCHAR NOT NULL,
    source_system VARCHAR NOT NULL,
    source_revision VARCHAR NOT NULL,
    contract_version VARCHAR NOT NULL,
    metadata_json VARCHAR NOT NULL,
    first_seen TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    deleted_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS document_versions (
    doc_id VARCHAR NOT NULL,
    doc_version VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    source_uri VARCHAR NOT NULL,
    contract_version VARCHAR NOT NULL,
    first_seen TIMESTAMP NOT NULL,
    run_id VARCHAR NOT NULL,
    PRIMARY KEY (doc_id, doc_version)
);
CREATE TABLE IF NOT EXISTS quarantine (
    source_uri VARCHAR NOT NULL,
    doc_id VARCHAR,
    content_hash VARCHAR NOT NULL,
    reasons VARCHAR[] NOT NULL,
    source_system VARCHAR NOT NULL,
    first_quarantined_at TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL,     -- the last run that opened or changed the entry
    released_at TIMESTAMP,
    run_id VARCHAR NOT NULL,
    PRIMARY KEY (source_uri, content_hash)
);
CREATE TABLE IF NOT EXISTS settings (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS definitions (
    object_id VARCHAR NOT NULL,
    evidence_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    authority INTEGER NOT NULL,
    valid_from DATE NOT NULL,
    valid_to DATE,
    recorded_at TIMESTAMP NOT NULL,
    supersedes VARCHAR,
    source_system VARCHAR NOT NULL,
    source_revision VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    allowed_roles VARCHAR[] NOT NULL,
    body VARCHAR NOT NULL,
    metadata_json VARCHAR NOT NULL
);
"""


# Half-open business time: valid_from inclusive, valid_to exclusive, NULL = open.
DEFINITIONS_AS_OF_MACRO = """
CREATE OR REPLACE MACRO definitions_as_of(d) AS TABLE
    SELECT * FROM definitions
    WHERE valid_from <= CAST(d AS DATE) AND (valid_to IS NULL OR CAST(d AS DATE) < valid_to)
"""


CORPUS_FILES_DDL = """
CREATE TABLE IF NOT EXISTS corpus_files (
    source_system VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    ctime_ns BIGINT NOT NULL,
    inode BIGINT NOT NULL,
    gate_key VARCHAR NOT NULL,
    gated_on DATE NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    source_uris VARCHAR[] NOT NULL,
    doc_ids VARCHAR[] NOT NULL,
    source_revisions VARCHAR[] NOT NULL,
    content_hashes VARCHAR[] NOT NULL,
    identities VARCHAR[] NOT NULL,
    PRIMARY KEY (source_system, path)
);
"""


INDEX_DDL = (
    """
    CREATE TABLE IF NOT EXISTS index_revisions (
        revision_id             VARCHAR PRIMARY KEY,
        seq                     BIGINT NOT NULL,         -- publish order; served = max(seq) among ready
        lance_table             VARCHAR NOT NULL,
        lance_version           BIGINT,                  -- null until the LanceDB write finished
        base_version            BIGINT,                  -- LanceDB version this publish started from
        embedding_model_id      VARCHAR NOT NULL,
        embedding_identity_json VARCHAR NOT NULL,
        policy_revision         VARCHAR NOT NULL,
        created_at              TIMESTAMP NOT NULL,      -- UTC
        ready_at                TIMESTAMP,               -- UTC
        status                  VARCHAR NOT NULL CHECK (status IN ('building', 'ready', 'failed')),
        row_count               BIGINT,
        doc_count               BIGINT,
        chunk_count             BIGINT,
        embedded_count          BIGINT,
        reused_count            BIGINT,
        rewritten_count         BIGINT,                  -- metadata-only rewrites (vector reused)
        deleted_count           BIGINT,
        run_id                  VARCHAR NOT NULL,
        note                    VARCHAR,                 -- publish | policy-only | repair | cleanup rewrite
        error                   VARCHAR,
        pruned_at               TIMESTAMP                -- its LanceDB version was removed by cleanup
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS chunk_lineage (
        chunk_id         VARCHAR PRIMARY KEY,
        doc_id           VARCHAR NOT NULL,
        doc_version      VARCHAR NOT NULL,
        object_id        VARCHAR NOT NULL,
        source_uri       VARCHAR NOT NULL,
        contract_version VARCHAR NOT NULL,
        chunker          VARCHAR NOT NULL,
        span_start       INTEGER,
        span_end         INTEGER,
        run_id           VARCHAR NOT NULL,
        first_seen       TIMESTAMP NOT NULL,
        deleted_at       TIMESTAMP
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS embedding_lineage (
        chunk_id       VARCHAR NOT NULL,
        model_id       VARCHAR NOT NULL,
        embedding_key  VARCHAR NOT NULL,
        index_revision VARCHAR NOT NULL,
        run_id         VARCHAR NOT NULL,
        PRIMARY KEY (chunk_id, model_id, index_revision)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS index_outbox (
        outbox_id       VARCHAR PRIMARY KEY,
        revision_id     VARCHAR NOT NULL,
        lance_table     VARCHAR NOT NULL,
        base_version    BIGINT,
        expected_rows   BIGINT NOT NULL,
        expected_digest VARCHAR NOT NULL,   -- digest of (chunk_id, row_hash) the LanceDB table must hold
        payload         VARCHAR NOT NULL,   -- JSON: the lineage rows to apply once LanceDB holds the intent
        status          VARCHAR NOT NULL CHECK (status IN ('pending', 'applied', 'abandoned')),
        created_at      TIMESTAMP NOT NULL,
        resolved_at     TIMESTAMP,
        resolution      VARCHAR
    )
    """,
)


INDEX_INPUTS_DDL = """
CREATE TABLE IF NOT EXISTS index_inputs (
    revision_id  VARCHAR PRIMARY KEY,
    input_digest VARCHAR NOT NULL,
    lance_versions VARCHAR NOT NULL   -- the table's version manifests when the digest was recorded
);
"""


INDEX_ROW_MEMO_DDL = """
CREATE TABLE IF NOT EXISTS index_row_memo (
    lance_table VARCHAR NOT NULL,
    doc_id      VARCHAR NOT NULL,
    doc_key     VARCHAR NOT NULL,
    chunks_json VARCHAR NOT NULL,   -- [[chunk_id, row_hash, lineage record], ...]
    PRIMARY KEY (lance_table, doc_id)
);
"""


ANSWER_LOG_DDL = """
CREATE TABLE IF NOT EXISTS answer_log (
    answer_id VARCHAR PRIMARY KEY,
    asked_at TIMESTAMP NOT NULL,
    role VARCHAR NOT NULL,
    question_sha256 VARCHAR NOT NULL,
    as_of DATE,
    index_revision VARCHAR NOT NULL,
    policy_revision VARCHAR NOT NULL,
    resolver_version VARCHAR NOT NULL,
    action VARCHAR NOT NULL,
    cited_json VARCHAR NOT NULL,
    principal VARCHAR,
    transport VARCHAR
)
"""
# Added after the first release (the context server, canon/serve/): a registry
# whose answer_log predates them gains them, nullable, so old rows stay as they were.
ANSWER_LOG_ADDED_COLUMNS = ("principal VARCHAR", "transport VARCHAR")


POLICY_REVISIONS_DDL = """
CREATE TABLE IF NOT EXISTS policy_revisions (
    policy_revision VARCHAR PRIMARY KEY,
    first_seen_at   TIMESTAMP NOT NULL,   -- UTC; the earliest sighting by any Canon component
    seen_by         VARCHAR NOT NULL,     -- policy_sensor | knowledge_index | revocation_lag check | ...
    recorded_at     TIMESTAMP NOT NULL    -- UTC; when the row was written
)
"""


DELETIONS_DDL = """
CREATE TABLE IF NOT EXISTS deletions (
    deletion_id       VARCHAR PRIMARY KEY,
    doc_id            VARCHAR NOT NULL UNIQUE,     -- the source id the request named; also the tombstone
    state             VARCHAR NOT NULL CHECK (state IN ('requested', 'stores_cleared', 'verified')),
    requested_at      TIMESTAMP NOT NULL,          -- UTC; the promise clock starts here
    stores_cleared_at TIMESTAMP,
    completed_at      TIMESTAMP,                   -- verified at (UTC)
    duration_seconds  DOUBLE,                      -- completed_at - requested_at
    promise_hours     DOUBLE NOT NULL,             -- contract retention.delete_propagation_hours
    within_promise    BOOLEAN,
    verified          BOOLEAN NOT NULL,
    attempts          INTEGER NOT NULL,            -- runs that worked on it (resumes count)
    run_id            VARCHAR NOT NULL,            -- the last run
    source_system     VARCHAR,
    chunk_ids         VARCHAR[] NOT NULL,          -- every chunk id of every version (ids are kept)
    probe_sha256      VARCHAR[] NOT NULL,          -- sha256 of the phrases verified absent (never the text)
    details_json      VARCHAR NOT NULL,            -- per-store counts and verification findings
    error             VARCHAR
)
"""


INDEX_MIGRATIONS_DDL = """
CREATE TABLE IF NOT EXISTS index_migrations (
    migration_id            VARCHAR PRIMARY KEY,
    requested_at            TIMESTAMP NOT NULL,     -- UTC
    run_id                  VARCHAR NOT NULL,
    status                  VARCHAR NOT NULL CHECK (status IN ('building', 'built', 'refused', 'failed',
                                                   'cut_over', 'rolled_back', 'superseded', 'finalized')),
    from_revision           VARCHAR NOT NULL,       -- served when the migration started
    from_table              VARCHAR NOT NULL,
    from_model_id           VARCHAR NOT NULL,
    from_config_json        VARCHAR NOT NULL,
    to_table                VARCHAR NOT NULL,
    to_model_id             VARCHAR NOT NULL,
    to_config_json          VARCHAR NOT NULL,
    candidate_lance_version BIGINT,
    coverage_complete       BOOLEAN,
    coverage_json           VARCHAR,                -- counts + missing chunk ids
    eval_json               VARCHAR,                -- per release set: both summaries (no text)
    gate_passed             BOOLEAN,
    decision                VARCHAR,                -- why it cut over or refused
    cutover_revision        VARCHAR,
    cut_over_at             TIMESTAMP,
    rollback_until          TIMESTAMP,
    rollback_revision       VARCHAR,
    rolled_back_at          TIMESTAMP,
    finished_at             TIMESTAMP
)
"""


DBT_ARTIFACT_REVISIONS_DDL = """
CREATE TABLE IF NOT EXISTS dbt_artifact_revisions (
    revision VARCHAR, schema_version INTEGER, loaded_at TIMESTAMP DEFAULT now(), summary VARCHAR
)
"""


# The object catalog of the ask path, derived from `documents` by
# canon/ask/understanding/catalog_store.py (`refresh_catalog`), which explains each table.
ASK_CATALOG_DDL = (
    """CREATE TABLE IF NOT EXISTS ask_catalog_names (
        object_id VARCHAR NOT NULL, name VARCHAR NOT NULL, exact BOOLEAN NOT NULL, core VARCHAR,
        core_words VARCHAR[] NOT NULL, n_core_words INTEGER NOT NULL, n_words INTEGER NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS ask_catalog_cores (core_id BIGINT NOT NULL, core VARCHAR NOT NULL, len BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ask_catalog_bigrams (core_id BIGINT NOT NULL, bigram VARCHAR NOT NULL, k BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ask_catalog_words (word VARCHAR NOT NULL, stem VARCHAR NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ask_catalog_tokens (object_id VARCHAR NOT NULL, token VARCHAR NOT NULL)",
)

def ensure_registry(con: duckdb.DuckDBPyConnection) -> None:
    """documents, document_versions, quarantine, settings, definitions (+ the as-of macro)."""
    con.execute(REGISTRY_DDL)
    con.execute(DEFINITIONS_AS_OF_MACRO)


def ensure_corpus_files(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(CORPUS_FILES_DDL)


def ensure_index(con: duckdb.DuckDBPyConnection) -> None:
    """index_revisions, chunk_lineage, embedding_lineage, index_outbox."""
    for stmt in INDEX_DDL:
        con.execute(stmt)


def ensure_index_inputs(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(INDEX_INPUTS_DDL)


def ensure_row_memo(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(INDEX_ROW_MEMO_DDL)


def ensure_answer_log(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(ANSWER_LOG_DDL)
    for column in ANSWER_LOG_ADDED_COLUMNS:
        con.execute(f"ALTER TABLE answer_log ADD COLUMN IF NOT EXISTS {column}")


def ensure_policy_revisions(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(POLICY_REVISIONS_DDL)


def ensure_deletions(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(DELETIONS_DDL)


def ensure_migrations(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(INDEX_MIGRATIONS_DDL)


def ensure_dbt_artifact_revisions(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(DBT_ARTIFACT_REVISIONS_DDL)


def ensure_ask_catalog(con: duckdb.DuckDBPyConnection) -> None:
    for stmt in ASK_CATALOG_DDL:
        con.execute(stmt)

"""DuckDB resources, and the run tag that keeps DuckDB to one writer. Canon's
registry and the raw landing zone are separate files from dbt-duckdb's
warehouse, so the connection configs of dagster-duckdb and dbt-duckdb never
meet on one file in one process."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import duckdb
from dagster_duckdb import DuckDBResource

from canon.core import db
from canon.core.config import CanonPaths

# Every Canon job that reads or writes canon.duckdb carries this tag. DuckDB
# allows one writer process per file, so the instance runs at most one such run
# at a time (dagster.yaml: concurrency.runs.tag_concurrency_limits, see
# docs/operations.md); the sensors also wait while a run is in progress.
DB_TAG_KEY = "canon/duckdb"
DB_TAGS = {DB_TAG_KEY: "canon"}


class CanonDBResource(DuckDBResource):
    """dagster-duckdb's resource on canon.duckdb that, like every Canon writer, publishes
    the read snapshot before it lets go of the file, so `canon ask | resolve | lineage |
    impact` never wait for a run (canon/core/db.py, docs/design.md "Concurrent readers")."""

    @contextlib.contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with super().get_connection() as con:
            yield con
            db.publish_snapshot(con, Path(self.database))
        db.mark_published(Path(self.database))


def canon_db_resource(paths: CanonPaths) -> DuckDBResource:
    return CanonDBResource(database=str(paths.canon_db))


def raw_db_resource(paths: CanonPaths) -> DuckDBResource:
    return DuckDBResource(database=str(paths.raw_db))

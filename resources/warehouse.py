"""DuckDB resources. Canon's registry and the raw landing zone are separate
files from dbt-duckdb's warehouse, so the connection configs of
dagster-duckdb and dbt-duckdb never meet on one file in one process."""

from __future__ import annotations

from dagster_duckdb import DuckDBResource

from resources.settings import canon_paths


def canon_db_resource() -> DuckDBResource:
    return DuckDBResource(database=str(canon_paths().canon_db))


def raw_db_resource() -> DuckDBResource:
    return DuckDBResource(database=str(canon_paths().raw_db))

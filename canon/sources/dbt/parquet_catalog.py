"""The column catalog dbt 2.0 writes as Parquet, read into what catalog.json gives.

dbt 2.0 (the Rust dbt Core, and the Fusion engine built on it) writes
`catalog.json` only with `--write-catalog`: a plain `dbt build` leaves none. What
it keeps instead are Parquet files of the same facts (dbt-labs/dbt-core, the
crates dbt-metadata-parquet and dbt-index-core):

- `metadata/catalog/columns/v1_<epoch>.parquet` — the warehouse's columns, one
  row per column: `unique_id`, `column_name`, `column_index` (int32),
  `catalog_type`, `catalog_comment`, `ingested_at` (timestamp, UTC). Epochs are
  appended; per `unique_id` the rows with the latest `ingested_at` win. The
  `v1_` prefix is the schema version.
- `index/dbt.node_columns.parquet` — the resolved table (`unique_id`,
  `column_name`, `column_index`, `declared_type`, `inferred_type`,
  `catalog_type`, `data_type` = coalesce(catalog, inferred), …), one row per
  column.
- `private/**/*.parquet` — the other place a dbt 2.0 catalog is reported
  (`dbt-oss`, docs/contracts.md "Documents from dbt"); read when its columns
  are one of the two above.

A file is recognised by its columns, not its name. A catalog file Canon cannot
read (corrupt, or truncated) in metadata/ or index/ is a CanonInputError naming
it, as a corrupt catalog.json is; a file with columns Canon does not know, a
schema version prefix other than `v1_`, or an unreadable file under private/
(which holds more than catalogs) is not an error but is reported as
unsupported (`ParquetCatalog.unsupported`), and the load goes on without those
column types, as it does without catalog.json."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from canon.core.errors import CanonInputError

# {unique_id: {lower column name: (name, type)}}, the shape run_artifacts.parse_catalog returns.
Catalog = dict[str, dict[str, tuple[str, str | None]]]
# One column as read: (ingested_at, column_index, column name, type).
_Row = tuple[object, int, str, "str | None"]

CATALOG_COLUMNS_DIR = Path("metadata") / "catalog" / "columns"
NODE_COLUMNS_FILE = Path("index") / "dbt.node_columns.parquet"
PRIVATE_DIR = Path("private")
SUPPORTED_PREFIX = "v1_"
_EPOCH = re.compile(r"^v(?P<version>\d+)_(?P<epoch>\d+)\.parquet$")
# The columns that identify a file as a column catalog, and where its type is: the resolved
# `data_type` of the index table where there is one (the warehouse's type, else dbt's inferred one).
_KEY = ("unique_id", "column_name")
_TYPE_COLUMNS = ("data_type", "catalog_type")


@dataclass
class ParquetCatalog:
    files: list[Path] = field(default_factory=list)        # what was read
    catalog: Catalog | None = None                          # None when nothing readable was found
    unsupported: list[str] = field(default_factory=list)    # why a file found was not read

    @property
    def where(self) -> str:
        """What was read, for `ArtifactBundle.files` and messages."""
        return ", ".join(str(p) for p in self.files)


def candidates(target: Path) -> list[Path]:
    """Every Parquet file in the places dbt 2.0 writes a column catalog, in reading order."""
    out: list[Path] = []
    columns_dir = target / CATALOG_COLUMNS_DIR
    if columns_dir.is_dir():
        out += sorted(p for p in columns_dir.glob("*.parquet") if not p.name.startswith("."))
    if (target / NODE_COLUMNS_FILE).is_file():
        out.append(target / NODE_COLUMNS_FILE)
    private = target / PRIVATE_DIR
    if private.is_dir():
        out += sorted(p for p in private.glob("**/*.parquet") if p.is_file() and not p.name.startswith("."))
    return out


def _schema(path: Path):
    import pyarrow.parquet as pq  # only when a Parquet catalog is there

    try:
        return pq.read_schema(path)
    except (OSError, ValueError) as exc:   # pyarrow raises ArrowInvalid (a ValueError) for a non-Parquet file
        raise CanonInputError(path, f"cannot read the Parquet catalog dbt wrote: {exc}") from None


def read_parquet_catalog(target: Path) -> ParquetCatalog:
    """The column catalog under `target` (a dbt target folder), over every file found: the epoch
    files of metadata/catalog/columns together (the latest `ingested_at` per node wins, as dbt's
    own reader decides, catalog_columns.rs), then the resolved index table, then private/; a node
    already known from an earlier group keeps its columns."""
    import pyarrow.parquet as pq

    found = ParquetCatalog()
    groups: list[dict[str, list[_Row]]] = []
    epochs: dict[str, list[_Row]] = {}
    for path in candidates(target):
        in_epochs = path.parent == target / CATALOG_COLUMNS_DIR
        m = _EPOCH.match(path.name)
        if in_epochs and m and not path.name.startswith(SUPPORTED_PREFIX):
            found.unsupported.append(f"{path}: catalog schema v{m.group('version')} (Canon reads the "
                                     f"{SUPPORTED_PREFIX}* files of dbt 2.0)")
            continue
        try:
            names = set(_schema(path).names)
        except CanonInputError as exc:
            if path.is_relative_to(target / PRIVATE_DIR):   # not known to be a catalog: say so, go on
                found.unsupported.append(f"{path}: {exc.reason}")
                continue
            raise
        type_column = next((c for c in _TYPE_COLUMNS if c in names), None)
        if not set(_KEY) <= names or type_column is None:
            found.unsupported.append(f"{path}: not a column catalog Canon knows (columns: {', '.join(sorted(names))})")
            continue
        wanted = [*_KEY, type_column, *(c for c in ("column_index", "ingested_at") if c in names)]
        try:
            table = pq.read_table(path, columns=wanted)
        except (OSError, ValueError) as exc:
            raise CanonInputError(path, f"cannot read the Parquet catalog dbt wrote: {exc}") from None
        found.files.append(path)
        rows = _rows(table, type_column)
        if in_epochs:
            for uid, r in rows.items():
                epochs.setdefault(uid, []).extend(r)
        else:
            groups.append(rows)
    if not found.files:
        return found
    catalog: Catalog = {}
    for rows in (epochs, *groups):
        for uid, node_rows in rows.items():
            if uid not in catalog:
                catalog[uid] = _columns(node_rows)
    found.catalog = catalog
    return found



def _rows(table, type_column: str) -> dict[str, list[_Row]]:
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    n = table.num_rows
    stamps = cols.get("ingested_at") or [None] * n
    indexes = cols.get("column_index") or [None] * n
    by_node: dict[str, list[_Row]] = {}
    for uid, name, typ, idx, at in zip(cols["unique_id"], cols["column_name"], cols[type_column], indexes, stamps):
        if uid and name:
            by_node.setdefault(str(uid), []).append(
                (at, idx if isinstance(idx, int) else 0, str(name), None if typ is None else str(typ)))
    return by_node


def _columns(rows: list[_Row]) -> dict[str, tuple[str, str | None]]:
    """One node's columns in column order, from its latest ingestion only."""
    stamped = [r for r in rows if r[0] is not None]
    if stamped:
        latest = max(r[0] for r in stamped)
        rows = [r for r in rows if r[0] == latest]
    return {name.lower(): (name, typ) for _, _, name, typ in sorted(rows, key=lambda r: r[1])}

"""Datasets as OpenLineage names them: dbt relations, Canon's own tables, index revisions.

Run-level events name the datasets a job read and wrote so a catalogue that
speaks OpenLineage shows Canon next to the warehouse jobs (docs/design.md,
"Lineage at two grains").
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from openlineage.client.facet_v2 import DatasetFacet, column_lineage_dataset, schema_dataset

from canon.core.config import CanonPaths


class ColumnRef(NamedTuple):
    """One input column feeding an output column (ColumnLineageDatasetFacet.InputField)."""

    namespace: str
    name: str
    field: str
    # Optional DIRECT transformation subtype: IDENTITY, TRANSFORMATION, AGGREGATION.
    transformation: str | None = None


def _column_ref(value: Any) -> ColumnRef:
    if isinstance(value, ColumnRef):
        return value
    if isinstance(value, Mapping):
        return ColumnRef(value["namespace"], value["name"], value["field"], value.get("transformation"))
    if isinstance(value, (tuple, list)) and len(value) in (3, 4):
        return ColumnRef(*value)
    raise TypeError(f"column lineage input must be ColumnRef, (namespace, name, field) or a mapping, got {value!r}")


@dataclass(frozen=True)
class DatasetRef:
    """A dataset as OpenLineage names it, with an optional schema and column lineage.

    fields:          [(column, type)] (or bare column names) -> SchemaDatasetFacet
    column_lineage:  {output column: [ColumnRef | (namespace, name, field)]} -> ColumnLineageDatasetFacet
    facets:          any further dataset facets, by facet key
    """

    namespace: str
    name: str
    fields: Sequence[tuple[str, str | None] | str] | None = None
    column_lineage: Mapping[str, Sequence[Any]] | None = None
    facets: Mapping[str, DatasetFacet] | None = None

    def __post_init__(self) -> None:
        if not self.namespace or not self.name:
            raise ValueError("a dataset needs a namespace and a name")
        if self.fields is not None:
            norm = tuple((f, None) if isinstance(f, str) else (str(f[0]), None if f[1] is None else str(f[1]))
                         for f in self.fields)
            object.__setattr__(self, "fields", norm)
        if self.column_lineage is not None:
            norm_cl = {str(k): tuple(_column_ref(v) for v in vs) for k, vs in self.column_lineage.items()}
            object.__setattr__(self, "column_lineage", norm_cl)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def column(self, field_name: str, transformation: str | None = None) -> ColumnRef:
        """This dataset's column, for another dataset's column_lineage."""
        return ColumnRef(self.namespace, self.name, field_name, transformation)

    def dataset_facets(self, producer: str) -> dict[str, DatasetFacet]:
        facets: dict[str, DatasetFacet] = {}
        if self.fields is not None:
            facets["schema"] = schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(name=n, type=t, ordinal_position=i)
                    for i, (n, t) in enumerate(self.fields, start=1)
                ],
                producer=producer,
            )
        if self.column_lineage:
            facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    out: column_lineage_dataset.Fields(
                        inputFields=[
                            column_lineage_dataset.InputField(
                                namespace=c.namespace,
                                name=c.name,
                                field=c.field,
                                transformations=(
                                    [column_lineage_dataset.Transformation(type="DIRECT", subtype=c.transformation)]
                                    if c.transformation else []
                                ),
                            )
                            for c in cols
                        ]
                    )
                    for out, cols in self.column_lineage.items()
                },
                producer=producer,
            )
        facets.update(self.facets or {})
        return facets


def _split_relation(relation_name: str) -> list[str]:
    """Split `"db"."schema"."table"` (or unquoted) on dots outside double quotes."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = False
    i = 0
    while i < len(relation_name):
        c = relation_name[i]
        if c == '"':
            if quoted and relation_name[i + 1:i + 2] == '"':  # "" inside quotes is a literal quote
                buf.append('"')
                i += 2
                continue
            quoted = not quoted
        elif c == "." and not quoted:
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
        i += 1
    parts.append("".join(buf).strip())
    return parts


def dbt_relation(
    relation_name: str,
    *,
    fields: Sequence[tuple[str, str | None] | str] | None = None,
    column_lineage: Mapping[str, Sequence[Any]] | None = None,
    warehouse_file: str | os.PathLike[str] | None = None,
) -> DatasetRef:
    """A dbt model or source: namespace `duckdb://<warehouse file name>`, name `db.schema.table`.

    The namespace uses the file *name*, not its path, so it does not change
    when CANON_HOME moves.
    """
    file_name = Path(warehouse_file).name if warehouse_file is not None else CanonPaths.from_env().warehouse_db.name
    parts = _split_relation(relation_name)
    if len(parts) == 2:  # schema.table: the database is the warehouse file itself
        parts = [Path(file_name).stem, *parts]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"dbt relation name {relation_name!r} is not database.schema.table")
    return DatasetRef(f"duckdb://{file_name}", ".".join(parts), fields, column_lineage)


def canon_table(
    name: str,
    *,
    fields: Sequence[tuple[str, str | None] | str] | None = None,
    column_lineage: Mapping[str, Sequence[Any]] | None = None,
) -> DatasetRef:
    """A table in Canon's own store: namespace `canon`, name `canon.<table>`."""
    table = name.removeprefix("canon.")
    if not table:
        raise ValueError("canon_table needs a table name")
    return DatasetRef("canon", f"canon.{table}", fields, column_lineage)


def index_revision(rev_id: str, *, fields: Sequence[tuple[str, str | None] | str] | None = None) -> DatasetRef:
    """One published LanceDB index revision: namespace `lancedb://canon`, name `chunks@<rev>`."""
    if not rev_id:
        raise ValueError("index_revision needs a revision id")
    return DatasetRef("lancedb://canon", f"chunks@{rev_id}", fields)

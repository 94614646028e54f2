"""Raw-loader assets: they stand for an ingestion tool and land the four raw
tables (with `loaded_at`) that dbt declares as sources."""

import datetime as dt

import dagster as dg
from dagster_duckdb import DuckDBResource

from canon.run_lineage import DatasetRef
from canon.sources.demo.raw_data import write_raw
from resources.lineage_emitter import OpenLineageResource

RAW_TABLES = {
    "raw.commerce.order_lines": "Order lines from the commerce platform (gross, discount, VAT, shipping).",
    "raw.commerce.refunds": "Refunds against order lines, by refund_date.",
    "raw.billing.credit_notes": "Credit notes issued by billing, by issue_date.",
    "raw.finance.fx_daily": "Daily FX rates to USD per currency.",
}
# Freshness promises match the dbt sources' warn_after (2 h, 2 h, 2 h, 26 h).
SLA_HOURS = {"raw.commerce.order_lines": 2, "raw.commerce.refunds": 2, "raw.billing.credit_notes": 2,
             "raw.finance.fx_daily": 26}


def raw_key(relation: str) -> dg.AssetKey:
    return dg.AssetKey(relation.split("."))


@dg.multi_asset(
    name="raw_loaders",
    specs=[
        dg.AssetSpec(raw_key(rel), description=desc, group_name="raw", kinds={"duckdb"},
                     freshness_policy=dg.FreshnessPolicy.time_window(fail_window=dt.timedelta(hours=2 * SLA_HOURS[rel]),
                                                                     warn_window=dt.timedelta(hours=SLA_HOURS[rel])))
        for rel, desc in RAW_TABLES.items()
    ],
)
def raw_loaders(context: dg.AssetExecutionContext, raw_db: DuckDBResource, lineage: OpenLineageResource):
    outputs = [DatasetRef("duckdb://raw.duckdb", rel) for rel in RAW_TABLES]
    with lineage.asset_run(context, outputs=outputs):
        with raw_db.get_connection() as con:
            counts = write_raw(con, dt.datetime.now(dt.timezone.utc))
    for rel, n in counts.items():
        yield dg.MaterializeResult(asset_key=raw_key(rel), metadata={"dagster/row_count": n})

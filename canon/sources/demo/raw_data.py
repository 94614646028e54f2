"""The demo raw landing zone: what an ingestion tool (Fivetran, Airbyte, dlt…) would write.

`load_raw` (re)creates four source tables in the DuckDB file `raw.duckdb` that the
dbt project reads through an `attach` named `raw`:

    raw.commerce.order_lines   one row per order line (settled or pending)
    raw.commerce.refunds       at most one refund per settled order line
    raw.billing.credit_notes   credit notes issued against an order
    raw.finance.fx_daily       one USD rate per calendar day per currency

The business data is fully deterministic (a fixed seed; it never depends on
`now`), so re-running is idempotent. Only `loaded_at` follows `now`: the
commerce/billing tables were "loaded" a few minutes before `now` and the FX
feed a few hours before, so they are fresh against the SLAs the dbt sources
declare (2 h, 2 h, 2 h, 26 h).

Everything is written in one connection and one transaction: a crash leaves the
previous table set in place, never half of a new one.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pyarrow as pa

from canon.core.clock import naive_utc

# Business time covered by the demo data (inclusive).
FIRST_DAY = dt.date(2025, 1, 1)
LAST_DAY = dt.date(2026, 11, 30)
CURRENCIES = ("USD", "EUR", "GBP")
SEED = 20250101

# How long before `now` each table's newest batch landed.
LOAD_LAG = {
    "raw.commerce.order_lines": dt.timedelta(minutes=5),
    "raw.commerce.refunds": dt.timedelta(minutes=8),
    "raw.billing.credit_notes": dt.timedelta(minutes=10),
    "raw.finance.fx_daily": dt.timedelta(hours=3),
}
# Older batches: rows are spread over the last few loads, one load per this interval.
_BATCH_INTERVAL = dt.timedelta(minutes=30)
_BATCHES = 4

_CENT = Decimal("0.01")
_VAT_RATE = {"USD": Decimal("0.08"), "EUR": Decimal("0.20"), "GBP": Decimal("0.20")}
_FX_START = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27}

_DDL = {
    "raw.commerce.order_lines": """
        create or replace table commerce.order_lines (
            order_line_id        varchar not null,
            order_id             varchar not null,
            line_number          integer not null,
            ordered_at           timestamp not null,
            transaction_date     date not null,
            settlement_date      date,
            status               varchar not null,
            currency_code        varchar not null,
            quantity             integer not null,
            gross_amount         decimal(18, 2) not null,
            discount_amount      decimal(18, 2) not null,
            vat_amount           decimal(18, 2) not null,
            shipping_amount      decimal(18, 2) not null,
            standard_cost_amount decimal(18, 2) not null,
            loaded_at            timestamp not null
        )""",
    "raw.commerce.refunds": """
        create or replace table commerce.refunds (
            refund_id      varchar not null,
            order_line_id  varchar not null,
            refund_date    date not null,
            refund_amount  decimal(18, 2) not null,
            currency_code  varchar not null,
            loaded_at      timestamp not null
        )""",
    "raw.billing.credit_notes": """
        create or replace table billing.credit_notes (
            credit_note_id      varchar not null,
            order_id            varchar not null,
            issue_date          date not null,
            credit_note_amount  decimal(18, 2) not null,
            currency_code       varchar not null,
            loaded_at           timestamp not null
        )""",
    "raw.finance.fx_daily": """
        create or replace table finance.fx_daily (
            rate_date      date not null,
            currency_code  varchar not null,
            usd_rate       decimal(18, 6) not null,
            loaded_at      timestamp not null
        )""",
}


def _money(x: float | Decimal) -> Decimal:
    return Decimal(str(x)).quantize(_CENT, rounding=ROUND_HALF_UP)


def _days(start: dt.date, end: dt.date):
    d = start
    while d <= end:
        yield d
        d += dt.timedelta(days=1)


def _as_naive_utc(now: dt.datetime) -> dt.datetime:
    # dbt compares max(loaded_at) with the warehouse clock in UTC; naive means UTC here.
    return naive_utc(now).replace(microsecond=0)


def _loaded_at(latest: dt.datetime, i: int, n: int) -> dt.datetime:
    """Spread n rows over the last few load batches; the last row is in the newest batch."""
    batch = (_BATCHES - 1) - (i * _BATCHES) // max(n, 1)
    return latest - batch * _BATCH_INTERVAL


def _generate() -> dict[str, list[dict]]:
    rng = random.Random(SEED)

    # --- FX: a bounded random walk per currency, one rate per day (USD per unit).
    fx: list[dict] = []
    level = dict(_FX_START)
    for day in _days(FIRST_DAY, LAST_DAY):
        for ccy in CURRENCIES:
            if ccy != "USD":
                level[ccy] = min(max(level[ccy] * (1 + rng.gauss(0, 0.003)), _FX_START[ccy] * 0.9),
                                 _FX_START[ccy] * 1.1)
            fx.append({"rate_date": day, "currency_code": ccy,
                       "usd_rate": Decimal(f"{level[ccy]:.6f}")})

    # --- Orders and their lines.
    lines: list[dict] = []
    orders: list[dict] = []
    order_no = 0
    for day in _days(FIRST_DAY, LAST_DAY):
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            order_no += 1
            order_id = f"ORD-{order_no:05d}"
            ccy = rng.choices(CURRENCIES, weights=(5, 3, 2))[0]
            ordered_at = dt.datetime.combine(day, dt.time(rng.randrange(24), rng.randrange(60)))
            settle = day + dt.timedelta(days=rng.randint(0, 4))
            pending = settle > LAST_DAY or rng.random() < 0.04
            n_lines = rng.choice((1, 1, 2, 3))
            shipping = _money(rng.choice((0, 4.95, 9.95))) if ccy != "USD" else _money(rng.choice((0, 5.0, 12.5)))
            order_lines = []
            for ln in range(1, n_lines + 1):
                qty = rng.randint(1, 4)
                unit = _money(rng.uniform(9, 240))
                gross = _money(unit * qty)
                discount = _money(gross * Decimal(rng.choice((0, 0, 0, 5, 10, 15))) / 100)
                vat = _money((gross - discount) * _VAT_RATE[ccy])
                order_lines.append({
                    "order_line_id": f"{order_id}-{ln:02d}",
                    "order_id": order_id,
                    "line_number": ln,
                    "ordered_at": ordered_at,
                    "transaction_date": day,
                    "settlement_date": None if pending else settle,
                    "status": "pending" if pending else "settled",
                    "currency_code": ccy,
                    "quantity": qty,
                    "gross_amount": gross,
                    "discount_amount": discount,
                    "vat_amount": vat,
                    # Shipping is charged once per order, on its first line.
                    "shipping_amount": shipping if ln == 1 else _money(0),
                    "standard_cost_amount": _money(gross * Decimal(str(rng.uniform(0.35, 0.6)))),
                })
            lines.extend(order_lines)
            orders.append({"order_id": order_id, "currency_code": ccy, "pending": pending,
                           "settle": settle, "lines": order_lines})

    # --- Refunds: at most one per settled line, after settlement, within the covered range.
    refunds: list[dict] = []
    for line in lines:
        if line["status"] != "settled" or rng.random() >= 0.10:
            continue
        refund_date = line["settlement_date"] + dt.timedelta(days=rng.randint(1, 45))
        if refund_date > LAST_DAY:
            continue
        net = line["gross_amount"] - line["discount_amount"]
        amount = net if rng.random() < 0.6 else _money(net * Decimal(str(rng.uniform(0.1, 0.9))))
        refunds.append({"refund_id": f"RF-{len(refunds) + 1:05d}", "order_line_id": line["order_line_id"],
                        "refund_date": refund_date, "refund_amount": amount,
                        "currency_code": line["currency_code"]})

    # --- Credit notes: issued against settled orders (a goodwill/price adjustment).
    credit_notes: list[dict] = []
    for order in orders:
        if order["pending"] or rng.random() >= 0.10:
            continue
        issue_date = order["settle"] + dt.timedelta(days=rng.randint(3, 60))
        if issue_date > LAST_DAY:
            continue
        net = sum(ln["gross_amount"] - ln["discount_amount"] for ln in order["lines"])
        credit_notes.append({"credit_note_id": f"CN-{len(credit_notes) + 1:05d}", "order_id": order["order_id"],
                             "issue_date": issue_date,
                             "credit_note_amount": _money(net * Decimal(str(rng.uniform(0.05, 0.3)))),
                             "currency_code": order["currency_code"]})

    return {
        "raw.commerce.order_lines": lines,
        "raw.commerce.refunds": refunds,
        "raw.billing.credit_notes": credit_notes,
        "raw.finance.fx_daily": fx,
    }


def _arrow(rows: list[dict], columns: list[str], latest: dt.datetime) -> pa.Table:
    n = len(rows)
    data = {c: [r[c] for r in rows] for c in columns if c != "loaded_at"}
    data["loaded_at"] = [_loaded_at(latest, i, n) for i in range(n)]
    return pa.table(data)


def load_raw(raw_db: Path, now: dt.datetime) -> dict[str, int]:
    """(Re)create the raw source tables in `raw_db`; return row counts keyed by relation name."""
    raw_db = Path(raw_db)
    raw_db.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(raw_db))
    try:
        return write_raw(con, now)
    finally:
        con.close()


def write_raw(con: duckdb.DuckDBPyConnection, now: dt.datetime) -> dict[str, int]:
    """Write the raw tables through an open connection, in one transaction."""
    now_utc = _as_naive_utc(now)
    tables = _generate()
    con.execute("begin transaction")
    try:
        for schema in ("commerce", "billing", "finance"):
            con.execute(f"create schema if not exists {schema}")
        counts: dict[str, int] = {}
        for relation, rows in tables.items():
            table = relation.removeprefix("raw.")
            con.execute(_DDL[relation])
            columns = [r[0] for r in con.execute(f"describe {table}").fetchall()]
            con.register("_staged", _arrow(rows, columns, now_utc - LOAD_LAG[relation]))
            con.execute(f"insert into {table} by name select * from _staged")
            con.unregister("_staged")
            counts[relation] = con.execute(f"select count(*) from {table}").fetchall()[0][0]
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return counts

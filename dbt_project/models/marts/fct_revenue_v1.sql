-- fct_revenue v1 — grain: one row per SETTLED order line; primary key order_line_id.
-- Refunds are attached to their line (summed; refund_date = latest refund).
-- Every amount converts to USD at the settlement-date daily FX rate.
with lines as (
    select * from {{ ref('stg_commerce__order_lines') }}
    where status = 'settled'
),

refunds as (
    select
        order_line_id,
        cast(sum(refund_amount) as decimal(18, 2)) as refund_amount,
        max(refund_date)   as refund_date,
        count(*)           as refund_count
    from {{ ref('stg_commerce__refunds') }}
    group by order_line_id
),

fx as (
    select * from {{ ref('stg_finance__fx_daily') }}
)

select
    l.order_line_id,
    l.order_id,
    l.transaction_date,
    l.settlement_date,
    r.refund_date,
    coalesce(r.refund_count, 0)                                   as refund_count,
    l.currency_code,
    l.gross_amount,
    l.discount_amount,
    coalesce(r.refund_amount, 0)                                  as refund_amount,
    l.vat_amount,
    l.shipping_amount,
    cast(l.gross_amount - l.discount_amount - coalesce(r.refund_amount, 0) as decimal(18, 2))
                                                                  as net_revenue_amount,
    fx.rate_date                                                  as fx_rate_date,
    fx.usd_rate                                                   as fx_rate,
    {{ to_usd('l.gross_amount', 'fx.usd_rate') }}                 as gross_amount_usd,
    {{ to_usd('l.discount_amount', 'fx.usd_rate') }}              as discount_amount_usd,
    {{ to_usd('coalesce(r.refund_amount, 0)', 'fx.usd_rate') }}   as refund_amount_usd,
    {{ to_usd('l.gross_amount - l.discount_amount - coalesce(r.refund_amount, 0)', 'fx.usd_rate') }}
                                                                  as net_revenue_usd
from lines as l
left join refunds as r
    on r.order_line_id = l.order_line_id
left join fx
    on fx.currency_code = l.currency_code
   and fx.rate_date = l.settlement_date

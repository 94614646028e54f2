-- fct_revenue v3 — DRAFT prerelease (not latest). Same event grain as v2; primary key
-- revenue_event_id. Proposed changes: shipping revenue is included, and every event
-- converts to USD at the month-end FX rate of its recognition month.
-- net_revenue = gross - discount + shipping - refund - credit note; VAT excluded.
with events as (
    {{ revenue_events() }}
),

fx as (
    select * from {{ ref('stg_finance__fx_daily') }}
)

select
    e.revenue_event_id,
    e.event_type,
    e.source_record_id,
    e.order_line_id,
    e.order_id,
    e.recognition_date,
    e.currency_code,
    e.gross_amount,
    e.discount_amount,
    e.refund_amount,
    e.credit_note_amount,
    e.vat_amount,
    e.shipping_amount,
    cast(e.gross_amount - e.discount_amount + e.shipping_amount - e.refund_amount - e.credit_note_amount as decimal(18, 2))
                                                                  as net_revenue_amount,
    fx.rate_date                                                  as fx_rate_date,
    fx.usd_rate                                                   as fx_rate,
    {{ to_usd('e.gross_amount', 'fx.usd_rate') }}                 as gross_amount_usd,
    {{ to_usd('e.discount_amount', 'fx.usd_rate') }}              as discount_amount_usd,
    {{ to_usd('e.shipping_amount', 'fx.usd_rate') }}              as shipping_amount_usd,
    {{ to_usd('e.refund_amount', 'fx.usd_rate') }}                as refund_amount_usd,
    {{ to_usd('e.credit_note_amount', 'fx.usd_rate') }}           as credit_note_amount_usd,
    {{ to_usd('e.gross_amount - e.discount_amount + e.shipping_amount - e.refund_amount - e.credit_note_amount', 'fx.usd_rate') }}
                                                                  as net_revenue_usd
from events as e
left join fx
    on fx.currency_code = e.currency_code
   and fx.rate_date = last_day(e.recognition_date)

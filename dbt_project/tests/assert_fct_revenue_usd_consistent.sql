-- In every fct_revenue version, USD net revenue is the local net amount at the row's
-- FX rate and equals the sum of its USD components (guards the conversion arithmetic).
select 'v1' as version, order_line_id as row_id
from {{ ref('fct_revenue', v=1) }}
where net_revenue_usd <> net_revenue_amount * fx_rate
   or net_revenue_usd <> gross_amount_usd - discount_amount_usd - refund_amount_usd
union all
select 'v2', revenue_event_id
from {{ ref('fct_revenue', v=2) }}
where net_revenue_usd <> net_revenue_amount * fx_rate
   or net_revenue_usd <> gross_amount_usd - discount_amount_usd - refund_amount_usd - credit_note_amount_usd
union all
select 'v3', revenue_event_id
from {{ ref('fct_revenue', v=3) }}
where net_revenue_usd <> net_revenue_amount * fx_rate
   or net_revenue_usd <> gross_amount_usd - discount_amount_usd + shipping_amount_usd
                         - refund_amount_usd - credit_note_amount_usd

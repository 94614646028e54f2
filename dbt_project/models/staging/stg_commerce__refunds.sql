-- One row per raw refund, typed and normalised.
select
    refund_id,
    order_line_id,
    refund_date,
    cast(refund_amount as decimal(18, 2)) as refund_amount,
    upper(currency_code)                  as currency_code,
    loaded_at
from {{ source('commerce', 'refunds') }}

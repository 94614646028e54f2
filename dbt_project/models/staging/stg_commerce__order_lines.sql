-- One row per raw order line, typed and normalised; no business rules yet.
select
    order_line_id,
    order_id,
    line_number,
    ordered_at,
    transaction_date,
    settlement_date,
    lower(status)                                as status,
    upper(currency_code)                         as currency_code,
    quantity,
    cast(gross_amount as decimal(18, 2))         as gross_amount,
    cast(discount_amount as decimal(18, 2))      as discount_amount,
    cast(vat_amount as decimal(18, 2))           as vat_amount,
    cast(shipping_amount as decimal(18, 2))      as shipping_amount,
    cast(standard_cost_amount as decimal(18, 2)) as standard_cost_amount,
    loaded_at
from {{ source('commerce', 'order_lines') }}

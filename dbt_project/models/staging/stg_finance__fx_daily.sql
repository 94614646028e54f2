-- One row per day per currency: USD per one unit of currency_code.
select
    rate_date,
    upper(currency_code)              as currency_code,
    cast(usd_rate as decimal(18, 6))  as usd_rate,
    loaded_at
from {{ source('finance', 'fx_daily') }}

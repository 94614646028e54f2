-- stg_finance__fx_daily's primary key is (rate_date, currency_code): fail on duplicates.
select rate_date, currency_code, count(*) as n
from {{ ref('stg_finance__fx_daily') }}
group by rate_date, currency_code
having count(*) > 1

-- fct_revenue v2 must account for every settled line, refund and credit note exactly
-- once: local-currency net revenue per currency equals the staging totals.
with staged as (
    select currency_code, sum(gross_amount - discount_amount) as amount
    from {{ ref('stg_commerce__order_lines') }}
    where status = 'settled'
    group by currency_code
    union all
    select currency_code, -sum(refund_amount)
    from {{ ref('stg_commerce__refunds') }}
    group by currency_code
    union all
    select currency_code, -sum(credit_note_amount)
    from {{ ref('stg_billing__credit_notes') }}
    group by currency_code
),

expected as (
    select currency_code, sum(amount) as amount from staged group by currency_code
),

actual as (
    select currency_code, sum(net_revenue_amount) as amount
    from {{ ref('fct_revenue', v=2) }}
    group by currency_code
)

select
    coalesce(e.currency_code, a.currency_code) as currency_code,
    e.amount as expected_amount,
    a.amount as actual_amount
from expected as e
full outer join actual as a
    on a.currency_code = e.currency_code
where e.amount is distinct from a.amount

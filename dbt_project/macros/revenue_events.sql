{#- The recognized revenue events shared by fct_revenue v2 and the v3 draft: one row
    per settled order line (recognized on settlement_date), per refund (refund_date)
    and per credit note (issue_date), amounts in local currency, signs positive.
    `transaction_date` is the day of the event's own transaction (order placed,
    refund issued, credit note issued): the FX date of v2. -#}
{% macro revenue_events() %}
    select
        'order_line:' || l.order_line_id            as revenue_event_id,
        'order_line'                                as event_type,
        l.order_line_id                             as source_record_id,
        l.order_line_id,
        l.order_id,
        l.settlement_date                           as recognition_date,
        l.transaction_date,
        l.currency_code,
        l.gross_amount,
        l.discount_amount,
        cast(0 as decimal(18, 2))                   as refund_amount,
        cast(0 as decimal(18, 2))                   as credit_note_amount,
        l.vat_amount,
        l.shipping_amount,
        l.standard_cost_amount
    from {{ ref('stg_commerce__order_lines') }} as l
    where l.status = 'settled'

    union all

    select
        'refund:' || r.refund_id,
        'refund',
        r.refund_id,
        r.order_line_id,
        l.order_id,
        r.refund_date,
        r.refund_date,
        r.currency_code,
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        r.refund_amount,
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2))
    from {{ ref('stg_commerce__refunds') }} as r
    left join {{ ref('stg_commerce__order_lines') }} as l
        on l.order_line_id = r.order_line_id

    union all

    select
        'credit_note:' || c.credit_note_id,
        'credit_note',
        c.credit_note_id,
        cast(null as varchar),
        c.order_id,
        c.issue_date,
        c.issue_date,
        c.currency_code,
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        c.credit_note_amount,
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2)),
        cast(0 as decimal(18, 2))
    from {{ ref('stg_billing__credit_notes') }} as c
{% endmacro %}

{#- Local amount to USD at a daily rate, kept exact (no per-row rounding). -#}
{% macro to_usd(amount, rate) -%}
    cast(({{ amount }}) * ({{ rate }}) as decimal(38, 8))
{%- endmacro %}

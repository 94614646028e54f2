-- One row per raw credit note, typed and normalised.
select
    credit_note_id,
    order_id,
    issue_date,
    cast(credit_note_amount as decimal(18, 2)) as credit_note_amount,
    upper(currency_code)                       as currency_code,
    loaded_at
from {{ source('billing', 'credit_notes') }}

-- fct_revenue v1's grain is exactly the settled order lines.
select order_line_id
from {{ ref('stg_commerce__order_lines') }}
where status = 'settled'
  and order_line_id not in (select order_line_id from {{ ref('fct_revenue', v=1) }})
union all
select order_line_id
from {{ ref('fct_revenue', v=1) }}
where order_line_id not in (
    select order_line_id from {{ ref('stg_commerce__order_lines') }} where status = 'settled'
)

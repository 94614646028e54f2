{#- Use the configured schema name as-is (stg, analytics) instead of dbt's
    default "<target schema>_<custom schema>", so relations read
    warehouse.analytics.fct_revenue_v2 and warehouse.stg.stg_commerce__order_lines. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}

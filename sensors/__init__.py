"""Dagster sensors and schedules: the change sensors that start one run per
change (data_sensors), the alert sensors (alert_sensors), and what runs on the
clock (schedules). The jobs they start live beside the assets they select
(assets/); definitions.py wires them; docs/operations.md describes them for
people."""

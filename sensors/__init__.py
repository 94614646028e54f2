"""Dagster sensors and schedules."""

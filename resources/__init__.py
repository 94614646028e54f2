"""Dagster resources: thin, configurable wrappers over canon.*. Values that
come from the environment are wired as `dg.EnvVar` in definitions.py."""

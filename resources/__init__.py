"""Dagster ConfigurableResources: thin wrappers over canon.*"""

"""Dagster assets and asset checks: thin, they call canon.*"""

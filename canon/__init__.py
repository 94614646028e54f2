"""Canon: a governed knowledge index over analytical documentation.

This package is the domain core. It never imports Dagster: the Dagster
assets, resources and sensors in the top-level folders only wire it in.
"""

__version__ = "0.1.0"

from canon.core.lazy_imports import defer_rest_client as _defer_rest_client

_defer_rest_client()   # most of `import lancedb`'s cost, skipped; see canon/core/lazy_imports.py

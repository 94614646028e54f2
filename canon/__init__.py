"""Canon: a governed knowledge index over analytical documentation.

This package is the domain core. It never imports Dagster: the Dagster
assets, resources and sensors in the top-level folders only wire it in.
"""

__version__ = "0.1.0"

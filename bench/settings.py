"""What every part of the benchmark agrees on: where the repository and the results are, the fixed
day the gate judges by, the role that asks, and the query depth. Standard library only, like every
module the parent process imports (see bench/__init__.py)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / "contracts" / "knowledge.yml"

# The gate's "effective date too far in the future" rule depends on today; a fixed day makes the
# same seed admit the same documents on any day the benchmark runs.
TODAY = dt.date(2026, 11, 30)
ROLE = "analyst"
SEARCH_K = 10
CANDIDATES = 40          # what canon.index.search fetches per list for k=10: max(4k, 40)
CHUNKS_PER_DOC = 1.6     # measured on the generated corpus (synth share 0.5): sizing of the --chunks corpus

# The build stages bench.pipeline.pipeline times, in order (each a key of its result, in seconds).
STAGES = ("read_s", "gate_s", "registry_s", "definitions_s", "ask_catalog_s", "publish_s")


def canon_home() -> Path:
    return Path(os.environ.get("CANON_HOME", str(REPO / "var")))

"""Clocks, resource figures and the statistics every figure is made of (standard library only)."""

from __future__ import annotations

import math
import os
import resource
import statistics
import sys
import time
from typing import Any


def now() -> float:
    return time.perf_counter()


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def cpu_s() -> float:
    """CPU seconds of this process, all threads (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)  # KiB on Linux


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (p95 of 100 values = the 95th smallest, as the peers compute it)."""
    if not values:
        return None
    v = sorted(values)
    return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]


def spread(samples: list[float]) -> dict[str, Any]:
    s = [x for x in samples if x is not None]
    if not s:
        return {"median": None, "min": None, "max": None, "stdev": None, "n": 0, "samples": []}
    return {"median": statistics.median(s), "min": min(s), "max": max(s),
            "stdev": statistics.pstdev(s) if len(s) > 1 else 0.0, "n": len(s), "samples": s}


def median(xs: list[float]) -> float | None:
    """The median of the values that are there (None when none is)."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {loadavg()[0] if loadavg() else '?'}] {msg}", file=sys.stderr,
          flush=True)

"""Why a metric has no in-process value: the two refusals every semantic-layer module raises."""

from __future__ import annotations

from canon.core.errors import CanonError


class NotComputable(CanonError):
    """The metric has no in-process computation (unknown, unsupported type or filter).

    The message says which metric and why, so a caller can show it as the reason
    for answering without a number."""


class UnsafeExpression(NotComputable):
    """A derived-metric expression uses something other than numbers, names and + - * /."""

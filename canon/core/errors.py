"""Errors that reach users name the file, the field and the reason."""

from __future__ import annotations


class CanonError(Exception):
    """Base class for every error Canon raises on purpose."""


class CanonInputError(CanonError):
    """Bad configuration or input (CLI exit code 2).

    The message always names the file (and the line or field where known)
    and the reason, so a user can fix it without reading a traceback.
    """

    def __init__(self, path: object, reason: str, *, field: str | None = None, line: int | None = None):
        self.path = str(path)
        self.reason = reason
        self.field = field
        self.line = line
        where = self.path
        if line is not None:
            where += f":{line}"
        if field:
            where += f" [{field}]"
        super().__init__(f"{where}: {reason}")


class CanonRunError(CanonError):
    """A run or a check failed (CLI exit code 1)."""

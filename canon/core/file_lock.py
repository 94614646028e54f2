"""An exclusive lock on a file, for one writer across processes.

`flock` is dropped by the kernel when its holder dies, so a crash never leaves
a stale lock; the holder's pid is written into the file so that a waiter that
gives up can say who holds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Callable, Iterator


@contextlib.contextmanager
def exclusive(path: str | os.PathLike, *, timeout: float,
              busy: Callable[[str], Exception]) -> Iterator[None]:
    """Hold `path` exclusively, waiting up to `timeout` seconds; then raise
    `busy(holder_pid)`."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    try:
                        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                    except OSError:
                        holder = "unknown"
                    raise busy(holder) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

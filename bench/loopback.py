"""A server process on 127.0.0.1 for the benchmark and the tests (bench/server.py,
tests/test_serve_mcp.py): a free port, a wait until the process accepts connections (or
exits, or a deadline passes), and a stop by its pid however the caller's body ended."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from typing import Callable, Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, timeout_s: float, why: Callable[[], str]) -> None:
    """Return once 127.0.0.1:`port` accepts a connection. RuntimeError when the process exits
    first or `timeout_s` passes; `why()` says what the process logged."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode}: {why()}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not listen on port {port} within {timeout_s:.0f} s: "
                                   f"{why()}") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen, grace_s: float = 20) -> None:
    """SIGTERM by pid, then SIGKILL when it has not exited within `grace_s`."""
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


@contextmanager
def serving(proc: subprocess.Popen, port: int, timeout_s: float, why: Callable[[], str]) -> Iterator[str]:
    """The server's MCP URL once it listens; the process is stopped when the body ends."""
    try:
        wait_listening(proc, port, timeout_s, why)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)

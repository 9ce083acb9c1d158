"""Writing to a pane's tty (the bell, an OSC notification): never blocking, never
raising. Below the sinks and the dispatch, which both write there."""

from __future__ import annotations

import os


def write_checked(tty: str, data: bytes) -> str:
    """Write without blocking; why it failed ("" when it wrote)."""
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        os.write(fd, data)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        os.close(fd)
    return ""


def write(tty: str, data: bytes) -> None:
    """Write to a pane's tty (a /dev path) without ever blocking; every failure is silent."""
    if tty.startswith("/dev/") and data:
        write_checked(tty, data)

"""At most N live tests at once across all xdist workers (TMA_LIVE_SLOTS, default 4).

The suite runs with more workers than CPUs because most tests wait on tmux; the live
tests each drive a real agent (a node or Python process that computes while it starts
and draws), and their latency limits were set with at most four of them at a time. A
worker takes one of N lock files (flock: a worker that dies frees its slot) for a live
test's setup, call and teardown, and waits for one when all are taken. The controller
makes the directory before the workers start and removes it at the end."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
import time

ENV = "TMA_LIVE_SLOT_DIR"


def requested(config) -> bool:
    """The live suite runs when asked for: TMA_REQUIRE_LIVE (CI), TMA_LIVE=1, or a `-m`
    expression that selects `live`. A plain `pytest` on a developer's machine skips it: it
    takes minutes and drives real agents."""
    if os.environ.get("TMA_REQUIRE_LIVE") or os.environ.get("TMA_LIVE"):
        return True
    expr = config.getoption("markexpr", default="") or ""
    return bool(re.search(r"(?<!not )\blive\b", expr))


def count() -> int:
    try:
        return max(1, int(os.environ.get("TMA_LIVE_SLOTS", "4")))
    except ValueError:
        return 4


def make_dir() -> str | None:
    """In the controller, before xdist starts its workers: the shared directory (put in
    the environment the workers inherit), or None when one is set already."""
    if os.environ.get(ENV) or os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    where = tempfile.mkdtemp(prefix="tma-live-slots-")
    os.environ[ENV] = where
    return where


def remove_dir(where: str | None) -> None:
    if where:
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def held():
    """One slot for the block, on an xdist worker; nothing to take elsewhere."""
    where = os.environ.get(ENV)
    if not where or not os.environ.get("PYTEST_XDIST_WORKER") or not os.path.isdir(where):
        yield
        return
    n = count()
    while True:
        for i in range(n):
            fd = os.open(os.path.join(where, f"slot-{i}"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                yield
            finally:
                os.close(fd)  # closing the descriptor drops the lock
            return
        time.sleep(0.05)

"""Names and socket files of the private tmux servers the tests start.

Every server a test run starts is named `tma-<kind>-<pid>-...` with this pytest process's
pid, so the run can tell its own socket files from those of other runs on the machine.
tmux leaves the socket file behind when its server exits; whoever starts a server removes
it (`remove`), and tests/conftest.py fails the session if any of this run's are left.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil

import pytest

_counter = itertools.count()


def server_name(kind: str) -> str:
    """A unique server name carrying this run's id: tma-<kind>-<pid>-<n>-<random>."""
    return f"tma-{kind}-{os.getpid()}-{next(_counter)}-{os.urandom(3).hex()}"


def socket_dir() -> str:
    """Where tmux puts `-L` sockets: $TMUX_TMPDIR (else /tmp) / tmux-<uid>."""
    return os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}")


def socket_path(name: str) -> str:
    return os.path.join(socket_dir(), name)


def remove(name: str) -> None:
    """Remove a server's socket file (after the server is gone); absent is fine."""
    try:
        os.unlink(socket_path(name))
    except FileNotFoundError:
        pass


def this_runs(pid: int | None = None) -> set[str]:
    """The socket files now present that a run with this pid named."""
    own = re.compile(rf"^tma-[a-z-]+-{pid or os.getpid()}(-|$)")
    try:
        return {n for n in os.listdir(socket_dir()) if own.match(n)}
    except FileNotFoundError:
        return set()


def require_tmux() -> str:
    """The tmux binary, or a skip (a failure when TMA_REQUIRE_TMUX is set, as in CI)."""
    exe = shutil.which("tmux")
    if exe is None:
        if os.environ.get("TMA_REQUIRE_TMUX"):
            pytest.fail("tmux is required (TMA_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux is not installed")
    return exe

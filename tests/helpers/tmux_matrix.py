"""Which tmux binaries the tests run on.

The tmux contract suite (tests marked `tmux_contract`) runs once per build in the
matrix, each test id naming its release (`test_x[tmux-3.4]`). The matrix comes from
TMA_TMUX_MATRIX, a space-separated list of `VERSION=/path/to/tmux` that `.ci/run`
builds with tools/tmux_matrix.sh (`export TMA_TMUX_MATRIX="$(tools/tmux_matrix.sh)"`
does the same on a developer's machine). Without it every test runs once, on the tmux
found on PATH (`system`), as does every test outside the contract suite.

A test's tmux is the fixture `tmux_build`; its Server puts the build's directory first
on PATH and names it in TMA_TMUX_BIN, so the tma processes a test starts, and any
`tmux` a hook or a key binding runs, talk to the same build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

ENV = "TMA_TMUX_MATRIX"
MARK = "tmux_contract"
REPO = Path(__file__).resolve().parents[2]
#: The releases CI proves (one per line); src/tma/tmux/releases.py carries the same list.
RELEASES_FILE = REPO / ".ci" / "tmux-releases"


class Build(NamedTuple):
    version: str  # as the matrix names it: 3.4, next, or `system`
    path: str  # the tmux binary

    @property
    def id(self) -> str:
        return f"tmux-{self.version}"

    @property
    def bin_dir(self) -> str:
        return os.path.dirname(self.path)


def ci_releases() -> list[str]:
    """The releases `.ci/run` builds and runs the contract suite on."""
    lines = RELEASES_FILE.read_text(encoding="utf-8").splitlines()
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


def matrix() -> list[Build]:
    """The builds TMA_TMUX_MATRIX names ([] when unset). A malformed entry or a missing
    binary is an error, not a skip: a matrix that silently shrinks proves nothing."""
    raw = os.environ.get(ENV, "").split()
    builds = []
    for entry in raw:
        version, sep, path = entry.partition("=")
        if not sep or not version or not path:
            raise pytest.UsageError(f"{ENV}: {entry!r} is not VERSION=/path/to/tmux")
        if not os.access(path, os.X_OK):
            raise pytest.UsageError(f"{ENV}: {path} (tmux {version}) is not an executable")
        builds.append(Build(version, path))
    return builds


def system() -> Build | None:
    exe = shutil.which("tmux")
    return Build("system", exe) if exe else None


def version_of(path: str) -> str:
    """What the binary says (`tmux -V`): `tmux 3.4` -> `3.4`."""
    out = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=10).stdout
    return out.strip().removeprefix("tmux ").strip()


def parametrize(metafunc, builds: list[Build], fixture: str = "tmux_build") -> None:
    """Run a contract test once per build (indirect: the fixture receives the Build)."""
    metafunc.parametrize(fixture, builds, ids=[b.id for b in builds], indirect=True,
                         scope="function")


LIVE_ENV = "TMA_LIVE_TMUX"
LIVE_DEFAULT = "3.4"


def live_extra() -> Build | None:
    """The build the live suite's daemon mode also runs on, besides the tmux
    on PATH: the matrix entry TMA_LIVE_TMUX names (default 3.4, Ubuntu 24.04's, the
    first release that prints format output escaped); None without a matrix."""
    want = os.environ.get(LIVE_ENV, LIVE_DEFAULT)
    return next((b for b in matrix() if b.version == want), None)

"""Every test runs with a private HOME, and any write into the real one fails the test.

Two layers, after pre-commit's "you forgot to set this in the test":
- an autouse fixture points HOME, the XDG base dirs and XDG_RUNTIME_DIR at a fresh
  directory per test, so code that resolves "~" (in this process or in a subprocess
  that inherits the environment) writes there;
- an audit hook (sys.addaudithook) watches this process's file writes (open for writing,
  mkdir, rename/replace, remove, chmod, symlink, ...) and refuses any under the real home,
  as resolved when this file was imported. A refused write raises WroteTheRealHome and is
  recorded too, so a caller that swallows the error (the cache does) still fails the test
  at teardown.
Exempt, because they are not the user's files: the interpreter's own trees, __pycache__,
the checkout, pytest's temp dirs and the live suite's agent cache (tests/live), each
only when it lies inside the home.

The session also fails if it leaves behind a socket file of a tmux server it started.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import tmux_sockets

try:
    from tests.helpers.live import slots as live_slots
except ImportError:  # a copy of this conftest in a test's own project has no live helpers
    live_slots = None  # type: ignore[assignment]

REAL_HOME = os.path.abspath(os.path.expanduser("~"))
REPO = str(Path(__file__).resolve().parents[1])
LIVE_CACHE = os.environ.get("TMA_LIVE_CACHE") or os.path.join(REAL_HOME, ".cache", "tma-live")
#: the XDG base dirs, at their default places under the private HOME
XDG_HOMES = {"XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache",
             "XDG_DATA_HOME": ".local/share", "XDG_STATE_HOME": ".local/state"}


# A suite started as a background job of a non-interactive shell (`.ci/run &`) inherits
# SIGINT ignored, and a process started with SIGINT ignored keeps it ignored: the tests
# that press Ctrl-C in a tma would then see nothing happen. Python's own handler here
# makes the children start with SIGINT's default again (exec resets handlers, not SIG_IGN).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The run writes bytecode even where the shell sets PYTHONDONTWRITEBYTECODE (this
# machine's does): otherwise every xdist worker rewrites and compiles all ~300 test
# modules while collecting (7.5 s of CPU each, 2.4 s from the cache) and every tma the
# tests start compiles what it imports. Removed here, before xdist starts its workers,
# so they and every child inherit the environment without it.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

# The live tests' slots (tests/helpers/live/slots.py): made here in the controller,
# before xdist starts the workers that inherit its path.
_LIVE_SLOTS = live_slots.make_dir() if live_slots is not None else None


def pytest_unconfigure(config):
    if live_slots is not None:
        live_slots.remove_dir(_LIVE_SLOTS)


@pytest.hookimpl(optionalhook=True)  # a run with `-p no:xdist` has no such hook
def pytest_xdist_auto_num_workers(config):
    """`-n auto` (the README's command): three workers a CPU, since most tests wait on
    tmux, sshd and subprocesses; two a CPU when the live suite runs, whose real agents
    compute while they start and draw (its latency limits hold on CI's 2 vCPUs with four
    workers, and failed with eight). PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or live_slots is None:
        return None  # xdist's own answer
    cpus = len(os.sched_getaffinity(0)) or 1
    return cpus * (2 if live_slots.requested(config) else 3)


class WroteTheRealHome(RuntimeError):
    """A test wrote into the real HOME; point the write at the test's own directory."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Guard:
    def __init__(self) -> None:
        self.exempt: list[str] = []
        self.violations: list[str] = []
        self.allow(REPO, LIVE_CACHE, sys.prefix, sys.base_prefix, sys.exec_prefix,
                   tempfile.gettempdir())

    def allow(self, *dirs: str) -> None:
        """Exempt dirs; one that contains the home (say /tmp) cannot exempt all of it."""
        for d in dirs:
            d = os.path.abspath(d)
            if _inside(d, REAL_HOME) and d != REAL_HOME:
                self.exempt.append(d)

    def forbidden(self, target) -> bool:
        if isinstance(target, int) or target is None:  # an fd, or "no path"
            return False
        path = os.path.abspath(os.fsdecode(target))
        if not _inside(path, REAL_HOME) or "__pycache__" in path.split(os.sep):
            return False
        return not any(_inside(path, d) for d in self.exempt)

    def audit(self, event: str, args: tuple) -> None:
        if event not in _WATCHED:  # the hook sees every audited event: leave the rest fast
            return
        for target in _written(event, args):
            if self.forbidden(target):
                message = f"{event} {os.fsdecode(target)!r} writes the real HOME {REAL_HOME}"
                self.violations.append(message)
                raise WroteTheRealHome(message)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: events whose first argument is a path written to
_ONE_PATH = frozenset({"os.mkdir", "os.remove", "os.rmdir", "os.chmod", "os.chown", "os.utime",
                       "os.truncate", "os.setxattr", "os.removexattr", "shutil.rmtree"})
#: events whose first two arguments are (source, destination), both changed by a rename
_TWO_PATHS = frozenset({"os.rename"})
#: events that create only their second argument
_DESTINATION = frozenset({"os.symlink", "os.link", "shutil.copyfile", "shutil.copymode",
                          "shutil.copystat"})
_WATCHED = frozenset({"open"}) | _ONE_PATH | _TWO_PATHS | _DESTINATION


def _written(event: str, args: tuple) -> tuple:
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        return (path,) if writing else ()
    if event in _ONE_PATH:
        return args[:1]
    if event in _TWO_PATHS:
        return args[:2]
    if event in _DESTINATION:
        return args[1:2]
    return ()


GUARD = _Guard()
sys.addaudithook(GUARD.audit)


@pytest.fixture(scope="session", autouse=True)
def _exempt_pytest_temp(tmp_path_factory):
    GUARD.allow(str(tmp_path_factory.getbasetemp()))


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch, _exempt_pytest_temp):
    """HOME, XDG_*_HOME and XDG_RUNTIME_DIR in a fresh directory; fail on any real-HOME
    write by the test. (The runtime dir too: a test's notify-failure record in the
    user's /run/user/<uid>/tma would show up in their own `tma doctor`.)"""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # run from inside tmux, a test must never reach the person's own server or pane
    # (TMUX_TMPDIR is honoured instead: every test server is named, under it)
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    # the width a command renders at is the test's to choose, never the terminal that
    # ran pytest (a worker of pytest-xdist sees another one again)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    for var, rel in XDG_HOMES.items():
        monkeypatch.setenv(var, str(home / rel))
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    before = len(GUARD.violations)
    yield home
    caught = GUARD.violations[before:]
    if caught:
        pytest.fail("the test wrote the real HOME:\n  " + "\n  ".join(caught), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def _no_tmux_socket_left_behind():
    """Fail the run if it leaves a socket file of a tmux server it named (tmux_sockets:
    this pid's names only, so other runs on the machine are never counted)."""
    before = tmux_sockets.this_runs()
    yield
    left = sorted(tmux_sockets.this_runs() - before)
    for name in left:  # clean up, then fail: the next run must not inherit them
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10)
        tmux_sockets.remove(name)
    if left:
        pytest.fail(f"{len(left)} tmux socket file(s) left in {tmux_sockets.socket_dir()}: "
                    + ", ".join(left), pytrace=False)


# ---------------------------------------------------------------- what each phase costs
# One line a phase at the end of the run (.ci/run prints them again beside its own
# install, build and lint phases): unit+arch, integration, the tmux contract suite per
# release, live. With pytest-xdist the phases run side by side, so a phase's line gives
# its tests, their summed seconds (setup, call and teardown: what the phase costs) and
# when, in the run's wall clock, its first test started and its last one ended.
_PHASES: dict[str, list[float]] = {}  # phase -> [tests, seconds, first start, last stop]
_SESSION_START: list[float] = []
#: a contract test's id names its build (tests/helpers/tmux_matrix.py: `[tmux-3.4]`); the
#: id is all the controller of pytest-xdist sees of a worker's test
_BUILD_ID = re.compile(r"[\[-]tmux-([^\]\-]+)[\]-]")


def pytest_sessionstart(session):
    import time

    _SESSION_START.append(time.time())


def _builds() -> frozenset[str]:
    try:
        from tests.helpers import tmux_matrix

        return frozenset(b.version for b in tmux_matrix.matrix())
    except Exception:  # a broken matrix is tmux_matrix's error to report; a copy of this
        return frozenset()  # conftest in a test's own project has no helpers


_MATRIX: list[frozenset[str]] = []


def phase_of(nodeid: str) -> str:
    if nodeid.startswith("tests/live/"):
        return "live"
    if nodeid.startswith(("tests/unit/", "tests/arch/")):
        return "unit+arch"
    if not _MATRIX:
        _MATRIX.append(_builds())
    m = _BUILD_ID.search(nodeid)
    return f"contract {m.group(1)}" if m and m.group(1) in _MATRIX[0] else "integration"


def pytest_collection_modifyitems(config, items):
    """The order the workers of pytest-xdist take the tests in: the tests that wait on
    tmux, sshd and the real agents first, the live suite's spread evenly among them (a
    worker runs a live test only in one of TMA_LIVE_SLOTS, tests/helpers/live/slots.py,
    so a run of them back to back would leave workers waiting for a slot), and the unit
    and arch tests, short and CPU-bound, last, where they fill the workers that finish
    early instead of leaving one slow test alone at the end. Stable within each group and
    the same in every worker (xdist checks that they all collected the same list)."""
    live, fast, rest = [], [], []
    for item in items:
        if item.nodeid.startswith("tests/live/"):
            live.append(item)
        elif item.nodeid.startswith(("tests/unit/", "tests/arch/")):
            fast.append(item)
        else:
            rest.append(item)
    order, j = [], 0
    for k, item in enumerate(rest):
        while j < len(live) and j * len(rest) <= k * len(live):
            order.append(live[j])
            j += 1
        order.append(item)
    items[:] = order + live[j:] + fast


def pytest_runtest_logreport(report):
    cost = _PHASES.setdefault(phase_of(report.nodeid), [0, 0.0, float("inf"), 0.0])
    cost[0] += report.when == "call"
    cost[1] += report.duration
    start, stop = getattr(report, "start", 0.0), getattr(report, "stop", 0.0)
    if start:
        cost[2] = min(cost[2], start)
        cost[3] = max(cost[3], stop)


def pytest_terminal_summary(terminalreporter):
    """`phase NAME: N tests, S test-seconds, in the run's wall clock A-B s`."""
    if not _PHASES:
        return
    tr = terminalreporter
    t0 = _SESSION_START[0] if _SESSION_START else 0.0
    tr.section("what each phase costs (summed seconds; when it ran, in the run's clock)")
    order = sorted(_PHASES, key=lambda p: (p.startswith("live"), p.startswith("contract"), p))
    for name in order:
        tests, seconds, first, last = _PHASES[name]
        when = f"{first - t0:6.0f}-{last - t0:.0f} s" if first != float("inf") else ""
        tr.write_line(f"phase {name:16} {int(tests):5} tests {seconds:8.1f} test-s  {when}")


@pytest.fixture
def short_tmp():
    """A private directory with a short path, removed afterwards: for a TMUX_TMPDIR (a
    unix socket's path has ~107 bytes, and pytest's temp paths, under pytest-xdist's
    worker directories, leave too few of them)."""
    import shutil

    path = Path(tempfile.mkdtemp(prefix="tma-", dir="/tmp"))
    path.chmod(0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)

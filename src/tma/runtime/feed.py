"""One row feed under the long-running surfaces (wait, subscribe; the picker and watch).

Each of them runs poll cycles for as long as it lives, and each needs the same policy
around them, kept here once:
- the config is re-read every tick but the first (the Session read it just before);
  a broken file keeps the last good config, and its error is the tick's problem (on
  stderr when it changes, for the surfaces that own one);
- a tmux that is slow to answer costs a tick, not the run: said once on stderr (wait,
  subscribe), or every tmux error but a lost server is the tick's problem (the picker,
  which owns the terminal); NoServer always reaches the error boundary (exit 1);
- the cycle's complaints and each broken user manifest go to stderr once, however
  many ticks repeat them (none for the picker: stderr is its screen);
- repo and branch labels are re-read every `git_every` seconds (branches move), never
  on a tick that does not produce (the picker's fast first frame);
- `pause` sleeps to the next tick boundary counted from the first tick, so ticks do
  not drift and a slow cycle skips the ticks it overran.

`Wakes` is the other half of a surface that follows this server's daemon: its push
(`TMAS`), a hint to cycle now and never data.
"""

from __future__ import annotations

import select
import socket
import time

from tma.runtime import rundir
from tma.tmux.adapter import NoServer, Timeout, TmuxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from tma.runtime.cycle import Result
    from tma.runtime.git import GitInfo
    from tma.runtime.session import Session

COALESCE_S = 0.1  # wakes within 100 ms make one cycle
CONNECT_S = 2.0


class Tick:
    """One tick's answer. `result`: the CycleResult (None when tmux failed this tick);
    `rows`: the rows the selector keeps, in surface order; `git`: the repo labeller
    they were selected with (None before the first producing tick); `problem`: what
    went wrong this tick, in one line ('' when nothing did)."""

    __slots__ = ("result", "rows", "git", "problem")

    def __init__(self, result, rows: list, git, problem: str) -> None:
        self.result, self.rows, self.git, self.problem = result, rows, git, problem


class Feed:
    """The rows of `session`'s server as `sel` keeps them, one poll cycle a tick.

    `slow`: the stderr line for a tmux that timed out (said once); only a timeout is
    survived. None: the surface owns the terminal, nothing goes to stderr, and every
    tmux error but NoServer is survived and becomes the tick's problem. `git_every`:
    seconds between re-reads of the repo labels (0: every tick). `every`: the tick
    length `pause` keeps. `clock`/`sleep`: a test's."""

    def __init__(self, session: Session, sel, *, slow: str | None = None,
                 git_every: float = 0.0, every: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] = time.sleep) -> None:
        self.session, self.sel, self.slow = session, sel, slow
        self.git_every, self.every = git_every, every
        self.clock, self.sleep = clock, sleep
        self.loud = slow is not None
        self.ticks = 0
        self.start = 0.0
        self.result: Result | None = None  # the last good cycle's (the picker keeps drawing it)
        self.git: GitInfo | None = None
        self.git_at = 0.0
        self.config_error: str | None = None
        self._said: set[str] = set()

    @property
    def cfg(self):
        return self.session.config

    def say(self, msg: str) -> None:
        """A complaint on stderr, each distinct line once (per-tick reloads repeat them)."""
        if msg not in self._said:
            self._said.add(msg)
            self._err(msg)

    def _err(self, msg: str) -> None:
        self.session.warn(msg if msg.endswith("\n") else msg + "\n")

    def tick(self, produce: bool = True) -> Tick:
        if self.ticks == 0:
            self.start = self.clock()
        problem = self._reload() if self.ticks else ""
        self.ticks += 1
        try:
            result = self.session.cycle(produce=produce, report=self.loud,
                                        warn=self.say if self.loud else None)
        except NoServer:
            raise
        except TmuxError as exc:
            if self.slow is None:
                return Tick(None, [], self.git, f"tmux: {exc}")
            if not isinstance(exc, Timeout):
                raise  # cli/main.py reports it (exit 1)
            self.say(self.slow)
            return Tick(None, [], self.git, problem)
        self.result = result
        if produce and (self.git is None or self.clock() - self.git_at >= self.git_every):
            from tma.runtime.git import GitInfo

            self.git, self.git_at = GitInfo(), self.clock()
        return Tick(result, self.rows(result), self.git, problem)

    __next__ = tick

    def __iter__(self):
        return self

    def rows(self, result=None) -> list:
        """The rows the selector keeps of `result` (the last good cycle's by default);
        none while the selector needs repo labels that are not read yet."""
        result = result if result is not None else self.result
        if result is None or (self.sel is not None and self.sel.needs_git and self.git is None):
            return []
        return self.session.select(result.rows, self.sel, self.git)

    def in_scope(self):
        """The selector as a predicate on a row (None for an empty selector)."""
        sel, git = self.sel, self.git
        if sel is None or sel.empty:
            return None
        return lambda row: sel.matches(row, git)

    def _reload(self) -> str:
        error = self.session.reload_config()
        if error is not None and error != self.config_error and self.loud:
            self._err(error)
        self.config_error = error
        return error or ""

    def pause(self, deadline: float | None = None) -> None:
        """Sleep to the next tick boundary counted from the first tick (skipping any a
        slow cycle overran), never past `deadline` (a clock() time): the last cycle
        runs there."""
        now = self.clock()
        wake = self.start + (int((now - self.start) / self.every) + 1) * self.every
        if deadline is not None:
            wake = min(wake, deadline)
        self.sleep(max(0.0, wake - self.clock()))


class Closed(Exception):
    """The reader of the watched output went away."""


class Wakes:
    """This server's daemon's push: after `TMAS` it writes one 0x12 byte per
    state-affecting loop iteration. `wait` also watches `out_fd` (the surface's
    stdout) and raises Closed when its reader leaves."""

    def __init__(self, sock_path: str, out_fd: int | None = None) -> None:
        self.sock_path, self.out_fd = sock_path, out_fd
        self.sock: socket.socket | None = None

    def probe(self) -> bool:
        """Subscribe when this server's daemon listens (the user's, answering); the
        connection is kept. True when subscribed."""
        if self.sock is not None:
            return True
        if not rundir.socket_ok(self.sock_path):
            return False  # none, or not the user's
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(CONNECT_S)
            s.connect(self.sock_path)
            if not rundir.peer_ok(s):
                raise OSError("the listener is not the user's")
            s.sendall(b"TMAS")
            if s.recv(1) != b"\x11":
                raise OSError("not subscribed")
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        self.sock = s
        return True

    def wait(self, secs: float, sock: bool = False) -> bool:
        """Sleep up to secs, or until the daemon pushes (True; only with `sock`)."""
        poller = select.poll()
        if self.out_fd is not None:
            try:
                poller.register(self.out_fd, 0)  # POLLERR/POLLHUP: the reader left
            except (OSError, ValueError):
                pass
        fd = self.sock.fileno() if sock and self.sock is not None else None
        if fd is not None:
            poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + secs
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for got, ev in poller.poll(left * 1000):
                if got == fd:
                    return True
                if ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    raise Closed

    def settle(self) -> None:
        """After a wake: swallow it and any within COALESCE_S; a daemon that went away
        is dropped (the surface polls from here)."""
        if self._drain():
            self.wait(COALESCE_S)
            if self._drain():
                return
        self.close()

    def _drain(self) -> bool:
        """Read every pending wake byte; False when the daemon closed the connection."""
        if self.sock is None:
            return False
        try:
            while True:
                if not self.sock.recv(4096):
                    return False
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

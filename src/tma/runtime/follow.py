"""Following this tmux server's daemon, for a process that streams rows to others
(`tma serve --stdio`'s subscription, `tma web`'s event stream): when to read next, and
the daemon's push that says a read is due.

- `Follow`: the daemon's push (`TMAS`, one wake byte per state-affecting loop iteration,
  coalesced over feed.COALESCE_S), while one runs. A wake is the cue to read the stamps
  the daemon wrote (`Cycle.run(produce=False)`: one listing, no capture), so however many
  clients a streaming process serves, the host pays one listing per wake and no
  detection. Looked for at the start and every PROBE_S while none runs; one that goes
  away is dropped at once (the next read is the process's own cycle).
- `Plan`: a full read every interval (the own cycle, or the belt read while following
  the daemon), at once on the daemon's wake, and without a daemon the stamps alone every
  STAMPS_MS in between (a hook's stamp, written by `tma event`, reaches the stream
  without waiting for the cycle).

Both were serve's own; `tma web` follows the daemon the same way, so they live here,
under both (tma.runtime.fleet.serve, tma.runtime.web).
"""

from __future__ import annotations

import time

from tma.runtime import daemon_files
from tma.runtime.feed import Wakes
from tma.tmux import control

#: How often a process without the daemon looks for one (a daemon started later is
#: followed from then on).
PROBE_S = 5.0
#: Without a daemon, how often the stamps alone are read between the own cycles (one
#: listing, no capture): hooks stamp at once, and this is how soon a stream sees it.
STAMPS_MS = 500


class Plan:
    """When the stream reads next (see the module's docstring)."""

    def __init__(self, interval_ms: int, stamps_ms: int = STAMPS_MS) -> None:
        self.interval_ms, self.stamps_ms = interval_ms, stamps_ms
        self.due = self.peek = 0

    def timeout(self, following: bool) -> float:
        """Seconds until the next read is due."""
        now = now_ms()
        self.due = self.due or now + self.interval_ms
        self.peek = self.peek or now + self.stamps_ms
        at = self.due if following or self.stamps_ms >= self.interval_ms else min(self.due,
                                                                                  self.peek)
        return max(0, at - now) / 1000

    def what(self, woke: bool, following: bool) -> str:
        """'full', 'stamps' or '' (nothing to read now); the next times are set."""
        now = now_ms()
        if woke or now >= self.due:
            self.due, self.peek = now + self.interval_ms, now + self.stamps_ms
            return "full"
        if not following and self.stamps_ms < self.interval_ms and now >= self.peek:
            self.peek = now + self.stamps_ms
            return "stamps"
        return ""


class Follow:
    """This server's daemon's push (`TMAS`), while one runs: a wake (coalesced over
    feed.COALESCE_S) is the cue to read its stamps, so no client costs a detection of
    its own. `who` names the process in its log lines ("tma serve")."""

    def __init__(self, session, socket_path: str | None, who: str = "tma serve") -> None:
        self.session, self.socket_path, self.who = session, socket_path, who
        self.wakes: Wakes | None = None
        self.probe_at = 0.0

    @property
    def on(self) -> bool:
        return self.wakes is not None and self.wakes.sock is not None

    @property
    def fd(self) -> int:
        sock = self.wakes.sock if self.wakes is not None else None
        return sock.fileno() if sock is not None else -1

    def probe(self, log) -> bool:
        self.probe_at = time.monotonic() + PROBE_S
        if self.wakes is None:
            path = self.socket_path
            if not path:
                try:
                    path, _pid = control.server_facts(self.session.server)
                except Exception:  # no server (yet): looked for again later
                    return False
                self.socket_path = path
            self.wakes = Wakes(daemon_files.Files(path).sock)
        if self.wakes.probe():
            log(f"{self.who}: following this host's daemon (no cycle of its own)")
            return True
        return False

    def settle(self, log) -> bool:
        """After the daemon's socket turned readable (a wake, or the daemon went away:
        either way the stream reads now, an own cycle in the second case)."""
        if self.wakes is not None:
            self.wakes.settle()
        if not self.on:
            log(f"{self.who}: the daemon went away; cycling on its own")
            self.probe_at = time.monotonic() + PROBE_S
        return True

    def close(self) -> None:
        if self.wakes is not None:
            self.wakes.close()


def now_ms() -> int:
    return time.time_ns() // 1_000_000

"""`tma subscribe --json`: a stream of `ls --json` documents (or edge records), one a line.

Every line comes from this process's own poll cycle (tma.runtime.feed), whatever woke
it, so push and poll emit the same documents. With this server's daemon running the
wake is its push (`TMAS`: one 0x12 byte per state-affecting loop iteration, a hint and
never data), coalesced over 100 ms, with a 5 s belt cycle; a document is written when
it differs from the last one. Without a daemon (or after losing it) a cycle runs every
--interval and a document is written each time (--changes-only: when it differs).
A daemon is looked for at the start and every 5 s while polling; the switch either
way is silent.

With --hosts each document also carries the hosts' rows and a `hosts` array (as
`ls --json --hosts`), and --events adds the hosts' panes' edges (with `host`) and one
record per host whose state changed (tma.runtime.fleet.read: from the daemon's links,
whose changes wake the subscribers too, else a probe of the hosts at most every
max(--interval, 2 s)). A document counts as changed only when something other than the
hosts' ages moved.

Exit: 0 when stdout closes or on SIGINT/SIGTERM/SIGHUP, 1 without a tmux server (also
when it goes away) or with a broken config at the start, 2 usage.
"""

from __future__ import annotations

import math
import signal
import sys
import time

from tma.cli import common, spec
from tma.runtime import daemon_files
from tma.runtime.feed import Closed, Feed, Wakes
from tma.runtime.session import Session
from tma.tmux import control
from tma.ui import rows as render, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BELT_S = 5.0
PROBE_S = 5.0


class _Stop(BaseException):
    """A signal: the normal end (exit 0). Like KeyboardInterrupt, not an Exception: a
    read's failure handler (hosts.toml's parse) must not take it for a failure (exit 1)."""


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("subscribe", argv, session)
    if not args.json:
        raise common.UsageError("--json is required (one JSON document per line)")
    if not (math.isfinite(args.interval) and args.interval >= 1):
        raise common.UsageError(
            f"--interval needs a number of seconds >= 1, got {args.interval:g}")
    session.surface_config()

    def stop(_signo, _frame):
        raise _Stop

    for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signo, stop)
    wakes = None
    try:  # from here a signal is the normal end, whatever it interrupts
        feed = Feed(session, sel, slow="tma: tmux slow to respond; still subscribed")
        out = _Out(args.events)
        if args.hosts:
            # the fleet's modules cost every subscriber their start-up: only for the hosts
            from tma.runtime.fleet import hosts, read as fleet_read

            try:
                out.follow = fleet_read.Follow(session, probe_s=max(fleet_read.PROBE_S,
                                                                    args.interval))
                out.follow.look()  # a broken hosts file: exit 1 now
            except hosts.HostError as exc:
                common.err(f"tma: {exc}")
                return common.FAIL
            out.sel = sel
        socket_path, _pid = control.server_facts(session.server)  # NoServer: exit 1
        wakes = Wakes(daemon_files.Files(socket_path).sock, _stdout_fd())
        wakes.probe()
        out.tick(feed, force=True)
        next_probe = time.monotonic() + PROBE_S
        while True:
            if wakes.sock is not None:  # the daemon's push, or the belt
                if wakes.wait(BELT_S, sock=True):
                    wakes.settle()  # a daemon that went away: poll from here, now
                out.tick(feed, force=False)
                next_probe = time.monotonic() + PROBE_S
                continue
            wakes.wait(args.interval)
            out.tick(feed, force=not args.changes_only)
            if time.monotonic() >= next_probe:
                wakes.probe()
                next_probe = time.monotonic() + PROBE_S
    except (_Stop, Closed, BrokenPipeError):
        common.quiet_stdout()
    finally:
        if wakes is not None:
            wakes.close()
    return 0


def _stdout_fd() -> int | None:
    try:
        return sys.stdout.fileno()
    except (OSError, ValueError):
        return None


class _Out:
    """What a tick writes: the document (when forced or changed) or the edge records."""

    def __init__(self, events: bool) -> None:
        self.events = events
        self.last_key: str | None = None  # the last document as a change is judged
        self.last_states: dict | None = None
        self.follow: Any = None  # --hosts: tma.runtime.fleet.read.Follow
        self.sel: Any = None
        self.last_remote: dict | None = None
        self.last_hosts: dict | None = None

    def tick(self, feed, force: bool) -> None:
        tick = feed.tick()
        if tick.result is None:
            return  # tmux slow: said once, no document
        doc = render.document(tick.rows, server=tick.result.snapshot.socket_path,
                              git=tick.git)
        view = None
        remote: list[dict] = []
        if self.follow is not None:
            from tma.runtime.fleet import read as fleet_read, view as fleet_view

            view = self.follow.look()
            remote = [d for d in view.rows if fleet_view.matches(d, self.sel)]
        if self.events:
            now = common.now_ms()
            self.last_states, records = render.edges(self.last_states, doc["agents"], now)
            if view is not None:
                self.last_hosts, said = fleet_read.host_records(self.last_hosts, view, now)
                self.last_remote, moved = fleet_read.row_edges(self.last_remote, view,
                                                               remote, now)
                records += said + moved
            for rec in records:
                self._write(text.dumps(rec))
            return
        if view is not None:
            doc["agents"] += remote
            doc["hosts"] = view.hosts
        line = text.dumps(doc)
        key = _ageless(doc) if view is not None else line
        if force or key != self.last_key:
            self._write(line)
        self.last_key = key

    @staticmethod
    def _write(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _ageless(doc: dict) -> str:
    """The document as a change is judged, without the hosts' ages (they move every
    tick; a change is what a host said, not how long ago)."""
    agents = [{k: v for k, v in d.items() if k != "age_ms"} if "stale" in d else d
              for d in doc["agents"]]
    hosts_ = [{k: v for k, v in h.items() if k not in ("age_ms", "retry_in_ms")}
              for h in doc.get("hosts", ())]
    return text.dumps(dict(doc, agents=agents, hosts=hosts_))

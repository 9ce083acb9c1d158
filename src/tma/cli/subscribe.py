"""`tma subscribe --json`: a stream of `ls --json` documents (or edge records), one a line.

Every line comes from this process's own poll cycle, whatever woke it, so push and
poll emit the same documents. With this server's daemon running the wake is its push
(`TMAS`: one 0x12 byte per state-affecting loop iteration, a hint and never data),
coalesced over 100 ms, with a 5 s belt cycle; a document is written when it differs
from the last one. Without a daemon (or after losing it) a cycle runs every
--interval and a document is written each time (--changes-only: when it differs).
A daemon is looked for at the start and every 5 s while polling; the switch either
way is silent.

Exit: 0 when stdout closes or on SIGINT/SIGTERM/SIGHUP, 1 without a tmux server (also
when it goes away) or with a broken config at the start, 2 usage.
"""

from __future__ import annotations

import math
import os
import select
import signal
import sys
import time

from tma.cli import common, spec

COALESCE_S = 0.1
BELT_S = 5.0
PROBE_S = 5.0
CONNECT_S = 2.0
VOCAB_DONE = "done"


class _Stop(Exception):
    """A signal or a closed stdout: the subscriber's normal end (exit 0)."""


def _interval(value: float) -> float:
    if not (math.isfinite(value) and value >= 1):
        raise common.UsageError(f"--interval needs a number of seconds >= 1, got {value:g}")
    return value


def main(argv: list[str]) -> int:
    g, sel, args = spec.parse("subscribe", argv)
    if not args.json:
        raise common.UsageError("--json is required (one JSON document per line)")
    interval = _interval(args.interval)
    cfg = common.load_config(g, surface=True)
    server = common.server(g, cfg)

    def stop(_signo, _frame):
        raise _Stop

    for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signo, stop)
    feed = Feed(g, cfg, sel, server, interval, args.changes_only, args.events)
    try:
        feed.run()
    except (_Stop, BrokenPipeError):
        common.quiet_stdout()
    finally:
        feed.close()
    return 0


class Feed:
    def __init__(self, g, cfg, sel, server, interval: float, changes_only: bool,
                 events: bool) -> None:
        self.g, self.cfg, self.sel, self.server = g, cfg, sel, server
        self.interval, self.changes_only, self.events = interval, changes_only, events
        self.sock = None
        self.sock_path = ""
        self.last_doc: str | None = None
        self.last_states: dict[str, tuple[str, dict]] | None = None
        self.config_error = ""
        self.warned: set[str] = set()

    # ------------------------------------------------------------ the loop
    def run(self) -> None:
        from tma.runtime import daemon_files
        from tma.tmux import control

        socket_path, _pid = control.server_facts(self.server)  # NoServer: exit 1
        self.sock_path = daemon_files.Files(socket_path).sock
        self._probe()
        self._cycle(force=True)
        next_probe = time.monotonic() + PROBE_S
        while True:
            if self.sock is not None:
                self._push_turn()
                next_probe = time.monotonic() + PROBE_S
                continue
            self._wait(self.interval)
            self._cycle(force=not self.changes_only)
            if time.monotonic() >= next_probe:
                self._probe()
                next_probe = time.monotonic() + PROBE_S

    def _push_turn(self) -> None:
        """Wait for a wake (or the belt); cycle; write the document if it changed."""
        woke = self._wait(BELT_S, self.sock)
        if woke:
            if not self._drain():
                self._drop()  # the daemon went away: poll from here, starting now
            else:
                self._wait(COALESCE_S)  # wakes within 100 ms make one cycle
                if not self._drain():
                    self._drop()
        self._cycle(force=False)

    def _wait(self, secs: float, sock=None) -> bool:
        """Sleep up to secs, or until sock is readable (True). A closed stdout ends it."""
        poller = select.poll()
        try:
            poller.register(sys.stdout.fileno(), 0)  # POLLERR/POLLHUP: the reader left
        except (OSError, ValueError):
            pass
        if sock is not None:
            poller.register(sock.fileno(), select.POLLIN)
        deadline = time.monotonic() + secs
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for fd, ev in poller.poll(left * 1000):
                if sock is not None and fd == sock.fileno():
                    return True
                if ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    raise _Stop

    # ------------------------------------------------------------ the daemon
    def _probe(self) -> None:
        import socket

        from tma.runtime import rundir

        if not rundir.socket_ok(self.sock_path):
            return  # none, or not the user's: poll (the documents are read here anyway)
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
            return
        s.setblocking(False)
        self.sock = s

    def _drain(self) -> bool:
        """Read every pending wake byte; False when the daemon closed the connection."""
        try:
            while True:
                data = self.sock.recv(4096)
                if not data:
                    return False
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False

    def _drop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def close(self) -> None:
        self._drop()

    # ------------------------------------------------------------ a cycle
    def _warn(self, msg: str) -> None:
        if msg not in self.warned:
            self.warned.add(msg)
            common.err(msg)

    def _reload(self) -> None:
        from tma.runtime.config import ConfigError
        from tma.runtime.config import load as load_config

        try:
            self.cfg = load_config(self.g.config)
            self.config_error = ""
        except ConfigError as exc:  # keep the last good config, say so once
            if str(exc) != self.config_error:
                self.config_error = str(exc)
                common.err(self.config_error)

    def _cycle(self, force: bool) -> None:
        from tma.runtime.cycle import Cycle
        from tma.runtime.git import GitInfo
        from tma.tmux.adapter import Timeout
        from tma.ui import rows as render

        self._reload()
        try:
            result = Cycle(self.server, self.cfg, self.g.manifest_dir,
                           warn=self._warn).run(current=True)
        except Timeout:
            self._warn("tma: tmux slow to respond; still subscribed")
            return
        git = GitInfo()
        from tma.cli import cycle_run

        rows = cycle_run.select(result.rows, self.sel, git)
        server, host = result.snapshot.socket_path, os.uname().nodename
        dicts = [render.row_dict(r, server=server, host=host, git=git) for r in rows]
        if self.events:
            self._edges(dicts)
        else:
            self._snapshot({"schema": 1, "agents": dicts}, force)

    def _snapshot(self, doc: dict, force: bool) -> None:
        from tma.ui import text

        line = text.dumps(doc)
        if force or line != self.last_doc:
            self._write(line)
        self.last_doc = line

    def _edges(self, dicts: list[dict]) -> None:
        from tma.ui import text

        now = common.now_ms()
        states = {d["pane"]: (VOCAB_DONE if d["done"] else d["state"], d) for d in dicts}
        before = self.last_states
        self.last_states = states
        if before is None:
            return  # the first cycle is the baseline: no synthetic edges
        lines = []
        for pane, (state, d) in states.items():
            prior = before.get(pane)
            if prior is None or prior[0] != state:
                lines.append(edge(now, d, prior[0] if prior else "", state))
        for pane, (state, d) in before.items():
            if pane not in states:
                lines.append(edge(now, d, state, ""))
        for rec in lines:
            self._write(text.dumps(rec))

    @staticmethod
    def _write(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def edge(now: int, row: dict, before: str, after: str) -> dict:
    """One edge record (schemas/subscribe-events.schema.json)."""
    return {"schema": 1, "at_ms": now, "pane": row["pane"], "agent": row["agent"],
            "from": before, "to": after, "detail": row["detail"] if after else None,
            "locator": row["locator"], "repo": row["repo"], "branch": row["branch"]}

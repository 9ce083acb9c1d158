"""The daemon's loop: control clients in, one-pane reads and sweeps out.

Single-threaded: one `poll` over the control clients, the parts' fds (the socket is
tma.daemon.server's) and the signal pipe, with a timeout that is the nearest deadline
(an edge, the rollup recompute, the pool recheck, the sweep, the config watch, a
part's). Every read and write goes through the poll cycle (tma.runtime.cycle): a
quiet edge is `Cycle.run(focus=...)` over the panes that fell due, the sweep is the
plain full cycle. Nothing here folds or renders a stamp itself.

The config file and the manifest files are looked at every CONFIG_WATCH_MS (by stat,
as the fleet watches hosts.toml): an edit is reloaded once the file has held still for
SETTLE_MS (an editor's save is not always one write), so a setting takes effect
without `tma reload` (SIGHUP, which still reloads at once). A reload is all or nothing:
an edit that does not load keeps the running config, and says so in one log line and
the status document's last_error, once per edit.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from tma import __version__
from tma.core import codec, states
from tma.core.paths import here
from tma.daemon import parts as parts_mod
from tma.daemon.demotion import Demotion
from tma.daemon.edges import Edges
from tma.daemon.fleet import Fleet
from tma.daemon.notifier import Notifier
from tma.daemon.segment import Segment
from tma.daemon.server import Server
from tma.runtime import config, cycle as cycle_mod, daemon_files, manifests
from tma.tmux import control, read
from tma.tmux.adapter import NoServer, TmuxError

SWEEP_SECS = 45
QUIET_MS = 600
ONSET_MS = 150
MIN_GAP_MS = 250
RECHECK_MS = 1000  # pool recheck while no session is watched (and the liveness probe)
ROLLUP_DELAY_MS = 100
DEMOTE_EDGES = 5
CONFIG_WATCH_MS = 2000  # the config and manifest files are looked at this often
SETTLE_MS = 200  # an edit is reloaded once its file has not changed for this long


def _mono() -> int:
    return time.monotonic_ns() // 1_000_000


def _wall() -> int:
    return time.time_ns() // 1_000_000


class Settings:
    """The [daemon] keys the loop uses, defaulted (tma.runtime.config checks their types
    and ranges: a surface with autostart must refuse what the daemon would)."""

    def __init__(self, cfg) -> None:
        d = cfg.daemon or {}
        self.sweep_ms = d.get("sweep_secs", SWEEP_SECS) * 1000
        self.quiet_ms = d.get("quiet_ms", QUIET_MS)
        self.recheck_ms = d.get("zero_member_recheck_secs", RECHECK_MS // 1000) * 1000
        self.demote_edges = d.get("demote_edges", DEMOTE_EDGES)


def build_parts(daemon) -> list[parts_mod.Part]:
    """Every part the daemon runs, in the order they hear of a read: the server first
    (its history and wakes), the notifier before the segment so a rung pane's marker is
    in the segment's next listing, the fleet before the segment too (the segment counts
    the hosts' rows it holds)."""
    return [Server(daemon), Notifier(daemon), Fleet(daemon), Segment(daemon)]


class Daemon:
    def __init__(self, server, cfg, manifest_dir, paths, server_pid: str, log,
                 config_path: str | None = None, instance: str = "") -> None:
        self.server = server
        self.cfg = cfg
        self.config_path = config_path  # as named at start (--config), re-read on SIGHUP
        self.config_loaded_at = _wall()  # doctor: a config edited after this is not in use
        self.manifest_dir = manifest_dir
        # the files' stats the running config and manifests were loaded from, and the
        # stats of the last reload tried (a broken edit is tried once, not every watch)
        self.config_loaded = self.config_tried = self.config_stat()
        self._next_watch = _mono() + CONFIG_WATCH_MS
        self._settling: tuple | None = None  # an edit seen, waiting for it to hold still
        self.settings = Settings(cfg)
        self.paths = paths
        self.server_pid = server_pid
        self.replaced = False  # the server at this socket is another instance now
        self.instance = instance  # "<pid>:<start_time>" of the server it serves

        self.package = daemon_files.this_tma()  # which installed tma this daemon runs
        self.log = log
        self.edges = Edges(self.settings.quiet_ms, ONSET_MS, MIN_GAP_MS)
        self.demotion = Demotion(self.settings.demote_edges)
        self.cycle = cycle_mod.Cycle(server, cfg, manifest_dir, warn=log)
        self.clients: dict[str, control.ControlClient] = {}
        self.stamps: dict[str, codec.Stamp] = {}  # as of the daemon's last read
        self._last_rows: list = []  # that read's rows (tma.runtime.cycle.Row)
        self.stop = False
        self.reload_wanted = False
        self.last_error = ""
        self.started = _wall()
        self.counts = {"reads": 0, "captures": 0, "sweeps": 0, "edges": 0, "reloads": 0,
                       "reload_errors": 0}
        self._reconcile = True
        self._retry: dict[str, int] = {}  # session id -> when to try attaching again
        self._rollup_due: int | None = None
        self._next_check = 0
        self._next_sweep = 0
        self._sig_r = -1
        self.parts: list[parts_mod.Part] = build_parts(self)

    # ------------------------------------------------------------ lifecycle
    def serve(self) -> int:
        self._signals()
        try:
            self._pool()
            self._sweep(everything=True)  # a predecessor may have died mid-transition
            while not self.stop:
                self._guarded_iteration()
        except NoServer:
            self.log("tma daemon: the tmux server is gone; exiting")
        finally:
            self._shutdown()
        return 0

    def _signals(self) -> None:
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        self._sig_r = r
        signal.set_wakeup_fd(w)

        def stop(_signo, _frame):
            self.stop = True

        def reload(_signo, _frame):
            self.reload_wanted = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)

    def _shutdown(self) -> None:
        for part in self.parts:
            self._guard(part, part.close)
        for client in self.clients.values():
            client.close()
        self.clients.clear()

    # ------------------------------------------------------------ the loop
    def _guarded_iteration(self) -> None:
        """One iteration; a tmux that refuses or times out once (a loaded machine) is
        logged and retried, not fatal. A server that is gone ends the daemon."""
        try:
            self._iteration()
        except NoServer:
            raise
        except TmuxError as exc:
            self.last_error = f"tmux: {exc}"
            self.log(f"tma daemon: {self.last_error}; retrying")
            self._reconcile = True
            time.sleep(0.5)

    def _iteration(self) -> None:
        self._wait_and_dispatch()
        if self.stop:
            return
        if self.reload_wanted:
            self._reload()
        if _mono() >= self._next_watch:
            self._watch_config()
        now = _mono()
        if self._reconcile or now >= self._next_check:
            self._pool()
        due = self.edges.take_due(now)
        if due:
            self._read(due)
        if self._rollup_due is not None and _mono() >= self._rollup_due:
            self._rollups()
        if _mono() >= self._next_sweep:
            self._sweep()
        now = _mono()
        for part in self.parts:
            when = part.deadline()
            if when is not None and when <= now:
                self._guard(part, part.tick, now)

    def _wait_and_dispatch(self) -> None:
        """One `poll` until the nearest deadline; hand each ready fd to its owner."""
        timeout = max(10, self._next_deadline() - _mono())
        poller = select.poll()
        poller.register(self._sig_r, select.POLLIN)
        by_fd = {c.fileno(): c for c in self.clients.values() if c.alive}
        by_part = {fd: part for part in self.parts for fd in part.fds()}
        for fd in [*by_fd, *by_part]:
            poller.register(fd, select.POLLIN)
        for fd, _ev in poller.poll(timeout):
            if fd == self._sig_r:
                self._drain_signals()
            elif fd in by_fd:
                self._events(by_fd[fd].read_events())
            elif fd in by_part:
                self._guard(by_part[fd], by_part[fd].ready, fd)

    def _guard(self, part, method, *args) -> None:
        """Run one part's hook; its failure is logged, never the daemon's end."""
        try:
            method(*args)
        except NoServer:
            raise
        except Exception as exc:  # a part's bug must not stop detection
            self.last_error = f"{part.name}: {type(exc).__name__}: {exc}"
            self.log(f"tma daemon: {self.last_error}")

    def _next_deadline(self) -> int:
        times = [self._next_sweep, self._next_check, self._next_watch]
        for part in self.parts:
            due = part.deadline()
            if due is not None:
                times.append(due)
        nxt = self.edges.next_due()
        if nxt is not None:
            times.append(nxt)
        if self._rollup_due is not None:
            times.append(self._rollup_due)
        if self._reconcile:
            times.append(0)
        return min(times)

    def _drain_signals(self) -> None:
        try:
            while os.read(self._sig_r, 512):
                pass
        except BlockingIOError:
            pass

    def _events(self, events: list[tuple]) -> None:
        now = _mono()
        for event in events:
            kind = event[0]
            if kind == control.OUTPUT:
                stamp = self.stamps.get(event[1])
                self.edges.output(event[1], now,
                                  stamp is not None and stamp.state == states.WORKING,
                                  agent=stamp is not None)
            elif kind in (control.SESSIONS_CHANGED, control.EXIT, control.EOF):
                self._reconcile = True
            elif kind in (control.WINDOW_CLOSE, control.LAYOUT, control.WINDOW_ADD):
                self._rollup_due = now + ROLLUP_DELAY_MS
            elif kind == control.PANE_MODE:
                self.edges.poke(event[1], now)

    # ------------------------------------------------------------ the config
    def config_stat(self) -> tuple:
        """The config file's and every manifest file's stat: what the daemon loads its
        settings, rendering and identification from (a change means a reload is due)."""
        try:
            st = os.stat(here().config_file(self.config_path or None))
            conf: tuple = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            conf = ()
        return conf, manifests.listing(self.manifest_dir)

    def config_changed(self) -> bool:
        """Do the files differ from what the running config was loaded from? Then look
        at them again now (the watch reloads them once they hold still)."""
        if self.config_stat() == self.config_loaded:
            return False
        self._next_watch = min(self._next_watch, _mono())
        return True

    def _watch_config(self) -> None:
        """The config watch: an edit since the last load (or the last try) is reloaded
        once the files have held still for SETTLE_MS."""
        now = _mono()
        self._next_watch = now + CONFIG_WATCH_MS
        seen = self.config_stat()
        if seen == self.config_tried:
            self._settling = None
            return
        if seen != self._settling:  # still being written, maybe: look again shortly
            self._settling = seen
            self._next_watch = now + SETTLE_MS
            return
        self._settling = None
        self._reload(why=f"{here().config_file(self.config_path or None)} changed: ")

    def _reload(self, why: str = "") -> None:
        """Re-read the config and the manifests, all or nothing: anything broken keeps
        what runs now, and says why in the log and the status document. Control
        clients, the activity gauge and its deadlines carry over. `why`: what the log
        line starts with (the watch names the file that changed)."""
        self.reload_wanted = False
        tried = self.config_stat()  # before the read: a write during it is seen next time
        self.config_tried = tried
        try:
            cfg = config.load(self.config_path)
            settings = Settings(cfg)
            fresh = cycle_mod.Cycle(self.server, cfg, self.manifest_dir, warn=self.log)
            fresh.manifests()  # a broken bundled manifest raises here, not mid-read
            fresh.index()
        except Exception as exc:  # the daemon must outlive a bad edit of the config
            self.counts["reload_errors"] += 1
            self.last_error = f"reload kept the running config: {exc}"
            self.log(f"tma daemon: {why}{self.last_error}")
            return
        self.config_loaded = tried
        self.cfg, self.settings, self.cycle = cfg, settings, fresh
        for part in self.parts:
            self._guard(part, part.reloaded)
        self.edges.quiet_ms = settings.quiet_ms
        self.demotion.threshold = settings.demote_edges
        self._next_sweep = min(self._next_sweep, _mono() + settings.sweep_ms)
        self.counts["reloads"] += 1
        self.config_loaded_at = _wall()
        self.last_error = ""
        self.log(f"tma daemon: {why}reloaded the config and manifests")

    # ------------------------------------------------------------ sessions
    def _pool(self) -> None:
        """One control client per session: attach the new, drop the gone and the dead.
        Also the liveness probe: a failing list-sessions means the server is gone.
        While clients are attached their end of file and `%sessions-changed` say when
        to look again, so the periodic re-list runs only while none is."""
        self._reconcile = False
        now = _mono()
        pid, ids = control.session_ids(self.server)
        if pid and self.server_pid and pid != self.server_pid:
            self.log("tma daemon: the tmux server was restarted; exiting")
            self.replaced = True  # the server part stamps nothing more (tma.daemon.server)
            raise NoServer("restarted")
        for sid in [s for s, c in self.clients.items() if s not in ids or not c.alive]:
            client = self.clients.pop(sid)
            client.close()
            if sid in ids and now - client.started < 1000:
                self._retry[sid] = now + self.settings.recheck_ms  # it would not attach
        for sid in ids:
            if sid not in self.clients and self._retry.get(sid, 0) <= now:
                self._retry.pop(sid, None)
                self.clients[sid] = control.ControlClient(self.server, sid)
                self.clients[sid].started = now
        waiting = bool(self._retry) or not self.clients
        self._next_check = now + (self.settings.recheck_ms if waiting
                                  else self.settings.sweep_ms)

    # ------------------------------------------------------------ reads
    def _next_cycle(self):
        self.cycle = self.cycle.fresh()
        return self.cycle

    def _wants_read(self, pane: str, now: int, now_mono: int) -> bool:
        """Hookless, demoted or contradicted panes are read; a fresh hook claim of
        idle or blocked already says what the screen would (the hook tier has it)."""
        stamp = self.stamps.get(pane)
        decay = self.cfg.hook_decay_secs * 1000
        if self.edges.quiet(pane, now_mono):
            # only a quiet edge counts toward demotion (not an onset or a burst
            # re-read: one burst is one edge); a blocked claim stands for its own,
            # longer window
            self.demotion.edge(pane, stamp, now, cycle_mod.claim_window_ms(self.cfg, stamp))
        if stamp is None or stamp.source != states.SOURCE_HOOK:
            return True
        if stamp.state not in (states.IDLE, states.BLOCKED):
            return True  # a working claim the quiet screen may contradict
        return now - stamp.evidence_at > decay

    def _read(self, panes: list[str]) -> None:
        wall = _wall()
        mono = _mono()
        panes = [p for p in panes if self._wants_read(p, wall, mono)]
        if not panes:
            self.refresh()  # nothing to capture, but a hook may have stamped: parts hear it
            return
        self.counts["edges"] += len(panes)
        try:
            result = self._next_cycle().run(focus=panes,
                                            demoted=self.demotion.demoted(panes))
        except NoServer:
            raise
        except TmuxError as exc:  # a pane closed mid-read: the next edge or sweep repairs
            self.log(f"tma daemon: read failed: {exc}")
            return
        self.counts["reads"] += 1
        self.counts["captures"] += result.stats.captures
        self._remember(result, panes)
        now_mono, now_wall = _mono(), _wall()
        dwell = self.cfg.dwell_secs * 1000
        for row in result.rows:
            pane = row.pane.pane_id
            if pane in panes and row.state == states.WORKING \
                    and self.edges.quiet(pane, now_mono):
                wait = max(0, row.stamp.evidence_at + dwell + 100 - now_wall)
                self.edges.follow_up(pane, now_mono + min(wait, dwell + 100), now_mono)

    def refresh(self) -> None:
        """List every pane's stamp as it stands, reading no screen (an empty focus): a
        part stamped panes (handed-off hook events) and every part hears the change."""
        try:
            result = self._next_cycle().run(focus=())
        except NoServer:
            raise
        except TmuxError as exc:
            self.log(f"tma daemon: read failed: {exc}")
            return
        self.counts["reads"] += 1
        self._remember(result)

    def _remember(self, result, focus=None) -> None:
        """Every read lists every pane, so its rows are the whole picture: the parts
        hear what changed since the previous read, whoever wrote it."""
        rows = [r for r in result.rows if not r.foreign]
        now = _wall()
        changed = parts_mod.transitions(self.stamps, rows, now)
        self.stamps = {r.pane.pane_id: r.stamp for r in rows}
        self.demotion.seen(self.stamps)
        self._last_rows = rows
        for part in self.parts:
            self._guard(part, part.on_read, rows, changed, now)

    def _rollups(self) -> None:
        self._rollup_due = None
        snap = read.list_panes(self.server)
        lines = cycle_mod.rollup_lines(snap)
        if lines:
            self.server.source(lines)
        live = {p.pane_id for p in snap.panes}
        self.edges.keep_only(live)
        gone = {p: s for p, s in self.stamps.items() if p not in live}
        if gone:
            now = _wall()
            for pane in gone:
                del self.stamps[pane]
            changed = parts_mod.transitions(gone, [], now)
            rows = self._rows_now()
            for part in self.parts:
                self._guard(part, part.on_read, rows, changed, now)

    def _rows_now(self) -> list:
        """The last read's rows less the panes gone since (for a part told of a close)."""
        return [r for r in self._last_rows if r.pane.pane_id in self.stamps]

    def _sweep(self, everything: bool = False) -> None:
        """The full poll cycle: rediscovers agents that never announced themselves and
        repairs drift. Its latency bounds an anomaly, never a normal transition. The
        first one (`everything`) reads every agent pane whatever its stamp's age: the
        stamps a killed daemon left may already be wrong, and a screen that stopped
        moving before this daemon attached sends it no quiet edge."""
        self._next_sweep = _mono() + self.settings.sweep_ms
        try:
            result = self._next_cycle().run(everything=everything)
        except NoServer:
            raise
        except TmuxError as exc:
            self.log(f"tma daemon: sweep failed: {exc}")
            return
        self.counts["sweeps"] += 1
        self.counts["captures"] += result.stats.captures
        self._remember(result)
        self.edges.keep_only({p.pane_id for p in result.snapshot.panes})

    # ------------------------------------------------------------ status (tma.daemon.server)
    def status(self) -> dict:
        return {"schema": 1, "pid": os.getpid(), "version": __version__,
                "package": self.package, "executable": sys.executable,
                "started_at": self.started, "server": self.instance,
                "sessions": sorted(self.clients),
                "quiet_ms": self.settings.quiet_ms, "sweep_ms": self.settings.sweep_ms,
                "edges_fired": self.edges.fired, "last_error": self.last_error,
                "config_loaded_at": self.config_loaded_at,
                **self.counts, **self.demotion.status(),
                **{k: v for part in self.parts for k, v in part.status().items()}}

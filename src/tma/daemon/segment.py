"""The status-line segment, kept in a tmux option so the status line spawns nothing.

While the daemon runs it keeps two server options:

    @tma_status_segment   the bytes `tma status` prints for the tmux format
    @tma_status_until     epoch seconds until which the segment may be believed

and the documented status-right reads them with a format instead of a `#()` job:

    #{?#{e|<:%s,#{@tma_status_until}},#{@tma_status_segment},#(tma status)}

tmux applies strftime to status-right before expanding formats, so `%s` there is the
current epoch second; tmux expands only the branch a conditional takes, so while the
daemon keeps `until` ahead of the clock no `tma status` job runs at all. Setting any
option makes tmux redraw every client's status line at once, so a new segment is on
screen as soon as it is written (no `refresh-client` needed).

Staleness: `until` is pushed to now + TTL_S at every refresh: every REFRESH_MS while
some pane prints, every IDLE_REFRESH_MS while none does. A daemon that stops
cleanly unsets both (the status line falls back to `#(tma status)` at once); one
killed with -9 stops refreshing, and the first redraw after `until` has passed (the
client's `status-interval`) shows the polling form again. A stale count is therefore
never shown longer than TTL_S plus one status-interval.

Only while some status line reads it: any `set-option` makes tmux redraw every
client's status line, and a redraw re-runs `#()` jobs (a polling `#(tma status)`, a
battery or git segment). So each refresh also lists every session's status-left and
status-right; while none names the segment, the daemon writes neither option (and
unsets them if it had), and looks again every NOT_READ_MS.

What the segment counts: every pane's stamp as it stands (tma.runtime.cycle
standing_rows), read at each refresh (one spawn that also pushes the deadline), which
picks up what hooks and other writers stamped; a read of the daemon's own that changed
a stamp refreshes at once. Unlike `tma status`, reading here never refreshes a stale pane: with
the daemon running, its quiet edges and sweeps are what refresh panes.
"""

from __future__ import annotations

import time

from tma.daemon.fleet import Fleet, settings
from tma.daemon.parts import Part
from tma.install import tmux_status
from tma.runtime import cycle as cycle_mod
from tma.tmux import frame, read, write
from tma.tmux.adapter import TmuxError
from tma.ui import status as render

SEGMENT = tmux_status.SEGMENT
UNTIL = tmux_status.SEGMENT_UNTIL
REFRESH_MS = 1000  # while panes print: a hook or another writer may have stamped
IDLE_REFRESH_MS = 2000  # while none does: only the deadline needs pushing
SERVE_FRESH_MS = IDLE_REFRESH_MS + 500  # an answer to `tma status` is at most this old
SERVE_WANTED_MS = 60_000  # after a `tma status` asked, keep the segment computed this long
NOT_READ_MS = 5000  # no status line reads the segment: just look again now and then
TTL_S = 5
_STATUS_OPTIONS = ("status-left", "status-right")


def sessions_args(fr: frame.Frame) -> list[str]:
    return ["list-sessions", "-F", fr.record("L", [frame.text(o) for o in _STATUS_OPTIONS])]


def reads_segment(out: str, fr: frame.Frame) -> bool:
    """Does any session's status-left or status-right read the daemon's segment?"""
    return any(tmux_status.reads_daemon_segment(frame.untext(value))
               for rec in fr.records(out, "L", len(_STATUS_OPTIONS)) for value in rec)


status_right = tmux_status.daemon_status_right


class Segment(Part):
    name = "segment"

    def __init__(self, daemon) -> None:
        super().__init__(daemon)
        self.shown: str | None = None  # what @tma_status_segment holds (None: not written)
        self.until = 0
        self._due = 0
        self.refreshes = 0
        self.writes = 0
        self._last = 0  # monotonic ms of the last refresh
        self.reading = False  # did the last refresh see a status line that reads it?
        self.latest: str | None = None  # the segment as last computed
        self.latest_at = 0  # monotonic ms it was computed at
        self.wanted_until = 0  # `tma status` asked over the socket: keep computing it
        self._sessions_due = 0  # when to look at the status options again

    def on_read(self, rows: list, transitions: list, now: int) -> None:
        if transitions:
            self._due = 0  # a read changed a stamp: show it now

    def deadline(self) -> int | None:
        return self._due

    def reloaded(self) -> None:
        self._due = 0  # the palette may have changed
        self._sessions_due = 0
        self.latest = None

    def _printed_since(self, since: int) -> bool:
        """Has any pane printed since then? (the activity gauge is ordered by recency)"""
        panes = self.daemon.edges.panes
        if not panes:
            return False
        last = next(reversed(panes.values())).last_output
        return last is not None and last >= since

    def tick(self, now_mono: int) -> None:
        if self._due and now_mono - self._last < IDLE_REFRESH_MS \
                and not self._printed_since(self._last):
            self._due = now_mono + REFRESH_MS  # nothing printed: the deadline still holds
            return
        self._due = now_mono + REFRESH_MS
        self._last = now_mono
        server = self.daemon.server
        wall = time.time_ns() // 1_000_000
        until = wall // 1000 + TTL_S
        # one spawn, as few commands as will do: tmux logs every command it runs in its
        # message log (all releases; docs/explanation/message-log.md), so the status
        # options are looked at every NOT_READ_MS, not at each refresh, and the panes
        # are listed only while their counts are wanted
        # (one command line run directly: a `source-file -` would log one entry more)
        listing = read.Listing()
        check = now_mono >= self._sessions_due
        wanted = self.reading or now_mono < self.wanted_until
        commands = [listing.pane_args()] if wanted else []
        if check or not wanted:
            commands.append(sessions_args(listing.frame))
            self._sessions_due = now_mono + NOT_READ_MS
        if self.reading and self.shown is not None:
            commands.append(write.server_option_args(UNTIL, str(until)))
        out = server.run(*[a for c in commands for a in [";", *c]][1:])
        self.refreshes += 1
        if check or not wanted:
            self.reading = reads_segment(out, listing.frame)
        if not self.reading:
            self._withdraw()
            if now_mono >= self.wanted_until:
                self._due = now_mono + NOT_READ_MS
                self.latest = None
                return
        if not wanted:  # a status line started reading it: list the panes too
            out = server.run(*listing.pane_args())
        rows = cycle_mod.standing_rows(listing.parse(out), wall)
        segment = render.with_fleet(render.tmux(render.counts(rows), self.daemon.cfg.status),
                                    self._fleet())
        self.latest, self.latest_at = segment, now_mono
        if not self.reading:
            return
        if segment != self.shown:
            # the segment before the deadline: a fresh deadline never vouches for old counts
            server.source([write.server_option(SEGMENT, segment),
                           write.server_option(UNTIL, str(until))])
            self.shown = segment
            self.writes += 1
        self.until = until

    def _fleet(self) -> str:
        """The hosts' counts (tma.daemon.fleet), under `[fleet] status`; "" without hosts."""
        part = next((p for p in self.daemon.parts if isinstance(p, Fleet)), None)
        if part is None or not part.links or not settings(self.daemon.cfg)[0]:
            return ""
        return render.tmux(part.counts_now(), self.daemon.cfg.status)

    def poke(self) -> None:
        """The hosts' rows changed: compute the segment at the next turn."""
        self._due = 0

    def serve(self, now_mono: int) -> str | None:
        """What `tma status` would print for the tmux format, if the daemon has it fresh
        (computed within SERVE_FRESH_MS, under the config it runs with); None: the caller
        runs its own cycle. Asking keeps the segment computed for SERVE_WANTED_MS."""
        self.wanted_until = now_mono + SERVE_WANTED_MS
        if self.daemon.config_changed():
            # the config or a manifest changed and is not loaded (yet, or it does not
            # load): polling says what it says (`tma:config!` for a broken file) until the
            # daemon's watch reloads it, within a couple of seconds of a good edit
            return None
        if self.latest is None or now_mono - self.latest_at > SERVE_FRESH_MS:
            self._due = 0  # compute it now, for the next caller
            return None
        return self.latest

    def _withdraw(self) -> None:
        """No status line reads the segment: leave no option behind to redraw for."""
        if self.shown is None:
            return
        self.daemon.server.source([write.server_option_unset(UNTIL),
                                   write.server_option_unset(SEGMENT)])
        self.shown = None
        self.until = 0

    def close(self) -> None:
        """Stopping: fall back to the polling form at once (deadline first)."""
        try:
            self._withdraw()
        except TmuxError:
            pass  # the server is gone, and its options with it

    def status(self) -> dict:
        return {"segment": self.shown, "segment_until": self.until,
                "segment_refreshes": self.refreshes, "segment_writes": self.writes}

"""When to look at a pane: the activity gauge behind the daemon's captures.

Pure bookkeeping over a monotonic clock in ms (the caller passes it in). Per pane it
keeps the last `%output` instant and up to three deadlines:

- quiet edge: `quiet_ms` after the last output of a burst. One per burst: the next
  output re-arms it, firing clears it. A permission prompt is exactly where output
  stops, so this is the look that sees `blocked`.
- onset: `onset_ms` after the first output following a quiet spell, unless the pane
  is already known to be working. This is how `working` is seen while the burst is
  still going (the quiet edge would come only when it ends).
- burst re-read: on a pane known to hold an agent that is not `working`, output that
  keeps coming `burst_ms` after the pane's last read reads it again. An onset read can
  come before the agent draws its working chrome (the Enter that submits a prompt is
  the burst's first output, the spinner comes a few hundred ms later and never lets
  the burst end): without it, `working` would wait for the end of the turn. Within one
  burst the wait doubles from the second re-read on (0.5 s, 0.5 s, 1 s ... 8 s): a
  screen that keeps moving but never reads as working (an animation under idle chrome)
  is not read at the gap rate. The first two are equal because the first is often
  spent on the Enter itself (typing and Enter are one burst when the Enter follows
  the typing by less than `quiet_ms`), before the spinner.
- follow-up: a time set by the daemon after a read left the pane `working` with its
  output quiet (the fold's working->idle dwell is still running): the read that
  publishes `idle` once the dwell is over. Repeated follow-ups without output back
  off (doubling from 0.5 s to 32 s).

Every deadline that falls due for a pane is served by one read, and reads of the
same pane are at least `min_gap_ms` apart (a later deadline waits, it is not
dropped): a flood of output turns into at most one onset and one quiet-edge read
per burst per pane, whatever the byte rate.
"""

from __future__ import annotations

CAP = 4096  # panes tracked; the least recently active is forgotten beyond it
FOLLOWUP_FLOOR_MS = 500
BURST_BACKOFF = 4  # burst re-reads wait burst_ms << min(n - 1, 4): 0.5, 0.5, 1 ... 8 s


class Watch:
    __slots__ = ("last_output", "quiet_due", "onset_due", "followup_due", "last_read",
                 "followups", "rereads")

    def __init__(self) -> None:
        self.last_output: int | None = None
        self.quiet_due: int | None = None
        self.onset_due: int | None = None
        self.followup_due: int | None = None
        self.last_read: int | None = None
        self.followups = 0  # follow-ups since the last output (each waits longer)
        self.rereads = 0  # burst re-reads in the current burst (each waits longer)

    def due_at(self, min_gap_ms: int) -> int | None:
        dues = [d for d in (self.quiet_due, self.onset_due, self.followup_due) if d is not None]
        if not dues:
            return None
        at = min(dues)
        if self.last_read is not None:
            at = max(at, self.last_read + min_gap_ms)
        return at


class Edges:
    def __init__(self, quiet_ms: int, onset_ms: int, min_gap_ms: int,
                 burst_ms: int = 500) -> None:
        self.quiet_ms = quiet_ms
        self.onset_ms = onset_ms
        self.min_gap_ms = min_gap_ms
        self.burst_ms = burst_ms
        self.panes: dict[str, Watch] = {}
        self.fired = 0  # reads handed out (tests and the status document read it)

    def output(self, pane: str, now: int, working: bool, agent: bool = False) -> None:
        """`working`: the pane's stamp says working; `agent`: it has a stamp at all."""
        w = self.panes.pop(pane, None) or Watch()
        self.panes[pane] = w  # re-inserted: dict order is recency, oldest first
        was_quiet = w.last_output is None or now - w.last_output >= self.quiet_ms
        w.last_output = now
        w.quiet_due = now + self.quiet_ms
        w.followup_due = None  # output is on its way: the quiet edge will look
        w.followups = 0
        if was_quiet:
            w.rereads = 0
        if was_quiet and not working and w.onset_due is None:
            w.onset_due = now + self.onset_ms
        elif (agent and not working and w.onset_due is None and w.last_read is not None
              and now - w.last_read >= self.burst_ms << min(max(w.rereads - 1, 0),
                                                            BURST_BACKOFF)):
            w.onset_due = now  # a burst that outlasts its onset read: look again
            w.rereads += 1
        if len(self.panes) > CAP:
            del self.panes[next(iter(self.panes))]

    def poke(self, pane: str, now: int) -> None:
        """Something other than output can have changed the pane (copy mode)."""
        w = self.panes.setdefault(pane, Watch())
        w.onset_due = now + self.onset_ms if w.onset_due is None else w.onset_due

    def follow_up(self, pane: str, at: int, now: int) -> None:
        """Read a quiet pane again at `at`, but no sooner than a backoff that doubles
        with every follow-up since its last output (0.5 s, 1 s, 2 s ... 32 s): a pane
        whose verdict keeps holding `working` without new output is not re-read at
        the gap rate."""
        w = self.panes.get(pane)
        if w is None or w.quiet_due is not None:
            return
        at = max(at, now + FOLLOWUP_FLOOR_MS * (1 << min(w.followups, 6)))
        w.followups += 1
        w.followup_due = at if w.followup_due is None else min(w.followup_due, at)

    def quiet(self, pane: str, now: int) -> bool:
        w = self.panes.get(pane)
        return w is None or w.last_output is None or now - w.last_output >= self.quiet_ms

    def take_due(self, now: int) -> list[str]:
        """Every pane with a deadline passed (gap respected); their deadlines are
        consumed: one read serves them all."""
        out = []
        for pane, w in self.panes.items():
            at = w.due_at(self.min_gap_ms)
            if at is None or at > now:
                continue
            for name in ("quiet_due", "onset_due", "followup_due"):
                due = getattr(w, name)
                if due is not None and due <= now:
                    setattr(w, name, None)
            w.last_read = now
            out.append(pane)
        self.fired += len(out)
        return out

    def next_due(self) -> int | None:
        dues = [at for w in self.panes.values()
                if (at := w.due_at(self.min_gap_ms)) is not None]
        return min(dues) if dues else None

    def keep_only(self, panes: set[str]) -> None:
        for pane in [p for p in self.panes if p not in panes]:
            del self.panes[pane]

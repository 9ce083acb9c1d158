"""The daemon's stamper: handed-off hook events, queued once ACKed, stamped in rounds.

The socket part ACKs a whole, valid event frame as soon as it reads it and puts the
event here; the loop stamps the queue between polls, and while any tmux spawn of the
loop runs, the socket part keeps answering hooks (tma.tmux.spawn's side channel). A hook
therefore waits for the exchange alone, never for the tmux spawns of the events queued
before its own: in a storm of hooks (ten busy agents fire dozens a second) the loop used
to stamp each event before it read the next connection, hooks waited past their 0.5 s
deadline, and stamped their events themselves as well (bench/bench_hook_storm.py).

A round takes a pane's queued events in their order (up to PER_PANE of them) on every
pane, reads every pane of the server in one spawn and writes every stamp in one
`source-file` (tma.runtime.hook.Batch). A pane's first event is decided over the options
read; each next one over the options as the writes before it leave them
(tma.tmux.write.expected: the client-side mirror of the guards and the chain, held equal
to tmux by a property test), and is written in full under its guard, so the server
still decides every write and a mirror never stands in for a read in a compare. While
events wait, the round's write spawn reads every pane again for the next round. The
guarded writes make a late stamp harmless: tmux keeps the newer evidence. A full queue
refuses the event (NAK): the hook stamps it itself, as with no daemon.

Once a round wrote, the loop lists the stamps (the history, the notifier and the segment
hear of them) as it did before.
"""

from __future__ import annotations

import time
from collections import deque

from tma.runtime import hook
from tma.tmux import read
from tma.tmux.adapter import NoServer, TmuxError

MAX_QUEUE = 1024
QUEUE_BYTES = 32 << 20  # payload bytes held at once
ROUND_MAX = 256  # events read and written together
PER_PANE = 32  # of them on one pane (a storm on one agent still shares the round)
MAX_ATTEMPTS = 3  # rounds an event may fail (tmux timing out) before it is given up


def take_round(queue, limit: int, per_pane: int = 1) -> tuple[list, deque]:
    """Each pane's first PER_PANE queued events (at most LIMIT in all), and the rest in
    their order: nothing of a pane overtakes an event of it that waits. An item is
    (fields, table, attempts) with the pane id first among the fields."""
    taken: list = []
    later: deque = deque()
    count: dict[str, int] = {}
    held: set[str] = set()
    for item in queue:
        pane = item[0][0]
        if pane in held or count.get(pane, 0) >= per_pane or len(taken) >= limit:
            later.append(item)
            held.add(pane)
        else:
            taken.append(item)
            count[pane] = count.get(pane, 0) + 1
    return taken, later


class Stamper:
    """The queue of ACKed events, stamped in rounds by the loop (`stamp`)."""

    def __init__(self, daemon) -> None:
        self.daemon = daemon
        self.queue: deque = deque()
        self.bytes = 0
        self.rounds = 0
        self.dropped = 0  # events given up after MAX_ATTEMPTS failed rounds

    def has_room(self, size: int) -> bool:
        return len(self.queue) < MAX_QUEUE and self.bytes + size <= QUEUE_BYTES

    def put(self, fields: list[str], table) -> None:
        self.queue.append((fields, table, 0))
        self.bytes += len(fields[3])

    def pending(self) -> int:
        return len(self.queue)

    def stamp(self, until: int | None, mono) -> bool:
        """Stamp rounds until the monotonic time `until` (None: the whole queue); True
        when a round wrote. A round that tmux refused (a timeout on a loaded machine) goes
        back to the front of the queue and ends this turn: an ACKed event is a promise,
        kept unless the same round fails MAX_ATTEMPTS times. NoServer ends the daemon."""
        wrote = False
        every = None  # the panes read by the last round's write spawn, if any
        while self.queue:
            taken, self.queue = take_round(self.queue, ROUND_MAX, PER_PANE)
            try:
                round_wrote, every = self._round(taken, every)
                wrote = round_wrote or wrote
            except NoServer:
                self.queue.clear()
                self.bytes = 0
                raise
            except TmuxError as exc:
                again = [(f, t, n + 1) for f, t, n in taken if n + 1 < MAX_ATTEMPTS]
                self.dropped += len(taken) - len(again)
                self.queue.extendleft(reversed(again))
                self.bytes = sum(len(f[3]) for f, _t, _n in self.queue)
                self.daemon.log(f"tma daemon: a stamping round failed ({exc}); "
                                f"{len(again)} events wait for the next turn")
                return wrote
            self.bytes = sum(len(f[3]) for f, _t, _n in self.queue)
            self.rounds += 1
            if until is not None and mono() >= until:
                break
        return wrote

    def _round(self, taken: list, every) -> tuple[bool, list | None]:
        """Stamp TAKEN over EVERY (the panes the previous round's spawn read after its
        writes; None: read them now). While more events wait, the round's write spawn
        reads every pane after its writes, for the next round: a round costs one tmux
        spawn, not two (in a storm the daemon's spawns are what its rounds wait on)."""
        server = self.daemon.server
        if every is not None:
            known = {p.pane_id for p in every}
            if any(fields[0] not in known for fields, _t, _n in taken):
                every = None  # a pane newer than that read: read again
        if every is None:
            every = read.every_pane(server)  # TmuxError: the round is tried again
        clock = time.time_ns() // 1_000_000  # the writer's time: events may have waited
        batch = hook.Batch(server)
        wrote = False
        decided: set[str] = set()  # panes whose options are now a mirror, not the read
        for fields, table, _attempts in taken:
            pane, _agent, kind, payload, at, _scope = fields
            panes = read.session_of(every, pane)
            if not panes:
                continue  # a pane gone meanwhile: what the hook would shrug off
            fresh = pane not in decided
            decided.add(pane)
            try:
                outcome = hook.handle(batch, self.daemon.cfg, table, kind, pane, payload,
                                      int(at), panes=panes, clock=clock, mirror=True,
                                      fresh=fresh)
            except NoServer:
                raise
            except TmuxError:
                continue  # this pane's own read-back (a notification marker) failed
            wrote = wrote or outcome.wrote
        after = read.Listing() if self.queue else None
        # TmuxError: the round is tried again (guarded writes: harmless)
        out = batch.flush((after.line(),) if after is not None else ())
        if after is None:
            return wrote, None
        panes = after.parse(out).panes
        return wrote, panes or None

"""`tma wait`'s decision logic, free of tmux and the clock.

A `Waiter` is fed one poll cycle at a time (the cycle's rows, the ids of every pane
alive on the server, whether the cycle produced) and answers with a `Step`: the
target is satisfied, a watched pane vanished (exit 3) or lost its agent (exit 4),
`--agent` is ambiguous (exit 1), `--all` has nothing to wait for (exit 2), or keep
waiting. Waiting is level-triggered: any cycle that observes the target satisfies
it, the first cycle included.

Targets:
- PANE: one pane id. Vanish after being seen -> 3; its agent row gone while the pane
  lives, after the agent was seen -> 4; a live pane that never carried an agent
  keeps waiting (with a one-time hint).
- AGENT: the selector's --agent. Pins to the first in-scope match (more than one at
  that first observation is ambiguous), then behaves as PANE on it.
- ANY: the first in-scope row (surface order) that satisfies; never pins, so
  vanishes and deaths are ignored.
- ALL: a barrier over the in-scope rows of the first observation (membership pinned);
  every member must satisfy in the same cycle. A member that vanishes -> 3, whose
  agent exits -> 4. An empty first observation -> EMPTY.
- COUNT: a quorum of N in-scope rows satisfying; scope re-read every cycle.
"""

from __future__ import annotations

from tma.core import errors, states
from tma.runtime import selectors

PANE = "pane"
AGENT = "agent"
ANY = "any"
ALL = "all"
COUNT = "count"

# Step kinds
MATCHED = "matched"
VANISHED = "vanished"
DEPARTED = "departed"
AMBIGUOUS = "ambiguous"
EMPTY = "empty"
WAITING = "waiting"

#: Exit codes per terminal step.
EXIT = {MATCHED: 0, VANISHED: 3, DEPARTED: 4, AMBIGUOUS: 1, EMPTY: 2}
EXIT_TIMEOUT = errors.TIMEOUT  # the one exit table


class Goal:
    """`--until` states (an OR list in the selector vocabulary) and the `--since` floor."""

    __slots__ = ("until", "since")

    def __init__(self, until: tuple[str, ...], since: int | None = None) -> None:
        self.until = tuple(until)
        self.since = since

    def matches(self, row) -> bool:
        stamp = row.stamp
        if not any(states.matches_class(stamp.state, stamp.attention, w) for w in self.until):
            return False
        # episode_ms = max(since, turn_at): a fresh turn end on a pane that never left
        # idle moves it, so `--until done --since` sees the next completion.
        return self.since is None or stamp.episode_ms > self.since

    def describe(self) -> str:
        text = ", ".join(self.until)
        return text if self.since is None else f"{text} since {self.since}"


class Step:
    __slots__ = ("kind", "rows", "panes")

    def __init__(self, kind: str, rows: list | None = None, panes: list | None = None) -> None:
        self.kind = kind
        self.rows = rows or []  # MATCHED: the satisfied rows, in surface order
        self.panes = panes or []  # VANISHED/DEPARTED: the pane; AMBIGUOUS: the candidates

    @property
    def exit_code(self) -> int | None:
        return EXIT.get(self.kind)

    def __repr__(self) -> str:
        return f"Step({self.kind!r}, rows={len(self.rows)}, panes={self.panes!r})"


WAIT = Step(WAITING)


class _Latch:
    __slots__ = ("seen_pane", "seen_agent", "hinted")

    def __init__(self, seen_pane: bool = False, seen_agent: bool = False,
                 hinted: bool = False) -> None:
        self.seen_pane = seen_pane
        self.seen_agent = seen_agent
        self.hinted = hinted


class Waiter:
    """Cross-cycle state for one `tma wait`. `notes` collects one-time stderr lines."""

    def __init__(self, kind: str, goal: Goal, *, pane: str | None = None,
                 count: int = 1) -> None:
        if kind not in (PANE, AGENT, ANY, ALL, COUNT):
            raise ValueError(f"unknown wait target {kind!r}")
        self.kind = kind
        self.goal = goal
        self.pane = pane  # PANE: the target; AGENT: the pinned pane once observed
        self.count = count
        self.members: list[str] | None = None  # ALL: pinned membership
        self._latch = _Latch()
        self._member_latches: dict[str, _Latch] = {}
        self.notes: list[str] = []

    @property
    def fleet(self) -> bool:
        """Whether the target emits a set of rows (an ls document) rather than one row."""
        return self.kind in (ALL, COUNT)

    def step(self, rows, alive, in_scope=None, producing: bool = True) -> Step:
        """Evaluate one cycle.

        rows: the cycle's rows in surface order; alive: ids of every pane on the server;
        in_scope: the selector predicate (row -> bool); producing: False when the cycle
        only consumed stamps (stampede guard), so a missing row proves nothing new.
        """
        if in_scope is None:
            def in_scope(_row) -> bool:
                return True
        alive = set(alive)
        if self.kind == PANE or (self.kind == AGENT and self.pane is not None):
            return self._pane(self.pane, self._latch, rows, alive, producing)
        if self.kind == AGENT:
            found = [r for r in rows if in_scope(r)]
            if not found:
                return WAIT
            if len(found) > 1:
                return Step(AMBIGUOUS, panes=[r.pane.pane_id for r in found])
            self.pane = found[0].pane.pane_id
            return self._pane(self.pane, self._latch, rows, alive, producing)
        if self.kind == ANY:
            for r in rows:
                if in_scope(r) and self.goal.matches(r):
                    return Step(MATCHED, rows=[r])
            return WAIT
        if self.kind == COUNT:
            hits = [r for r in rows if in_scope(r) and self.goal.matches(r)]
            return Step(MATCHED, rows=hits) if len(hits) >= self.count else WAIT
        return self._all(rows, alive, in_scope, producing)

    def _pane(self, pane_id, latch: _Latch, rows, alive: set, producing: bool) -> Step:
        for r in rows:
            if r.pane.pane_id == pane_id:
                latch.seen_pane = latch.seen_agent = True
                return Step(MATCHED, rows=[r]) if self.goal.matches(r) else WAIT
        if pane_id in alive:
            latch.seen_pane = True
            if latch.seen_agent:
                return Step(DEPARTED, panes=[pane_id])
            if producing and not latch.hinted:
                latch.hinted = True
                self.notes.append(f"tma: pane {pane_id} runs no agent yet; waiting for one to start there")
            return WAIT
        if latch.seen_pane:
            return Step(VANISHED, panes=[pane_id])
        return WAIT

    def _all(self, rows, alive: set, in_scope, producing: bool) -> Step:
        if self.members is None:
            members = [r.pane.pane_id for r in rows if in_scope(r)]
            if not members:
                # A consume-only cycle does not list never-stamped panes: decide on a
                # producing one.
                return Step(EMPTY) if producing else WAIT
            self.members = members
            # Pinned from agent rows: seen alive, with an agent, never a typo.
            self._member_latches = {m: _Latch(True, True, True) for m in members}
        matched = []
        waiting = False
        for member in self.members:
            step = self._pane(member, self._member_latches[member], rows, alive, producing)
            if step.kind == MATCHED:
                matched.extend(step.rows)
            elif step.kind == WAITING:
                waiting = True
            else:
                return step  # a vanish or a death ends the barrier at once
        if waiting:
            return WAIT
        order = {id(r): i for i, r in enumerate(rows)}
        matched.sort(key=lambda r: order.get(id(r), 0))
        return Step(MATCHED, rows=matched)


def _count(flag: str, text: str, minimum: int = 0) -> int:
    if not text.strip().isdigit() or int(text) < minimum:
        raise errors.UsageError(f"{flag} needs an integer >= {minimum}, got {text!r}")
    return int(text)


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise errors.UsageError(f"--timeout needs a number of seconds >= 0, got {text!r}")
    return value


def from_args(sel, args) -> tuple[Waiter, float | None]:
    """`tma wait`'s target and timeout from its parsed flags; UsageError (exit 2) for a
    target that is missing, malformed or at odds with the selector."""
    try:
        until = selectors.parse_states(args.until)
    except selectors.SelectorError as exc:
        raise errors.UsageError(f"--until: {exc}") from None
    since = _count("--since", args.since) if args.since is not None else None
    timeout = _timeout(args.timeout) if args.timeout is not None else None
    goal = Goal(until, since)
    if args.pane is not None:
        if not sel.empty:
            raise errors.UsageError(
                "--pane names one pane; drop the selector flags or target with "
                "--agent/--any/--all/--count")
        if not args.pane:
            raise errors.UsageError("--pane needs a pane id")
        return Waiter(PANE, goal, pane=args.pane), timeout
    if args.all:
        return Waiter(ALL, goal), timeout
    if args.count is not None:
        return Waiter(COUNT, goal, count=_count("--count", args.count, minimum=1)), timeout
    if args.any:
        return Waiter(ANY, goal), timeout
    if sel.agent is not None:
        return Waiter(AGENT, goal), timeout
    raise errors.UsageError("name a target: --pane ID, --agent NAME, --any, --all or "
                            "--count N")

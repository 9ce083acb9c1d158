"""Where a jump goes: the acting client, the orderings of the candidate panes, the trail.

Pure: rows, panes and clients in, a choice out. The trail is a client's list of the
panes it jumped away from, oldest first; tma.tmux.nav stores it in a server option,
tma.runtime.navigate reads it, asks here, and moves the client.
"""

from __future__ import annotations

from tma.core import states

NEVER = 1 << 62  # sorts a never-stamped `since` last
TRAIL_CAP = 8


class NoClient(Exception):
    pass


TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs every jump ~3 ms at run time; the checker alone needs these
    from collections.abc import Collection, Sequence
    from typing import Protocol, TypeVar

    # What these choices read of tma.tmux.read's Client and Pane and tma.runtime.cycle's Row
    # (core sees them only by shape).
    class ClientLike(Protocol):
        @property
        def name(self) -> str: ...
        @property
        def control_mode(self) -> bool: ...
        @property
        def session_name(self) -> str: ...
        @property
        def activity(self) -> int: ...

    class PaneLike(Protocol):
        @property
        def pane_id(self) -> str: ...
        @property
        def session_name(self) -> str: ...
        @property
        def order_key(self) -> tuple[str, int, int]: ...

    class StampLike(Protocol):
        @property
        def state(self) -> str: ...
        @property
        def since(self) -> int: ...
        @property
        def attention(self) -> bool: ...

    class RowLike(Protocol):
        @property
        def pane(self) -> PaneLike: ...
        @property
        def stamp(self) -> StampLike: ...

    C = TypeVar("C", bound=ClientLike)
    R = TypeVar("R", bound=RowLike)


def pick_client(clients: Sequence[C], panes: Sequence[PaneLike], requested: str | None,
                env_pane: str | None) -> C:
    """The acting client: the named one, else the most recently active client on
    $TMUX_PANE's session, else the most recently active client. Control-mode
    clients are never picked implicitly (nobody sees their focus)."""
    if requested:
        for c in clients:
            if c.name == requested:
                return c
        raise NoClient(f"no tmux client named {requested!r}")
    seen = [c for c in clients if not c.control_mode]
    if not seen:
        raise NoClient("no attached tmux client to move (run inside tmux or pass --client NAME)")
    if env_pane:
        session = next((p.session_name for p in panes if p.pane_id == env_pane), None)
        mine = [c for c in seen if session is not None and c.session_name == session]
        if mine:
            return max(mine, key=lambda c: c.activity)
    return max(seen, key=lambda c: c.activity)


def _waited(r: RowLike) -> tuple[int, str, int, int]:
    return (r.stamp.since or NEVER,) + r.pane.order_key


def longest_blocked(rows: Sequence[R]) -> R | None:
    """The pane blocked longest (None when none is)."""
    return min((r for r in rows if r.stamp.state == states.BLOCKED), key=_waited, default=None)


def attention_order(rows: Sequence[R]) -> list[R]:
    """Blocked panes longest-blocked first, then done panes longest-done first."""
    blocked = sorted((r for r in rows if r.stamp.state == states.BLOCKED), key=_waited)
    done = sorted((r for r in rows if r.stamp.state == states.IDLE and r.stamp.attention),
                  key=_waited)
    return blocked + done


def after(ordered: Sequence[R], current: str | None) -> R:
    """The entry after the current pane's, wrapping; the first when it is not listed."""
    ids = [r.pane.pane_id for r in ordered]
    if current in ids:
        return ordered[(ids.index(current) + 1) % len(ordered)]
    return ordered[0]


def next_by_position(rows: Sequence[R], current_key: tuple[str, int, int] | None) -> R:
    """The first agent pane after the current position (session, window, pane); wraps."""
    ordered = sorted(rows, key=lambda r: r.pane.order_key)
    if current_key is not None:
        for r in ordered:
            if r.pane.order_key > current_key:
                return r
    return ordered[0]


def menu_order(rows: Sequence[R]) -> list[R]:
    """blocked, working, idle, unknown; longest in its state first."""
    return sorted(rows, key=lambda r: (states.STATE_ORDER.get(r.stamp.state, 9),
                                       r.stamp.since or NEVER) + r.pane.order_key)


def age(ms: int) -> str:
    secs = max(0, ms) // 1000
    if secs < 60:
        return f"{secs}s"
    if secs < 3600:
        return f"{secs // 60}m"
    if secs < 86400:
        return f"{secs // 3600}h"
    return f"{secs // 86400}d"


# ---------------------------------------------------------------- the trail


def push(entries: list[str], origin: str, live: set[str] | None = None) -> list[str]:
    """The trail with `origin` on top: dead panes pruned, no repeat of the top, capped."""
    out = [e for e in entries if live is None or e in live]
    if origin and (not out or out[-1] != origin):
        out.append(origin)
    return out[-TRAIL_CAP:]


def back(trail: list[str], live: Collection[str],
         current: str | None) -> tuple[str | None, list[str]]:
    """--back: the newest trail entry still open and not the pane shown now, and the
    trail left below it; (None, []) when no entry qualifies."""
    rest = list(trail)
    while rest:
        pane_id = rest.pop()
        if pane_id in live and pane_id != current:
            return pane_id, rest
    return None, []


def home(trail: list[str], live: Collection[str]) -> str | None:
    """--home: the oldest trail entry still open (the trail then empties)."""
    return next((p for p in trail if p in live), None)

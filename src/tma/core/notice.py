"""Whether a pane is due a notification, and mute durations: pure decisions.

The daemon's notifier (tma.daemon.notifier) asks these questions of every agent row
after every read; `tma mute` parses its `--for` here. Nothing here reads a clock or
tmux: times come in as epoch ms, options as the raw strings tmux stored.

Dedup is per state run (machinery §5): the episode began at max(since, turn_at) and
a notification is due only while `@agent_notified_at` is absent or strictly older.
context_high has its own armed flag, `@agent_context_notified_at` (absent = armed).
"""

from __future__ import annotations

from tma.core import codec, states

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook intake asks `trigger` on every stamp: no typing imports
    from collections.abc import Mapping, Sequence

MUTE_FOREVER = 99_999_999_999_999  # @agent_mute_until sentinel: muted indefinitely
REARM_BAND = 10  # context_high re-arms below threshold - 10
_UNITS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
FIRE = "fire"
REARM = "rearm"


class DurationError(ValueError):
    pass


def parse_duration(text: str) -> int:
    """`<int>[s|m|h|d]` (bare = seconds) in ms. Zero, signs, fractions, spaces and other
    units are refused; the caller clamps a huge value to the forever sentinel."""
    body, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS else (text, "s")
    if not body or not body.isascii() or not body.isdigit():
        raise DurationError(f"invalid duration {text!r} (expected <int>[s|m|h|d], e.g. 30m)")
    value = int(body)
    if value == 0:
        raise DurationError(f"invalid duration {text!r} (must be more than zero)")
    return value * _UNITS[unit]


def mute_deadline(now: int, duration_ms: int | None) -> int:
    """The @agent_mute_until value: now + duration, clamped to the forever sentinel
    (None = indefinitely)."""
    if duration_ms is None:
        return MUTE_FOREVER
    return min(MUTE_FOREVER, now + duration_ms)


def describe_duration(text: str) -> str:
    """`30m` as the user typed it, a bare number as seconds (`90` -> `90s`)."""
    return text if text[-1:] in _UNITS else text + "s"


def muted(raw: str, now: int) -> bool:
    """Is a stored @agent_mute_until still in the future?"""
    return raw.isdigit() and codec.to_ms(int(raw)) > now


def on_screen(pane: str, watchers: Sequence[tuple[str, int]], now: int, quiet_s: int) -> bool:
    """Is PANE shown on a client whose last input (epoch seconds, tmux's
    #{client_activity}) is at most quiet_s seconds before now (epoch ms)? watchers:
    (the pane a client shows, its last input). quiet_s 0: never."""
    if quiet_s <= 0:
        return False
    return any(shown == pane and now - at * 1000 <= quiet_s * 1000 for shown, at in watchers)


def trigger(state: str, attention: bool) -> str | None:
    """blocked -> blocked; idle carrying attention -> done; anything else none. The one
    rule: the daemon asks it of a stored stamp (due), the hook intake of a planned one
    (tma.runtime.notify.gate.trigger_of)."""
    if state == states.BLOCKED:
        return "blocked"
    if state == states.IDLE and attention:
        return "done"
    return None


def due(stamp: codec.Stamp, on: Sequence[str]) -> str | None:
    """The trigger this stamp is due (listed in `on` and not yet rung for its state
    run), or None. `stamp` is a codec.Stamp (state, attention, since, turn_at,
    notified_at in ms)."""
    word = trigger(stamp.state, stamp.attention)
    if word is None or word not in on:
        return None
    episode = max(stamp.since, stamp.turn_at)
    if episode <= 0:
        return None  # no episode time: nothing to dedup against, never ring
    if stamp.notified_at and stamp.notified_at >= episode:
        return None
    return word


def marker(now: int, stamp: codec.Stamp) -> int:
    """The marker value: max(now, episode_at), a forward clamp against a backward
    clock step (the marker must never predate the episode it consumes)."""
    return max(now, stamp.since, stamp.turn_at)


def context_step(options: Mapping[str, str], threshold: int) -> str | None:
    """FIRE (a real reading at or over threshold while armed), REARM (a real reading
    under threshold - 10 while fired) or None. A null reading (no pct) holds; a torn
    pair (pct written, its `_at` not yet) is deferred to the next read."""
    pct = options.get("@agent_context_pct", "")
    at = options.get("@agent_context_at", "")
    if not pct or not pct.isdigit():
        return None
    if not at or not at.isdigit():
        return None
    value = int(pct)
    armed = not options.get("@agent_context_notified_at")
    if armed and value >= threshold:
        return FIRE
    if not armed and value < threshold - REARM_BAND:
        return REARM
    return None

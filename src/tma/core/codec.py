"""The option tuple codec: pane options <-> a stamped state.

All clocks are epoch milliseconds. A non-zero value below 10**12 is a legacy
epoch-seconds value and is scaled on read.
"""

from __future__ import annotations

from tma.core import states
from tma.core.options import PROMPT
from tma.core.prompt import stored as stored_prompt, value as prompt_value
from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

LEGACY_SECONDS_FLOOR = 10**12
CLOCK_STEP_MS = 2000
# Evidence dated further ahead of a reader's clock than this is not evidence of order:
# the clock that wrote it has been stepped back since (or the date is forged). It is
# clamped when written and never holds a later event. Wider than CLOCK_STEP_MS so
# that an older hook event delayed behind a newer one under load still loses.
FUTURE_SKEW_MS = 5000


class DecodeError(ValueError):
    """The tuple cannot be read: the pane reads as never stamped."""

    def __init__(self, option: str, value: str, reason: str):
        super().__init__(f"{option}={value!r}: {reason}")
        self.option = option
        self.value = value
        self.reason = reason


class Stamp(Record):
    """One pane's decoded state tuple plus the identity options beside it."""

    state: str = states.UNKNOWN
    detail: str = ""
    source: str = states.SOURCE_CAPTURE
    evidence_at: int = 0
    since: int = 0
    stamped_at: int = 0
    attention: bool = False
    name: str = ""
    pid: int = 0
    hash: str = ""
    session: str = ""
    notified_at: int = 0
    turn_at: int = 0
    subagents: tuple[str, ...] = ()
    prompt: str = ""  # the identity of this episode's prompt ("" unread; tma.core.prompt)

    @property
    def episode_ms(self) -> int:
        """max(since, turn_at): what `wait --since` and notification dedup compare."""
        return max(self.since, self.turn_at)

    @property
    def is_hook_claim(self) -> bool:
        return self.source == states.SOURCE_HOOK and self.state != states.UNKNOWN


def to_ms(value: int) -> int:
    """Scale a legacy epoch-seconds value to milliseconds; leave ms alone."""
    if 0 < value < LEGACY_SECONDS_FLOOR:
        return value * 1000
    return value


def _int(options: Mapping[str, str], key: str, *, clock: bool) -> int:
    raw = options.get(key)
    if raw is None or raw == "":
        return 0
    raw = raw.strip()
    if not raw.isdigit():
        raise DecodeError(key, raw, "not a non-negative integer")
    value = int(raw)
    return to_ms(value) if clock else value


def decode(options: Mapping[str, str]) -> Stamp | None:
    """Decode a pane's options. None = never stamped; DecodeError = unreadable."""
    state = options.get("@agent_state")
    if state is None or state == "":
        return None
    if state not in states.STATES:
        raise DecodeError("@agent_state", state, "not one of " + ", ".join(states.STATES))
    source = options.get("@agent_source") or states.SOURCE_CAPTURE
    if source not in states.READABLE_SOURCES:
        raise DecodeError("@agent_source", source, "not one of " + ", ".join(states.SOURCES))
    if source == states.SOURCE_ACTIVITY:
        source = states.SOURCE_CAPTURE
    since = _int(options, "@agent_since", clock=True)
    return Stamp(  # positional, in field order: one per pane per run
        state,
        options.get("@agent_detail") or "",
        source,
        _int(options, "@agent_evidence_at", clock=True),
        since,
        _int(options, "@agent_stamped_at", clock=True),
        options.get("@agent_attention") == "1",
        options.get("@agent_name") or "",
        _int(options, "@agent_pid", clock=False),
        options.get("@agent_hash") or "",
        options.get("@agent_session") or "",
        _int(options, "@agent_notified_at", clock=True),
        _int(options, "@agent_turn_at", clock=True),
        tuple((options.get("@agent_subagents") or "").split()),
        stored_prompt(options.get(PROMPT) or "", since),
    )


def encode(stamp: Stamp) -> dict[str, str]:
    """The options a stamp is stored as (absent optionals are left out)."""
    out = {
        "@agent_state": stamp.state,
        "@agent_source": stamp.source,
        "@agent_evidence_at": str(stamp.evidence_at),
        "@agent_since": str(stamp.since),
        "@agent_stamped_at": str(stamp.stamped_at),
        "@agent_pid": str(stamp.pid),
    }
    if stamp.detail:
        out["@agent_detail"] = stamp.detail
    if stamp.attention:
        out["@agent_attention"] = "1"
    for key, value in (
        ("@agent_name", stamp.name),
        ("@agent_hash", stamp.hash),
        ("@agent_session", stamp.session),
        ("@agent_subagents", " ".join(stamp.subagents)),
    ):
        if value:
            out[key] = value
    if stamp.notified_at:
        out["@agent_notified_at"] = str(stamp.notified_at)
    if stamp.turn_at:
        out["@agent_turn_at"] = str(stamp.turn_at)
    if stamp.prompt:
        out[PROMPT] = prompt_value(stamp.since, stamp.prompt)
    return out


def ahead(at: int, now: int, skew: int = FUTURE_SKEW_MS) -> bool:
    """`at` lies further in the future of `now` than the skew allows."""
    return at > now + skew


def clamp_future(at: int, now: int, skew: int = FUTURE_SKEW_MS) -> int:
    """An evidence time as it may be written: `now` when it lies beyond the skew."""
    return now if ahead(at, now, skew) else at


def is_clock_step(stamp: Stamp) -> bool:
    """since stranded more than 2 s ahead of stamped_at: a backward wall-clock step."""
    return stamp.since > stamp.stamped_at + CLOCK_STEP_MS


def in_progress(stamp: Stamp) -> bool:
    """A chained write caught in flight: stamped_at (written last) is older."""
    if is_clock_step(stamp):
        return False
    return stamp.stamped_at < stamp.since or stamp.stamped_at < stamp.evidence_at


def is_fresh(stamp: Stamp, now: int, freshness_ms: int) -> bool:
    """Settled, not from the future, and younger than the freshness window."""
    if freshness_ms <= 0 or in_progress(stamp):
        return False
    if stamp.stamped_at > now:
        return False
    return now - stamp.stamped_at < freshness_ms

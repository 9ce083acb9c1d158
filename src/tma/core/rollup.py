"""The rollup grammar of @agent_summary / @agent_session_summary."""

from __future__ import annotations

from tma.core import states

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

ORDER = (states.BLOCKED, states.WORKING, states.IDLE, states.UNKNOWN)


def summary(pane_states: Iterable[str]) -> str:
    """`blocked:N working:N idle:N unknown:N`, fixed order, zeros omitted; "" = unset."""
    counts = dict.fromkeys(ORDER, 0)
    for s in pane_states:
        if s in counts:
            counts[s] += 1
    return " ".join(f"{s}:{n}" for s, n in counts.items() if n)


def parse(text: str) -> dict[str, int]:
    out = dict.fromkeys(ORDER, 0)
    for part in text.split():
        key, _, n = part.partition(":")
        if key in out and n.isdigit():
            out[key] = int(n)
    return out

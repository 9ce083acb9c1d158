"""The notify gate: whether a stamp is a notification candidate (lean: no sinks imported).

The one place that reads `[notify] on`, `[notify.context_high]` and who may fire
(`from_event`); tma.runtime.notify only delivers. The dedup itself is server-side:
the marker commits only when @agent_notified_at predates max(@agent_since,
@agent_turn_at), and only the writer whose marker reads back fires
(tma.tmux.write.already_notified).
"""

from __future__ import annotations

import os

DEFAULT_ON = ("blocked",)


def _table(cfg) -> dict:
    table = getattr(cfg, "notify", None)
    return table if isinstance(table, dict) else {}


def enabled(cfg, trigger: str) -> bool:
    """Is this trigger switched on? blocked/done: listed in `notify.on` (default
    ["blocked"]); context_high: the `[notify.context_high]` table is present.
    Says nothing about *who* fires; see from_event()."""
    n = _table(cfg)
    if trigger == "context_high":
        return isinstance(n.get("context_high"), dict)
    if trigger not in ("blocked", "done"):
        return False
    return trigger in n.get("on", DEFAULT_ON)


def from_event(cfg) -> bool:
    """May the hook intake fire for itself? TMA_NOTIFY_FROM_EVENT wins when set
    (exactly "1" = on, any other value = off); unset -> `notify.from_event` (false)."""
    env = os.environ.get("TMA_NOTIFY_FROM_EVENT")
    if env is not None:
        return env == "1"
    return _table(cfg).get("from_event") is True


def trigger_of(plan) -> str | None:
    """The trigger a planned stamp would fire: blocked, done (idle with attention), or None."""
    if plan.state == "blocked":
        return "blocked"
    if plan.state == "idle" and plan.set_attention:
        return "done"
    return None


def due(cfg, plan) -> bool:
    """Should the hook intake fire a notification for this planned stamp?"""
    if not from_event(cfg):
        return False
    trigger = trigger_of(plan)
    return trigger is not None and enabled(cfg, trigger)

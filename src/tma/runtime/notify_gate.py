"""Whether a hook-path stamp is a notification candidate (lean: no sinks imported).

The dedup itself is server-side: the marker commits only when @agent_notified_at
predates max(@agent_since, @agent_turn_at), and only the writer whose marker reads
back fires (tma.tmux.write.already_notified).
"""

from __future__ import annotations

import os


def from_event(cfg) -> bool:
    """TMA_NOTIFY_FROM_EVENT: exactly "1" turns it on, any other set value off;
    unset defers to [notify] from_event (default false)."""
    env = os.environ.get("TMA_NOTIFY_FROM_EVENT")
    if env is not None:
        return env == "1"
    return bool(cfg.notify.get("from_event", False))


def due(cfg, plan) -> bool:
    if not from_event(cfg):
        return False
    on = cfg.notify.get("on", ["blocked"])
    if plan.state == "blocked":
        return "blocked" in on
    if plan.state == "idle" and plan.set_attention:
        return "done" in on
    return False

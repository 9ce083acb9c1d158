"""Picker rows and the palette the UI tests render them with, at a fixed clock."""

from __future__ import annotations

from tma.runtime.config import STATUS_DEFAULTS

NOW = 10_000_000

PAL = dict(STATUS_DEFAULTS)

def row(pane, state="idle", *, since=NOW - 60_000, attention=False, agent="claude",
        locator=None, **kw):
    r = {"pane": pane, "agent": agent, "state": state, "since": since,
         "attention": attention, "locator": locator or f"s:{pane[1:]}.0", "detail": None,
         "title": "", "repo": None, "branch": None, "context": None, "model": None,
         "muted": False}
    r.update(kw)
    return r

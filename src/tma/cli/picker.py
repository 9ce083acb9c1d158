"""Bare `tma` on a terminal: the picker (made for `display-popup -E`, usable anywhere).

The driver is thin: tma.runtime.screen's Feed runs a poll cycle each second and hands
the rows to the loop in tma.ui.app, which renders them with tma.ui.picker. Enter jumps
exactly as `tma jump --pane` does (trail, attention clear) and closes; Tab closes it
and opens the pane's action menu (`tma act --menu`); ctrl-s toggles the scope; q and
Esc close.
"""

from __future__ import annotations

from tma.cli import common


def main(session: common.Session, argv: list[str]) -> int:
    """Bare `tma` (the global options are the Session's; argv is empty)."""
    from tma.runtime import screen

    cfg = screen.load_or_hold(session, "the picker")
    if cfg is None:
        return common.FAIL
    from tma.runtime.selectors import Selector
    from tma.ui import picker
    from tma.ui.app import App

    return screen.run(screen.Feed(session, Selector()), lambda: picker.View(), App)

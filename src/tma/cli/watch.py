"""`tma watch`: the persistent dashboard, for a split or a window of its own.

The picker's loop (tma.ui.app) with the watch renderer (tma.ui.watch) and its keys.
It refreshes each second and at once on SIGUSR1: while it runs, its pid sits in
`@tma_watch_pid` on its own pane ($TMUX_PANE), where the focus hooks' clear-attention
finds it and nudges it (about a fifth of a second after a focus change); the option
goes when watch quits, and dies with the pane if watch is killed.
"""

from __future__ import annotations

import os

from tma.cli import common, spec


def main(session: common.Session, argv: list[str]) -> int:
    sel, args = spec.parse("watch", argv, session)
    if not (common.on_terminal(0) and common.on_terminal(1)):
        common.err("tma watch: needs a terminal (run it in a tmux pane)")
        return common.USAGE
    from tma.runtime import screen

    cfg = screen.load_or_hold(session, "tma watch")
    if cfg is None:
        return common.FAIL
    from tma.tmux.attention import advertise_watch
    from tma.ui import watch
    from tma.ui.app import WatchApp

    feed = screen.Feed(session, sel)
    pane = common.env_pane()
    advertise_watch(feed.server, pane, os.getpid())

    class App(WatchApp):
        group_choice = args.group

    try:
        return screen.run(feed, lambda: watch.WatchView(table=args.table, group=args.group),
                          App)
    except Exception as exc:  # the one boundary: a clean line, not a traceback
        common.err(f"tma: watch error: {exc}")
        return common.FAIL
    finally:
        advertise_watch(feed.server, pane, None)

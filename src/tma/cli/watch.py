"""`tma watch`: the persistent dashboard, for a split or a window of its own.

The picker's loop (tma.cli.picker) with the watch renderer (tma.ui.watch) and its keys.
It refreshes each second and at once on SIGUSR1: while it runs, its pid sits in
`@tma_watch_pid` on its own pane ($TMUX_PANE), where the focus hooks' clear-attention
finds it and nudges it (seed 000: about a fifth of a second after a focus change); the
option goes when watch quits, and dies with the pane if watch is killed.
"""

from __future__ import annotations

import os

from tma.cli import common, picker


class WatchApp(picker.App):
    keys_quit = ("esc", "ctrl-c", "q")
    filters = False  # j/k/p/g are keys here; `/` starts a query

    def render(self, rows, width, height):
        from tma.cli.picker_term import plain_wanted
        from tma.ui import watch

        return watch.render(rows, self.view, width, height, palette=self.feed.cfg.picker,
                            now=common.now_ms(), plain=plain_wanted())

    def visible(self) -> list[dict]:
        from tma.ui import picker as ui_picker
        from tma.ui import watch

        shown = ui_picker.visible(self.rows, self.view, self.feed.cfg.picker, common.now_ms())
        return watch.flat(watch.grouped(shown, self.view.group))  # screen order

    def wants_preview(self, width: int) -> bool:
        return super().wants_preview(width) and not self.view.table

    def extra_key(self, key: str) -> None:
        if key in ("j", "k"):
            self.on_key("down" if key == "j" else "up")
        elif key == "a":
            self.actions()
        elif key == "p":
            from tma.ui import picker as ui_picker

            if self.screen.size()[0] < ui_picker.PREVIEW_MIN_WIDTH:
                self.say(f"p: the table and the preview need {ui_picker.PREVIEW_MIN_WIDTH} "
                         "columns; this is one list")
                return
            self.view.table = not self.view.table
            self.update(capture=True)
        elif key == "g":
            self.view.group = None if self.view.group else (self.group_choice or "repo")
            self.update(capture=False)

    group_choice: str | None = None

    def enter(self) -> None:
        if self.view.selected:
            why = self.feed.jump(self.view.selected)
            self.say(why or f"jumped to {self.view.selected}")  # watch stays open

    def actions(self) -> None:
        """Tab / a: the pane's action menu on the client; watch stays open."""
        if not self.view.selected:
            return
        why = self.feed.action_menu(self.view.selected)
        self.say(why or f"actions for {self.view.selected}")

    def on_key(self, key: str) -> None:
        view = self.view
        if view.help:  # any key closes the overlay (and does nothing else)
            view.help = False
            return
        if view.searching:
            if key == "enter":
                view.searching = False
            elif key == "esc":
                view.searching = False
                self.search("")
            elif key == "backspace":
                self.search(view.query[:-1])
            elif len(key) == 1:
                self.search(view.query + key)
            elif key != "ctrl-s":
                super().on_key(key)  # arrows, ctrl-c, resize, the mouse
            return
        if key == "/":  # a new search, as in less and vim
            view.searching = True
            self.search("")
        elif key == "?":
            view.help = True
        elif key == "esc" and view.query:
            self.search("")
        elif key != "ctrl-s":  # watch's scope is its selectors
            super().on_key(key)

    def search(self, query: str) -> None:
        self.view.query = query
        self.view.selected = None  # the best match, as in the picker
        self.update(capture=True)


def advertise(server, pane: str | None, pid: int | None) -> None:
    """Set (pid) or remove (None) `@tma_watch_pid` on watch's own pane; never fatal."""
    if not pane:
        return
    from tma.tmux import attention, write
    from tma.tmux.adapter import TmuxError

    try:
        server.source([write.set_plain(pane, attention.WATCH_PID, str(pid) if pid else "")])
    except TmuxError:
        pass


def main(session: common.Session, argv: list[str]) -> int:
    from tma.cli import spec

    sel, args = spec.parse("watch", argv, session)
    if not (common.on_terminal(0) and common.on_terminal(1)):
        common.err("tma watch: needs a terminal (run it in a tmux pane)")
        return common.USAGE
    cfg = picker.load_or_hold(session, "tma watch")
    if cfg is None:
        return common.FAIL
    from tma.ui import watch

    feed = picker.Feed(session, cfg, sel)
    pane = common.env_pane()
    advertise(feed.server, pane, os.getpid())

    class App(WatchApp):
        group_choice = args.group

    try:
        return picker.run(feed, lambda: watch.WatchView(table=args.table, group=args.group),
                          App)
    except Exception as exc:  # the one boundary: a clean line, not a traceback
        common.err(f"tma: watch error: {exc}")
        return common.FAIL
    finally:
        advertise(feed.server, pane, None)

"""The picker's and watch's loop: wait for a key, a signal or the next second; refresh;
draw. It drives a feed (tma.runtime.screen.Feed: rows, a preview, the jump, the action
menu) and a screen (tma.ui.term: size, draw, keys), and renders with tma.ui.picker or
tma.ui.watch; keys edit the View.

The picker: Enter jumps and closes; Tab closes it and opens the pane's action menu;
ctrl-s toggles the scope; ctrl-t toggles the preview between the pane's screen and its
conversation; q and Esc close. Watch keeps the loop with its own renderer and keys, and
stays open.

The conversation is asked of the feed in one of three ways: FRESH when ctrl-t turns it on
(a host's pane: a new `window` request over its link), CACHED when the selection moves
to another pane while it is on (a host's pane: a request only when nothing is kept for
the pane in its current state), and REFRESH on every tick (never a request to a host: a
local pane's transcript is read again, which costs one `stat` while it is quiet).
"""

from __future__ import annotations

import os
import select
import signal
import time

from tma.ui import picker
from tma.ui.term import plain_wanted

REFRESH_S = 1.0
#: How the conversation is asked of the feed (the module's docstring).
FRESH, CACHED, REFRESH = "fresh", "cached", "refresh"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class App:
    """The loop: wait for a key, a signal or the next second; refresh; draw."""

    keys_quit = ("esc", "ctrl-c", "q")
    filters = True  # printable keys edit the query (the picker); watch uses them as keys

    def __init__(self, feed, view, screen) -> None:
        self.feed = feed
        self.view = view
        self.screen = screen
        self.done = False
        self.nudged = False
        self.resized = False
        self.shown: list[dict] = []
        self.rows: list[dict] = []
        self.preview_of: str | None = None
        self.message_until = 0.0
        self.lines: list = []  # the last frame drawn (a click finds its row there)
        self.talk_of: str | None = None  # the pane whose conversation was last asked for
        self.talk_fresh = False  # ctrl-t turned the conversation on: ask anew

    # -- rendering
    def render(self, rows, width, height):
        return picker.render(rows, self.view, width, height, palette=self.feed.cfg.picker,
                             now=_now_ms(), plain=plain_wanted())

    def visible(self) -> list[dict]:
        return picker.visible(self.rows, self.view, self.feed.cfg.picker, _now_ms())

    def wants_preview(self, width: int) -> bool:
        return width >= picker.PREVIEW_MIN_WIDTH

    def update(self, capture: bool) -> None:
        """Re-read the rows from the feed; keep the selection on the same pane."""
        self.rows = self.feed.rows()
        self.view.notes = list(getattr(self.feed, "host_notes", ()))
        self.shown = self.visible()
        ids = [r["pane"] for r in self.shown]
        if self.view.selected not in ids:
            self.view.selected = ids[0] if ids else None
        width, _h = self.screen.size()
        if capture and self.wants_preview(width):
            if self.view.talk:
                self.view.said = self.feed.conversation(self.view.selected, self.talk_how())
                self.talk_of = self.view.selected
            else:
                self.view.preview = self.feed.preview(self.view.selected)
            self.preview_of = self.view.selected
        elif self.preview_of != self.view.selected:
            self.view.preview = None
            self.view.said = None

    def talk_how(self) -> str:
        """FRESH, CACHED or REFRESH (the module's docstring)."""
        if self.talk_fresh:
            self.talk_fresh = False
            return FRESH
        return CACHED if self.talk_of != self.view.selected else REFRESH

    def toggle_talk(self) -> None:
        """ctrl-t: the preview shows the pane's conversation <-> its screen."""
        width, height = self.screen.size()
        if not self.view.talk and not picker.previews(width, height):
            self.say(f"ctrl-t: the conversation shows in the preview, which needs "
                     f"{picker.PREVIEW_MIN_WIDTH} columns and 10 rows")
            return
        self.view.talk = not self.view.talk
        self.view.said = None
        self.talk_fresh = self.view.talk
        self.update(capture=True)

    def draw(self) -> None:
        if self.view.message and time.monotonic() > self.message_until:
            self.view.message = ""
        if self.feed.problem and not self.view.message:
            self.say(self.feed.problem)
            self.feed.problem = ""
        width, height = self.screen.size()
        self.lines = self.render(self.rows, width, height)
        self.screen.draw(self.lines)

    def say(self, text: str, secs: float = 4.0) -> None:
        self.view.message = text
        self.message_until = time.monotonic() + secs

    # -- keys
    def on_key(self, key: str) -> None:
        if key in self.keys_quit and (key != "q" or not self.filters or not self.view.query):
            self.done = True
        elif key in ("up", "ctrl-p", "down", "ctrl-n"):
            step = -1 if key in ("up", "ctrl-p") else 1
            self.view.selected = picker.move(self.shown, self.view.selected, step)
            self.update(capture=True)
        elif key == "enter":
            self.enter()
        elif key == "tab":
            self.actions()
        elif key == "ctrl-s":
            self.view.scope = "all" if self.view.scope == "session" else "session"
            self.update(capture=True)
        elif key == "ctrl-t":
            self.toggle_talk()
        elif key == "resize":
            self.resized = True
        elif key.startswith("click:") or key.startswith("wheel-"):
            self.mouse(key)
        elif self.filters and (key == "backspace" or len(key) == 1):
            self.view.query = self.view.query[:-1] if key == "backspace" else self.view.query + key
            self.view.selected = None  # a new query selects its best match, as fzf does
            self.update(capture=True)
        else:
            self.extra_key(key)

    def extra_key(self, key: str) -> None:
        pass

    def mouse(self, key: str) -> None:
        """A click selects its row, a click on the selected row is Enter; the wheel
        moves three rows and stops at the ends."""
        if key.startswith("wheel-"):
            step = -3 if key == "wheel-up" else 3
            self.view.selected = picker.scroll(self.shown, self.view.selected, step)
            self.update(capture=True)
            return
        pane = picker.pane_at(self.lines, int(key[6:]))
        if pane is None:
            return
        if pane == self.view.selected:
            self.enter()
        else:
            self.view.selected = pane
            self.update(capture=True)

    def enter(self) -> None:
        if not self.view.selected:
            return
        why = self.feed.jump(self.view.selected)
        if why:
            self.say(why)
        else:
            self.done = True  # the picker closes once it has taken you there

    def actions(self) -> None:
        """Tab: the pane's action menu (tmux's own, on the client). The picker closes
        first, so the menu is not drawn under a popup about to go."""
        if not self.view.selected:
            return
        why = self.refusal(self.view.selected)
        if why:  # said here, in the open picker: closing it for nothing would hide why
            self.say(why)
            return
        self.after_close = self.view.selected
        self.done = True

    def refusal(self, pane_id: str) -> str:
        """Why the pane's action menu would offer nothing ('' when it offers something)."""
        check = getattr(self.feed, "action_refusal", None)
        return check(pane_id) if check is not None else ""

    after_close: str | None = None  # a pane whose action menu opens once the screen closes

    # -- the loop
    def run(self) -> int:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        old_fd = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        handlers = self._signals()
        try:
            self._loop(wake_r)
        finally:
            signal.set_wakeup_fd(old_fd)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            os.close(wake_r)
            os.close(wake_w)
        return 0

    def _signals(self) -> dict:
        def nudge(*_):
            self.nudged = True

        def winch(*_):
            self.resized = True

        def stop(*_):
            self.done = True

        old = {}
        for sig, fn in ((signal.SIGUSR1, nudge), (signal.SIGWINCH, winch),
                        (signal.SIGTERM, stop), (signal.SIGHUP, stop)):
            old[sig] = signal.signal(sig, fn)
        return old

    def _loop(self, wake_r: int) -> None:
        self.update(capture=False)
        self.draw()  # the first frame: straight from the stamps
        self.tick()
        self.draw()
        next_at = time.monotonic() + REFRESH_S
        while not self.done:
            try:
                select.select([0, wake_r], [], [], max(0.0, next_at - time.monotonic()))
            except InterruptedError:
                pass
            try:
                while os.read(wake_r, 64):
                    pass
            except BlockingIOError:
                pass
            for key in self.screen.keys():
                self.on_key(key)
                if self.closing():  # a method: a key may have set `done`
                    return
            if self.resized:
                self.resized = False
                self.screen.resize()
            if self.nudged or time.monotonic() >= next_at:
                self.nudged = False
                self.tick()
                next_at = time.monotonic() + REFRESH_S
            self.draw()

    def closing(self) -> bool:
        return self.done

    def tick(self) -> None:
        self.feed.refresh()
        self.update(capture=True)


class WatchApp(App):
    keys_quit = ("esc", "ctrl-c", "q")
    filters = False  # j/k/p/g are keys here; `/` starts a query

    def render(self, rows, width, height):
        from tma.ui import watch

        return watch.render(rows, self.view, width, height, palette=self.feed.cfg.picker,
                            now=_now_ms(), plain=plain_wanted())

    def visible(self) -> list[dict]:
        from tma.ui import watch

        shown = picker.visible(self.rows, self.view, self.feed.cfg.picker, _now_ms())
        return watch.flat(watch.grouped(shown, self.view.group))  # screen order

    def wants_preview(self, width: int) -> bool:
        return super().wants_preview(width) and not self.view.table

    def toggle_talk(self) -> None:
        """ctrl-t turns the full table into the list and preview that shows it."""
        if not self.view.talk and self.view.table \
                and self.screen.size()[0] >= picker.PREVIEW_MIN_WIDTH:
            self.view.table = False
        super().toggle_talk()

    def extra_key(self, key: str) -> None:
        if key in ("j", "k"):
            self.on_key("down" if key == "j" else "up")
        elif key == "a":
            self.actions()
        elif key == "p":
            if self.screen.size()[0] < picker.PREVIEW_MIN_WIDTH:
                self.say(f"p: the table and the preview need {picker.PREVIEW_MIN_WIDTH} "
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
        why = self.refusal(self.view.selected) or self.feed.action_menu(self.view.selected)
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

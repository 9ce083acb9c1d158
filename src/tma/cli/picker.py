"""Bare `tma` on a terminal: the picker (made for `display-popup -E`, usable anywhere).

The driver is thin: each second (a popup cannot be nudged: no hook ever sees its pane)
it runs the same poll cycle as every other surface, turns the rows into `ls --json` row
dicts and hands them to the pure renderer in tma.ui.picker; keys edit the View. Enter
jumps exactly as `tma jump --pane` does (trail, attention clear) and closes; Tab closes
it and opens the pane's action menu (`tma act --menu`); ctrl-s toggles the scope; q and Esc close. tma.cli.watch reuses
this loop with its own renderer and keys.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from tma.cli import common

REFRESH_S = 1.0
class Feed:
    """The snapshots behind the screen: one poll cycle per refresh, the preview capture."""

    def __init__(self, session: common.Session, cfg, sel) -> None:
        self.session = session
        self.g = session.g
        self.cfg = cfg
        self.sel = sel
        self.server = session.server
        self.result = None
        self.git = None
        self.git_at = 0.0
        self.problem = ""  # the last refresh's failure, shown in the footer

    def refresh(self, first: bool = False) -> None:
        """One cycle. The first frame is drawn from the stamps as they are (no capture,
        no git): that is what makes it fast; the next refresh follows at once."""
        from tma.runtime.cycle import Cycle
        from tma.tmux.adapter import NoServer, TmuxError

        if not first:  # hot reload; a broken file keeps the last good config
            problem = self.session.reload_config()
            if problem:
                self.problem = problem
            self.cfg = self.session.config
        cycle = Cycle(self.server, self.cfg, self.g.manifest_dir, warn=None)
        try:
            self.result = cycle.run(produce=not first, current=True)
        except NoServer:
            raise
        except TmuxError as exc:
            self.problem = f"tmux: {exc}"
            return
        if not first and time.monotonic() - self.git_at > 10:
            from tma.runtime.git import GitInfo

            self.git, self.git_at = GitInfo(), time.monotonic()  # branches move: re-read

    def rows(self) -> list[dict]:
        if self.result is None:
            return []
        from tma.ui import rows as render

        git = self.git
        if self.sel.needs_git and git is None:
            return []  # the first frame has no repo labels to select on yet
        rows = self.session.select(self.result.rows, self.sel, git)
        return [render.row_dict(r, server="", host="", git=git) for r in rows]

    def client(self):
        """The acting client (the one Enter moves), or None when there is none."""
        from tma.cli.jump import NoClient, pick_client

        snap = self.result.snapshot
        try:
            return pick_client(snap.clients, snap.panes, self.g.client, common.env_pane())
        except NoClient:
            return None

    def preview(self, pane_id: str | None) -> str | None:
        if not pane_id:
            return None
        from tma.tmux import read
        from tma.tmux.adapter import TmuxError

        try:
            got = read.capture_many(self.server, [(pane_id, 0)])
        except TmuxError:
            return None
        cap = got.get(pane_id)
        return cap.body if cap is not None else None

    def action_menu(self, pane_id: str) -> str:
        """`tma act --menu --pane ID` on the acting client, run by the tmux server (it must
        outlive a popup that closes first); '' or why not."""
        from tma.cli import jump
        from tma.tmux import nav
        from tma.tmux.adapter import TmuxError

        client = self.client() if self.result is not None else None
        if client is None:
            return "no attached tmux client to show the action menu on"
        argv = jump.tma_argv(self.g, self.cfg, self.server, self.result) + [
            "act", "--menu", "--pane", pane_id, "--client", client.name]
        try:
            nav.run_detached(self.server, argv)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""

    def jump(self, pane_id: str) -> str:
        """Jump the acting client there as `tma jump --pane` does; '' or why not."""
        from tma.cli import jump
        from tma.tmux.adapter import TmuxError

        if self.result is None or not any(r.pane.pane_id == pane_id for r in self.result.rows):
            return f"pane {pane_id} is gone"
        try:
            jump.to_pane(self.g, self.cfg, self.server, self.result, pane_id)
        except jump.NoClient as exc:
            return str(exc)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""


class App:
    """The loop: wait for a key, a signal or the next second; refresh; draw."""

    keys_quit = ("esc", "ctrl-c", "q")
    filters = True  # printable keys edit the query (the picker); watch uses them as keys

    def __init__(self, feed: Feed, view, screen) -> None:
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

    # -- rendering
    def render(self, rows, width, height):
        from tma.cli.picker_term import plain_wanted
        from tma.ui import picker

        return picker.render(rows, self.view, width, height, palette=self.feed.cfg.picker,
                             now=common.now_ms(), plain=plain_wanted())

    def visible(self) -> list[dict]:
        from tma.ui import picker

        return picker.visible(self.rows, self.view, self.feed.cfg.picker, common.now_ms())

    def wants_preview(self, width: int) -> bool:
        from tma.ui import picker

        return width >= picker.PREVIEW_MIN_WIDTH

    def update(self, capture: bool) -> None:
        """Re-read the rows from the feed; keep the selection on the same pane."""
        self.rows = self.feed.rows()
        self.shown = self.visible()
        ids = [r["pane"] for r in self.shown]
        if self.view.selected not in ids:
            self.view.selected = ids[0] if ids else None
        width, _h = self.screen.size()
        if capture and self.wants_preview(width):
            self.view.preview = self.feed.preview(self.view.selected)
            self.preview_of = self.view.selected
        elif self.preview_of != self.view.selected:
            self.view.preview = None

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
        from tma.ui import picker

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
        from tma.ui import picker

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
        self.after_close = self.view.selected
        self.done = True

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
                if self.done:
                    return
            if self.resized:
                self.resized = False
                self.screen.resize()
            if self.nudged or time.monotonic() >= next_at:
                self.nudged = False
                self.tick()
                next_at = time.monotonic() + REFRESH_S
            self.draw()

    def tick(self) -> None:
        self.feed.refresh()
        self.update(capture=True)


def load_or_hold(session: common.Session, what: str):
    """The config for a screen (the picker, watch); when it does not load, None after
    saying why and waiting for a key: in a popup or a split the pane closes with the
    process, and the error would go with it."""
    from tma.runtime.config import ConfigError

    try:
        return session.surface_config()
    except ConfigError as exc:
        message = str(exc) if str(exc).startswith("tma:") else f"tma: {exc}"
        common.err(message)
        hold(f"{what} cannot start until the config loads: fix it (tma doctor checks "
             "it), then open it again")
        return None


def hold(why: str) -> None:
    """Say why, then wait for one key (only on a terminal: a script is not held)."""
    if not (common.on_terminal(0) and common.on_terminal(2)):
        return
    import termios
    import tty

    sys.stderr.write(f"{why}\n\npress any key to close\n")
    sys.stderr.flush()
    try:
        old = termios.tcgetattr(0)
    except termios.error:
        return
    try:
        tty.setcbreak(0)
        os.read(0, 1)
    except (OSError, KeyboardInterrupt):
        pass
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, old)


def main(session: common.Session, argv: list[str]) -> int:
    """Bare `tma` (the global options are the Session's; argv is empty)."""
    cfg = load_or_hold(session, "the picker")
    if cfg is None:
        return common.FAIL
    from tma.runtime.selectors import Selector
    from tma.ui import picker

    feed = Feed(session, cfg, Selector())
    return run(feed, lambda: picker.View(), App)


def run(feed: Feed, make_view, app_class) -> int:
    """Open the screen, loop, always give the terminal back. Exit 1 on no server."""
    from tma.tmux.adapter import NoServer

    try:
        feed.refresh(first=True)
    except NoServer:
        common.err("tma: no tmux server running")
        return common.FAIL
    view = make_view()
    client = feed.client()
    view.exclude = common.env_pane() or (client.pane_id if client is not None else None)
    view.session = _session_of(feed, view.exclude) or (client.session_name if client else None)
    from tma.cli.picker_term import open_screen

    screen = open_screen(feed.cfg.picker)
    try:
        app = app_class(feed, view, screen)
        code = app.run()
        if app.after_close:
            screen.close()
            screen = None
            why = feed.action_menu(app.after_close)
            if why:
                common.err(f"tma: {why}")
        return code
    except NoServer:
        screen.close()
        screen = None
        common.err("tma: the tmux server went away")
        return common.FAIL
    finally:
        if screen is not None:
            screen.close()


def _session_of(feed: Feed, pane_id: str | None) -> str | None:
    if not pane_id or feed.result is None:
        return None
    return next((p.session_name for p in feed.result.snapshot.panes if p.pane_id == pane_id),
                None)

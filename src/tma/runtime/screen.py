"""What the picker and watch run on: the Feed of snapshots behind the screen, and
`run`, which opens the screen (tma.ui.term), loops (tma.ui.app) and always gives the
terminal back.

The Feed runs one poll cycle per refresh (each second: a popup cannot be nudged, no
hook ever sees its pane) over the row feed every long-running surface shares
(tma.runtime.feed) and turns the rows into `ls --json` row dicts; Enter jumps
exactly as `tma jump --pane` does (tma.runtime.navigate: trail, attention clear).
"""

from __future__ import annotations

from tma.runtime.session import Session
from tma.ui.term import hold

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.runtime.config import Config
    from tma.runtime.cycle import Result
    from tma.runtime.git import GitInfo
    from tma.runtime.selectors import Selector


class Feed:
    """The snapshots behind the screen: the row feed (tma.runtime.feed, quiet: this
    process owns the terminal, so every problem goes to the footer), the preview
    capture, the jump and the action menu."""

    def __init__(self, session: Session, sel: Selector | None) -> None:
        from tma.runtime.feed import Feed as Rows

        self.session = session
        self.sel = sel
        self.server = session.server
        # git labels re-read every 10 s (branches move); never on the first frame
        self.rows_feed = Rows(session, sel, git_every=10)
        self.problem = ""  # the last refresh's failure, shown in the footer

    @property
    def cfg(self) -> Config:
        return self.session.config

    @property
    def result(self) -> Result | None:
        return self.rows_feed.result

    @property
    def git(self) -> GitInfo | None:
        return self.rows_feed.git

    def refresh(self, first: bool = False) -> None:
        """One cycle. The first frame is drawn from the stamps as they are (no capture,
        no git): that is what makes it fast; the next refresh follows at once. A broken
        config keeps the last good one; a tmux error keeps the last good rows."""
        tick = self.rows_feed.tick(produce=not first)
        if tick.problem:
            self.problem = tick.problem

    def rows(self) -> list[dict[str, object]]:
        from tma.ui import rows as render

        git = self.git
        return [render.row_dict(r, server="", host="", git=git) for r in self.rows_feed.rows()]

    def client(self):
        """The acting client (the one Enter moves), or None when there is none."""
        from tma.runtime.navigate import Navigator, NoClient

        try:
            return Navigator(self.session, self.result).client()
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
        from tma.runtime.navigate import Navigator
        from tma.tmux import nav
        from tma.tmux.adapter import TmuxError

        client = self.client() if self.result is not None else None
        if client is None:
            return "no attached tmux client to show the action menu on"
        argv = Navigator(self.session, self.result).child_argv() + [
            "act", "--menu", "--pane", pane_id, "--client", client.name]
        try:
            nav.run_detached(self.server, argv)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""

    def jump(self, pane_id: str) -> str:
        """Jump the acting client there as `tma jump --pane` does; '' or why not."""
        from tma.runtime.navigate import Navigator, NoClient
        from tma.tmux.adapter import TmuxError

        if self.result is None or not any(r.pane.pane_id == pane_id for r in self.result.rows):
            return f"pane {pane_id} is gone"
        try:
            Navigator(self.session, self.result).to_pane(pane_id)
        except NoClient as exc:
            return str(exc)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""


def load_or_hold(session: Session, what: str):
    """The config for a screen (the picker, watch); when it does not load, None after
    saying why and waiting for a key: in a popup or a split the pane closes with the
    process, and the error would go with it."""
    from tma.runtime.config import ConfigError

    try:
        return session.surface_config()
    except ConfigError as exc:
        message = str(exc) if str(exc).startswith("tma:") else f"tma: {exc}"
        session.warn(message + "\n")
        hold(f"{what} cannot start until the config loads: fix it (tma doctor checks "
             "it), then open it again")
        return None


def run(feed: Feed, make_view, app_class) -> int:
    """Open the screen, loop, always give the terminal back. Exit 1 on no server."""
    from tma.tmux.adapter import NoServer

    try:
        feed.refresh(first=True)
    except NoServer:
        feed.session.warn("tma: no tmux server running" + "\n")
        return 1
    view = make_view()
    client = feed.client()
    view.exclude = (feed.session.env.get("TMUX_PANE")
                    or (client.pane_id if client is not None else None))
    view.session = _session_of(feed, view.exclude) or (client.session_name if client else None)
    from tma.ui.term import open_screen

    screen = open_screen(feed.cfg.picker)
    try:
        app = app_class(feed, view, screen)
        code = app.run()
        if app.after_close:
            screen.close()
            screen = None
            why = feed.action_menu(app.after_close)
            if why:
                feed.session.warn(f"tma: {why}" + "\n")
        return code
    except NoServer:
        screen.close()
        screen = None
        feed.session.warn("tma: the tmux server went away" + "\n")
        return 1
    finally:
        if screen is not None:
            screen.close()


def _session_of(feed: Feed, pane_id: str | None) -> str | None:
    if not pane_id or feed.result is None:
        return None
    return next((p.session_name for p in feed.result.snapshot.panes if p.pane_id == pane_id),
                None)

"""What the picker and watch run on: the Feed of snapshots behind the screen, and
`run`, which opens the screen (tma.ui.term), loops (tma.ui.app) and always gives the
terminal back.

The Feed runs one poll cycle per refresh (each second: a popup cannot be nudged, no
hook ever sees its pane) over the row feed every long-running surface shares
(tma.runtime.feed) and turns the rows into `ls --json` row dicts; Enter jumps
exactly as `tma jump --pane` does (tma.runtime.navigate: trail, attention clear).

The configured hosts' rows follow the local ones, read each refresh from the running
daemon's long-lived links (tma.runtime.fleet.view, probe=False: a surface that opens
from a key never waits on SSH). A remote row's pane is HOST:%N, as `tma ls --hosts`
names it; Enter on it is `tma jump HOST:%N`, its action menu fires through the link
(`tma act --menu --pane HOST:%N`), and its preview is what the row says (the screen
is on another machine).

The preview's conversation (ctrl-t, tma.ui.conversation) is the pane's transcript: a
local pane's read on every refresh (its newest page, kept per file state: a quiet file
costs one `stat`); a host's pane asked of its host over the link (a `window` request and
the bodies of its newest messages by `event`, all on one connection, on a thread of its
own so the screen never waits on SSH), only when the view is turned on or the selection
moves to the pane, never on a refresh. What a host answered is kept per pane and the
state its row was in: a selection that comes back to the pane in the same state shows
it again without asking.
"""

from __future__ import annotations

import copy
import os
import threading
import time

from tma.runtime.session import Session
from tma.tmux import read
from tma.tmux.adapter import TmuxError
from tma.ui import table
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
        self.remote_rows: list[dict] = []  # the hosts' rows (ls --json dicts, pane HOST:%N)
        self.host_notes: list[str] = []  # one line per host that has no rows to show
        self.host_scopes: dict[str, tuple[str, ...] | None] = {}  # what each host grants
        self._menus: tuple | None = None  # (the action set, a broker): a local menu's offer
        # a host pane's conversation: pane -> (the row's state and since when asked, what
        # came back); the panes asked now, on their threads
        self._talks: dict[str, tuple[tuple, dict]] = {}
        self._asking: set[str] = set()
        self._talk_lock = threading.Lock()

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
        if not first:  # the first frame is the local stamps alone: no hosts file parsed
            self.read_hosts()

    def read_hosts(self) -> None:
        """The hosts' rows from the running daemon (a local socket read, no SSH). With
        no hosts file nothing is imported or read: most people have no fleet."""
        if not os.path.exists(self.session.paths.hosts_file()):
            self.remote_rows, self.host_notes, self.host_scopes = [], [], {}
            return
        from tma.runtime.fleet import hosts, view as fleet_view

        try:
            side = fleet_view.Remote(self.session, probe=False)
        except hosts.HostError as exc:
            self.remote_rows, self.host_notes = [], [f"hosts: {exc}"]
            return
        if not side.configured:
            self.remote_rows, self.host_notes = [], []
            return
        self.remote_rows = [dict(d, pane=f"{d['host']}:{d['pane']}") for d in side.rows(self.sel)]
        self.host_notes = host_notes(side, self.remote_rows)
        self.host_scopes = {name: side.scopes(name) for name in side.configured}

    def rows(self) -> list[dict[str, object]]:
        from tma.ui import rows as render

        git = self.git
        return [render.row_dict(r, server="", host="", git=git)
                for r in self.rows_feed.rows()] + self.remote_rows

    def remote_row(self, pane_id: str | None) -> dict | None:
        """The remote row named HOST:%N (None: a local pane id, or a row gone)."""
        if not pane_id or ":" not in pane_id:
            return None
        return next((d for d in self.remote_rows if d["pane"] == pane_id), None)

    def client(self):
        """The acting client (the one Enter moves), or None when there is none."""
        from tma.runtime.navigate import NoClient

        try:
            return self._navigator().client()
        except (NoClient, TmuxError):
            return None

    def _navigator(self):
        """A Navigator on the last refresh's rows and the clients as they are now. The
        acting client is the most recently active one, and since that refresh (up to a
        second ago) one may have attached (a picker opened in a window before its client
        came), left, or been the one just clicked in. Raises TmuxError."""
        from tma.runtime.navigate import Navigator

        assert self.result is not None
        result = copy.copy(self.result)
        result.snapshot = result.snapshot.replace(clients=read.list_clients(self.server))
        return Navigator(self.session, result)

    def preview(self, pane_id: str | None) -> str | None:
        if not pane_id:
            return None
        if ":" in pane_id:  # a host's pane: its screen is on another machine
            row = self.remote_row(pane_id)
            return remote_preview(row) if row is not None else None

        try:
            got = read.capture_many(self.server, [(pane_id, 0)])
        except TmuxError:
            return None
        cap = got.get(pane_id)
        return cap.body if cap is not None else None

    #: The most events a conversation reads (its newest; a page's budget may hold fewer).
    TALK_LAST = 120
    #: A host's newest messages whose whole text is fetched (one `event` request each).
    TALK_BODIES = 8

    def conversation(self, pane_id: str | None, how: str = "refresh") -> dict | None:
        """The pane's conversation for tma.ui.conversation: its transcript's newest events,
        newest first, with their bodies, or a note saying why there are none. `how`
        (tma.ui.app: fresh, cached, refresh) says whether a host may be asked."""
        if not pane_id:
            return None
        if ":" in pane_id:
            return self.remote_conversation(pane_id, how)
        # the transcript room only once the conversation is toggled (the first frame and
        # a picker that never shows it do not pay for it)
        from tma.runtime.transcript import locate, read as transcript, stores
        from tma.ui import transcript as document

        if self.result is None:  # no cycle read yet: "reading" rather than a wrong note
            return None
        row = next((r for r in self.result.rows if r.pane.pane_id == pane_id), None)
        if row is None:
            return {"events": [], "note": f"{pane_id} runs no agent tma knows"}
        try:
            window = transcript.window(locate.target_of(row), self.session.env,
                                       last=self.TALK_LAST, bodies=True)
        except stores.TranscriptError as exc:
            return {"agent": row.agent, "events": [], "note": str(exc)}
        return {"agent": row.agent, "events": document.document(window, pane_id)["events"]}

    def remote_conversation(self, pane_id: str, how: str) -> dict:
        """A host's pane: what its host answered (kept per pane and the row's state), a
        request started on a thread when `how` allows one, or a note."""
        row = self.remote_row(pane_id)
        host, _, pane = pane_id.rpartition(":")
        if row is None:
            return {"events": [], "note": f"{pane_id} is gone"}
        key = (row.get("state"), row.get("since_ms") or row.get("since"))
        with self._talk_lock:
            kept = self._talks.get(pane_id)
            busy = pane_id in self._asking
            ask = not busy and (how == "fresh" or (how == "cached" and (
                kept is None or kept[0] != key)))
            if ask:
                self._asking.add(pane_id)
        if ask:
            threading.Thread(target=self._ask_host, args=(pane_id, key), daemon=True,
                             name=f"talk {pane_id}").start()
        if ask or busy:
            shown = dict(kept[1]) if kept is not None else {"agent": row.get("agent"),
                                                             "events": []}
            shown["asking"] = f"asking {host} for {pane}'s conversation…"
            return shown
        if kept is not None:
            return kept[1]
        return {"agent": row.get("agent"), "events": [],
                "note": f"ctrl-t twice asks {host} for it"}

    def _ask_host(self, pane_id: str, key: tuple) -> None:
        """One conversation with the host (its own thread): the window and its newest
        messages' bodies, kept for the pane; a failure kept as a note."""
        from tma.runtime.fleet import hosts, read as fleet_read
        from tma.ui import transcript as document

        host = pane_id.rpartition(":")[0]
        said: dict
        try:
            window = fleet_read.conversation(self.session, pane_id, last=self.TALK_LAST,
                                             bodies=self.TALK_BODIES)
            events = document.document(window, pane_id, host)["events"]
            # a message whose body did not come shows its first words: say so
            said = {"agent": window.agent, "events": events, "partial": any(
                e["kind"] in fleet_read.MESSAGES and e.get("body") is None for e in events)}
        except LookupError:
            said = {"events": [], "note": f"{host} has no agent pane {pane_id}"}
        except fleet_read.Refused as exc:
            said = {"events": [], "note": f"{host} said {exc.code}: {exc.message}"}
        except fleet_read.HostDown as exc:
            said = {"events": [], "note": f"host {host} did not answer: {exc.state}"
                    + (f" ({exc.error})" if exc.error else "")}
        except hosts.HostError as exc:
            said = {"events": [], "note": str(exc)}
        except Exception as exc:  # noqa: BLE001 - a thread's failure is the view's note
            said = {"events": [], "note": f"reading {pane_id}'s conversation failed: {exc}"}
        with self._talk_lock:
            self._talks[pane_id] = (key, said)
            self._asking.discard(pane_id)

    def action_menu(self, pane_id: str) -> str:
        """`tma act --menu --pane ID` on the acting client, run by the tmux server (it must
        outlive a popup that closes first); '' or why not."""
        from tma.runtime.navigate import Navigator
        from tma.tmux import nav

        client = self.client() if self.result is not None else None
        if client is None:
            return "no attached tmux client to show the action menu on"
        # --message-line: run by the tmux server, its stderr would reach nobody
        argv = Navigator(self.session, self.result).child_argv() + [
            "act", "--menu", "--pane", pane_id, "--client", client.name, "--message-line"]
        if ":" in pane_id:
            why = self.remote_action_refusal(pane_id)
            if why:
                return why
            row = self.remote_row(pane_id)
            if row is not None and row.get("episode_ms"):  # what the person saw: the binder
                argv += ["--expect-episode", str(row["episode_ms"])]
        try:
            nav.run_detached(self.server, argv)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""

    def jump(self, pane_id: str) -> str:
        """Jump the acting client there as `tma jump --pane` does; '' or why not."""
        from tma.runtime.navigate import NoClient

        if ":" in pane_id:
            return self.jump_remote(pane_id)
        if self.result is None or not any(r.pane.pane_id == pane_id for r in self.result.rows):
            return f"pane {pane_id} is gone"
        try:
            self._navigator().to_pane(pane_id)
        except NoClient as exc:
            return str(exc)
        except TmuxError as exc:
            return f"tmux: {exc}"
        return ""


    def jump_remote(self, name: str) -> str:
        """`tma jump HOST:%N`: a local window logged in to the host, attached to the pane;
        '' or why not (what the Navigator would print goes to the footer instead)."""
        from tma.runtime.fleet import hosts
        from tma.runtime.navigate import NoClient

        if self.result is None:
            return "no tmux server to open the host's window in"
        said: list[str] = []
        warn, self.session.warn = self.session.warn, said.append
        try:
            code = self._navigator().to_remote(name)
        except (NoClient, hosts.HostError) as exc:
            return str(exc)
        except TmuxError as exc:
            return f"tmux: {exc}"
        finally:
            self.session.warn = warn
        if code:
            return " ".join(s.strip() for s in said).removeprefix("tma: ") or \
                f"could not open {name}"
        return ""

    def action_refusal(self, pane_id: str) -> str:
        """Why the pane's action menu would offer nothing ('' when it offers something):
        said in the picker, which stays open, rather than a menu that never comes (the
        picker closes first for it) or an entry tmux would answer `returned 4`."""
        why = (self.remote_action_refusal(pane_id) if ":" in pane_id
               else self.local_action_refusal(pane_id))
        if not why and self.result is not None and self.client() is None:
            why = "no attached tmux client to show the action menu on"
        return why

    def local_action_refusal(self, pane_id: str) -> str:
        """Nothing fireable on this local pane now: tma act --menu's own check, on the
        rows this screen shows."""
        from tma.runtime.act import describe, registry

        row = next((r for r in self.result.rows if r.pane.pane_id == pane_id), None) \
            if self.result is not None else None
        if row is None:
            return f"pane {pane_id} is gone"
        try:
            if self._menus is None:
                from tma.runtime.act.fire import Broker
                from tma.runtime.cycle import Cycle

                cycle = Cycle(self.server, self.cfg, self.session.g.manifest_dir)
                self._menus = (registry.load(), Broker(self.server, self.cfg, cycle, _now_ms))
            aset, broker = self._menus
            offered = describe.menu_actions(broker, aset, row.pane, row.stamp, row.agent)
        except Exception:  # noqa: BLE001 - tma act --menu checks again and says why
            return ""
        if offered:
            return ""
        state = row.stamp.state + (f"/{row.stamp.detail}" if row.stamp.detail else "")
        return f"no actions are fireable on {pane_id} right now ({row.agent or '?'} is {state})"

    def remote_action_refusal(self, pane_id: str) -> str:
        """Why a host's pane has no action menu here ('' when it has one): hosts.toml
        grants this machine nothing to fire there, the host's serve grants nothing of
        it, or nothing granted fires in the pane's state (tma.runtime.fleet.act.offered:
        the menu offers only what the host would fire)."""
        from tma.runtime.act import registry
        from tma.runtime.fleet import act as fleet_act, hosts

        host_name = pane_id.rpartition(":")[0]
        row = self.remote_row(pane_id)
        if row is not None and row.get("stale"):  # its menu's entries could not reach it
            return (f"host {host_name} is offline ({table.stale_note(row)}): its actions "
                    "come back with it")
        try:
            host = hosts.get(self.session, host_name)
            aset = registry.load()
        except (hosts.HostError, registry.BundledActionError) as exc:
            return str(exc)
        _offered, why = fleet_act.offered(aset.actions.values(), host, pane_id, row,
                                          self.host_scopes.get(host.name))
        return why


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def host_notes(side, rows: list[dict]) -> list[str]:
    """One line per host the rows do not show: offline or connecting with no row kept
    (a host never vanishes silently); with no daemon holding the hosts, one line for
    them all. A surface opened from a key opens no SSH of its own (a popup would wait
    on a slow host, and every open would be a login), so the daemon is what a person
    starts to see the fleet here, and the line says so where the rows would be: a
    footer message would be gone before anyone reads it."""
    if side.cached is None:
        n = len(side.configured)
        return [f"{n} host{'' if n == 1 else 's'}: {'its' if n == 1 else 'their'} rows "
                "need `tma daemon`"]
    with_rows = {d["host"] for d in rows}
    out = []
    for h in side.entries():
        if h["state"] != "online" and h["name"] not in with_rows:
            why = f" ({h['link']}: {h['error']})" if h.get("error") else f" ({h['link']})"
            out.append(f"{h['name']}  {h['state']}{why}")
    return out


def remote_preview(row: dict) -> str:
    """What a host's row can show in the preview: its screen stays on its machine."""
    lines = [f"{row['pane']}  {row.get('agent') or '?'} on host {row['host']}"]
    if row.get("pending_summary"):
        lines.append(f"asks: {row['pending_summary']}")
    if row.get("detail"):
        lines.append(f"detail: {row['detail']}")
    if row.get("stale"):
        age = row.get("age_ms")
        lines.append("stale: the host is offline; this is its last word"
                     + (f", {age // 1000}s old" if age is not None else ""))
    lines.append("")
    lines.append("(the screen is on the host: enter opens a window there)")
    return "\n".join(lines)


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

"""Moving a tmux client to an agent pane: `tma jump`, the picker's Enter, the menus.

One Navigator per cycle result: it picks the acting client (tma.core.nav), reads and
writes the client's trail, and issues the move (tma.tmux.nav). Forward jumps (to a
pane, --attention, --blocked, --next) record the pane the client was showing on its
trail; --back pops it and --home unwinds it. Notes for a person (nothing to jump to)
go to the Session's warn; they are not errors (exit 0).
"""

from __future__ import annotations

import os
import sys
import time

from tma.core import nav as order, states
from tma.core.errors import NoPane
from tma.core.nav import NoClient
from tma.core.untrusted import clean, pane_id_ok
from tma.tmux import nav, read
from tma.tmux.nav import menu_text

__all__ = ["NO_ORIGIN", "NoClient", "Navigator", "attach", "self_argv"]

NO_ORIGIN = ("tma: nowhere to go back to: no earlier jump from this client is recorded "
             "(or the panes it left have closed)")
#: How long a fleet jump watches its new window's login: until the host's tmux draws (it
#: attached), the login ends (it failed: said, exit 1), or this passes (a login still
#: asking something, a password say: the person is there to answer it).
LOGIN_SETTLE_S = 10.0
#: What ssh says when the host's key refuses a terminal: `restrict` in authorized_keys,
#: the forced command of a key that serves the fleet link only.
_NO_PTY = "PTY allocation request failed"


def self_argv() -> list[str]:
    """How a menu entry runs this same tma."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "__main__.py" or not argv0:
        return [sys.executable, "-m", "tma"]
    if os.sep in argv0 and os.path.exists(argv0):
        return [os.path.abspath(argv0)]
    return [argv0]


class Navigator:
    """Jumps on `session`'s server from one cycle's `result`, within the selector `sel`
    (none: every row)."""

    def __init__(self, session, result, sel=None) -> None:
        self.session = session
        self.g = session.g
        self.server = session.server
        self.result = result
        self.sel = sel
        self.snap = result.snapshot
        self.live = {p.pane_id: p for p in self.snap.panes}
        self._client = None

    def say(self, text: str) -> None:
        self.session.warn(text + "\n")

    # -- inputs
    def client(self):
        """The acting client; raises NoClient."""
        if self._client is None:
            self._client = order.pick_client(self.snap.clients, self.snap.panes,
                                             self.g.client,
                                             self.session.env.get("TMUX_PANE") or None)
        return self._client

    def scoped(self) -> list:
        if self.sel is None or self.sel.empty:
            return list(self.result.rows)
        git = None
        if self.sel.needs_git:
            from tma.runtime.git import GitInfo

            git = GitInfo()
        return self.session.select(self.result.rows, self.sel, git)

    def _scope_note(self, msg: str, why: str) -> int:
        in_scope = self.sel is not None and not self.sel.empty
        self.say(f"tma: {msg}{' in scope' if in_scope else ''}: {why}")
        return 0

    # -- moves
    def _go(self, pane, *, clear_attention: bool) -> int:
        """Move the client to `pane`, the pane it leaves pushed on its trail."""
        client = self.client()
        old = nav.read_trail(self.server, client.name)
        origin = client.pane_id if client.pane_id != pane.pane_id else ""
        new = order.push(old, origin, set(self.live))
        nav.jump(self.server, client.name, client.session_name, pane,
                 clear_attention=clear_attention, trail=new if new != old else None)
        return 0

    def forward(self, direction: str) -> int:
        """--blocked, --attention, or --next (any other direction)."""
        rows = self.scoped()
        if direction == "blocked":
            target = order.longest_blocked(rows)
            if target is None:
                return self._scope_note("no agent is blocked",
                                        "nothing is waiting for your answer")
            return self._go(target.pane, clear_attention=True)
        if direction == "attention":
            ordered = order.attention_order(rows)
            if not ordered:
                return self._scope_note("no agent is waiting for you",
                                        "none is blocked and no finished turn is unseen")
            target = order.after(ordered, self.client().pane_id)
            return self._go(target.pane, clear_attention=True)
        if not rows:
            return self._scope_note("no agent panes to jump to", "tma ls lists what tma sees")
        current = self.live.get(self.client().pane_id)
        target = order.next_by_position(rows, current.order_key if current is not None
                                        else None)
        return self._go(target.pane, clear_attention=False)

    def to_pane(self, pane_id: str) -> int:
        """`tma jump --pane ID` (and the picker's Enter). Raises NoPane, NoClient, TmuxError."""
        row = next((r for r in self.result.rows if r.pane.pane_id == pane_id), None)
        if row is None:
            if pane_id not in self.live:
                raise NoPane(pane_id)
            self.say(f"tma: no agent in pane {pane_id}")
            return 0
        return self._go(row.pane, clear_attention=True)

    def to_remote(self, name: str) -> int:
        """`tma jump HOST:%N`: the client moves to a local window running an interactive
        login to the host that attaches to that pane (tma.runtime.fleet.links.attach_argv); the
        window is tagged @tma_remote=HOST:%N, and the next jump there reuses it while it
        lives. A new window's login is watched until the host's tmux draws there
        (_settle): one that ends at once (a key forced to `tma serve`, a refused key, no
        tma there) is exit 1 saying why, its window closed and the client back where it
        was. Raises HostError (an unknown host), NoClient, TmuxError."""
        # the fleet's modules (hosts.toml's parser, the link) only for a host's pane: a
        # local jump would pay ~30 ms for them
        from tma.runtime.fleet import hosts as store, links as fleet

        host_name, _, pane_id = name.rpartition(":")
        if not pane_id_ok(pane_id):  # a host's row may name anything: only %N goes on
            raise NoPane(clean(name, 64))
        host = store.get(self.session, host_name)
        client = self.client()
        tag = f"{host.name}:{pane_id}"
        argv = fleet.attach_argv(host, pane_id)
        existing = nav.remote_panes(self.server, tag)
        if existing:
            target = existing[0]
        else:
            session = next((p.session_id for p in self.snap.panes
                            if p.session_name == client.session_name), None)
            target = nav.new_remote_window(self.server, session or client.session_name, tag,
                                           argv)
        pane = next((p for p in read.every_pane(self.server) if p.pane_id == target), None)
        if pane is None:  # the window went (closed by hand, or a tmux that kept no pane)
            self.say(f"tma: the window for {tag} closed at once: try `{' '.join(argv)}` "
                     "by hand")
            return 1
        self.live[pane.pane_id] = pane
        old = nav.read_trail(self.server, client.name)
        code = self._go(pane, clear_attention=False)
        if existing:
            return code
        why = self._settle(target, host, argv)
        if why:
            self._undo(client, target, old)
            self.say(why)
            return 1
        return code

    def _settle(self, target: str, host, argv: list[str]) -> str:
        """Watch a new jump window's login (LOGIN_SETTLE_S): '' once the host's tmux drew
        there or the login is still going, else what failed, in words (the window is
        still there, dead: remain-on-exit, see tma.tmux.nav.new_remote_window)."""
        deadline = time.monotonic() + LOGIN_SETTLE_S
        while True:
            state = nav.remote_window_state(self.server, target)
            if state is None:
                return (f"tma: the window for {host.name} closed at once: try "
                        f"`{' '.join(argv)}` by hand")
            dead, status, attached = state
            if dead:
                return self._ended(target, host, argv, status)
            if attached or time.monotonic() >= deadline:
                if nav.keep_remote_window(self.server, target):
                    return ""
                continue  # it ended while let go: read it as dead
            time.sleep(0.1)

    def _ended(self, target: str, host, argv: list[str], status: int | None) -> str:
        """What a login that ended at once says: its exit status, its last words, and
        what to do. A key that refuses a terminal (`restrict`) is the fleet key, forced
        to `tma serve`: without a login of its own the jump logs in with it."""
        words = nav.remote_window_words(self.server, target)
        said = f"tma: the login to {host.name} ended at once" + (
            f" (exit {status})" if status is not None else "")
        last = clean(words[-1], 200) if words else ""
        if any(_NO_PTY in w for w in words) and not host.login:
            return (f"{said}: the host's key runs only `tma serve` (the fleet link's forced "
                    f"command), so a login cannot attach there: name a login of your own, "
                    f"`tma host set {host.name} --login TARGET` (docs/how-to/fleet.md, "
                    "section 7)")
        return (f"{said}" + (f": {last}" if last else "") +
                f"; try `{' '.join(argv)}` by hand")

    def _undo(self, client, target: str, old: list[str]) -> None:
        """A failed jump leaves nothing behind: its window closed, the client back on the
        pane it left and its trail as it was."""
        origin = client.pane_id
        nav.close_window(self.server, target)
        pane = next((p for p in read.every_pane(self.server) if p.pane_id == origin), None)
        if pane is None:
            return
        # the window was made in the client's session, so the client is still there;
        # the pane read fresh: tmux picked a window of its own when this one went
        nav.jump(self.server, client.name, client.session_name, pane, clear_attention=False,
                 trail=old)

    def back(self) -> int:
        client = self.client()
        trail = nav.read_trail(self.server, client.name)
        pane_id, rest = order.back(trail, self.live, client.pane_id)
        if pane_id is not None:
            nav.jump(self.server, client.name, client.session_name, self.live[pane_id],
                     clear_attention=False, trail=rest)
            return 0
        return self._nowhere(client, trail)

    def home(self) -> int:
        client = self.client()
        trail = nav.read_trail(self.server, client.name)
        oldest = order.home(trail, self.live)
        if oldest is None:
            return self._nowhere(client, trail)
        nav.jump(self.server, client.name, client.session_name, self.live[oldest],
                 clear_attention=False, trail=[])
        return 0

    def _nowhere(self, client, trail: list[str]) -> int:
        if trail:  # only dead panes on it: clear it
            nav.store_trail(self.server, client.name, [])
        self.say(NO_ORIGIN)
        return 0

    # -- the menus
    def menu(self, cfg, now: int) -> int:
        """--menu: a tmux menu on the client whose entries run `tma jump --pane`."""
        rows = self.scoped()
        if not rows:
            in_scope = self.sel is not None and not self.sel.empty
            self.say("tma: no agent panes" + (" in scope" if in_scope else "")
                     + ": nothing for the menu")
            return 0
        try:
            client = self.client()
        except NoClient as exc:
            raise NoClient(f"{exc}; the menu needs one to show on") from None
        rows = [r for r in rows if r.pane.pane_id != client.pane_id]
        if not rows:
            self.say("tma: no agent panes but this one: nothing for the menu")
            return 0
        base = self.child_argv()
        items = []
        for i, r in enumerate(order.menu_order(rows)):
            key = str(i + 1) if i < 9 else ""
            argv = base + ["jump", "--pane", r.pane.pane_id, "--client", client.name]
            items.append((label(r, cfg, now), key, nav.run_shell_command(argv)))
        nav.display_menu(self.server, client.name, " tma ", items)
        return 0

    def action_menu(self, client, pane_id: str, title: str, actions,
                    extra: tuple[str, ...] = ()) -> None:
        """`tma act --menu`: one entry per action, each running `tma act NAME --pane`
        (with `extra`: a host's pane's binder); an action that asks first gets a nested
        yes/no menu. Each entry says its result on the client's message line
        (--message-line): run by tmux, its stderr would go nowhere, and a refusal (the
        pane moved on since the menu opened) would read `'…' returned 4`."""
        base = self.child_argv()
        items = []
        for i, a in enumerate(actions):
            argv = base + ["act", a.name, "--pane", pane_id, *extra, "--client", client.name,
                           "--message-line"] + (["--yes"] if a.confirm else [])
            command = nav.run_shell_command(argv)
            if a.confirm:
                command = nav.confirm_menu_command(client.name, f"{a.label} on {pane_id}?",
                                                   command)
            items.append((nav.menu_text(a.label), str(i + 1) if i < 9 else "", command))
        nav.display_menu(self.server, client.name, title, items)

    def child_argv(self) -> list[str]:
        """tma with this server (and config, manifests) baked in: how a child (a menu
        entry, the picker's action menu) runs this tma on this server."""
        argv = self_argv()
        flags = self.server.flags()
        if not flags and self.snap.socket_path:
            flags = ["--socket-path", self.snap.socket_path]
        argv += flags
        if self.g.config:
            argv += ["--config", os.path.abspath(self.g.config)]
        if self.g.manifest_dir:
            argv += ["--manifest-dir", os.path.abspath(self.g.manifest_dir)]
        return argv


def label(row, cfg, now: int) -> str:
    """A jump menu entry: the state glyph in its colour, agent, state, place, age, title."""
    cls = row.cls
    glyph, color = cfg.status.get(cls, ("?", "default"))
    color = color.replace("]", "").replace(",", "")
    state = row.stamp.state + (f"/{row.stamp.detail}" if row.stamp.detail else "")
    if cls == states.DONE:
        state = states.DONE
    when = order.age(now - row.stamp.since) if row.stamp.since else "-"
    title = " ".join(row.pane.title.split())
    if len(title) > 32:
        title = title[:31] + "…"
    text = f"{row.agent or '?'}  {state}  {row.pane.locator}  {when}"
    if title:
        text += f"  {title}"
    return f"#[fg={color}]{menu_text(glyph)}#[default] {menu_text(text)}"


def attach(session, pane_id: str) -> int:
    """`tma attach --pane %N` (what a fleet jump runs on the host): outside tmux this
    process becomes `tmux attach` to the pane's session with its window and pane
    selected; inside tmux ($TMUX) the client switches there. Raises NoPane."""
    server = session.server
    pane = next((p for p in read.every_pane(server) if p.pane_id == pane_id), None)
    if pane is None:
        raise NoPane(pane_id)
    if session.env.get("TMUX"):
        nav.switch_to(server, pane_id)
        return 0
    nav.exec_client(nav.attach_argv(server, pane))
    return 0  # not reached: exec replaced this process

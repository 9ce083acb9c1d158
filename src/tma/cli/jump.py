"""`tma jump`: move a tmux client to the agent pane that needs you.

Forward jumps (--attention, --blocked, --next, --pane) record the pane the client
was showing on a per-client trail that --back pops and --home unwinds. --menu
hands tmux a menu whose entries run `tma jump --pane`. Every jump runs a poll
cycle first, so the candidates are read from fresh stamps.
"""

from __future__ import annotations

import os
import sys

from tma.cli import common, spec
from tma.core import states

_NEVER = 1 << 62  # sorts a never-stamped `since` last
NO_ORIGIN = ("tma: nowhere to go back to: no earlier jump from this client is recorded "
             "(or the panes it left have closed)")


class NoClient(Exception):
    pass


def main(session, argv: list[str]) -> int:
    sel, args = spec.parse("jump", argv, session)
    direction = "pane" if args.pane is not None else (args.direction or "next")
    cfg = session.surface_config()
    result = session.cycle()
    job = _Jump(session.g, cfg, session.server, result, sel)
    try:
        if direction == "pane":
            return job.to_pane(args.pane)
        if direction == "back":
            return job.back()
        if direction == "home":
            return job.home()
        if direction == "menu":
            return job.menu()
        return job.forward(direction)
    except NoClient as exc:
        common.err(f"tma: {exc}")
        return common.FAIL


def to_pane(g, cfg, server, result, pane_id: str) -> int:
    """`tma jump --pane ID` for a caller holding a cycle's result (the picker, watch):
    the same trail push and attention clear. Raises NoClient or TmuxError."""
    from tma.runtime.selectors import Selector

    return _Jump(g, cfg, server, result, Selector()).to_pane(pane_id)


def tma_argv(g, cfg, server, result) -> list[str]:
    """How a child (a menu entry, the picker's action menu) runs this tma on this server."""
    from tma.runtime.selectors import Selector

    return _Jump(g, cfg, server, result, Selector()).child_argv()


def pick_client(clients, panes, requested: str | None, env_pane: str | None):
    """The acting client: the named one, else the most recently active client on
    $TMUX_PANE's session, else the most recently active client. Control-mode
    clients are never picked implicitly (nobody sees their focus)."""
    if requested:
        for c in clients:
            if c.name == requested:
                return c
        raise NoClient(f"no tmux client named {requested!r}")
    seen = [c for c in clients if not c.control_mode]
    if not seen:
        raise NoClient("no attached tmux client to move (run inside tmux or pass --client NAME)")
    if env_pane:
        session = next((p.session_name for p in panes if p.pane_id == env_pane), None)
        mine = [c for c in seen if session is not None and c.session_name == session]
        if mine:
            return max(mine, key=lambda c: c.activity)
    return max(seen, key=lambda c: c.activity)


def attention_order(rows) -> list:
    """Blocked panes longest-blocked first, then done panes longest-done first."""
    def key(r):
        return (r.stamp.since or _NEVER,) + r.pane.order_key

    blocked = sorted((r for r in rows if r.stamp.state == states.BLOCKED), key=key)
    done = sorted((r for r in rows if r.stamp.state == states.IDLE and r.stamp.attention),
                  key=key)
    return blocked + done


def after(ordered: list, current: str | None):
    """The entry after the current pane's, wrapping; the first when it is not listed."""
    ids = [r.pane.pane_id for r in ordered]
    if current in ids:
        return ordered[(ids.index(current) + 1) % len(ordered)]
    return ordered[0]


def next_by_position(rows, current_key: tuple | None):
    """The first agent pane after the current position (session, window, pane); wraps."""
    ordered = sorted(rows, key=lambda r: r.pane.order_key)
    if current_key is not None:
        for r in ordered:
            if r.pane.order_key > current_key:
                return r
    return ordered[0]


def menu_order(rows) -> list:
    """blocked, working, idle, unknown; longest in its state first."""
    return sorted(rows, key=lambda r: (states.STATE_ORDER.get(r.stamp.state, 9),
                                       r.stamp.since or _NEVER) + r.pane.order_key)


def age(ms: int) -> str:
    secs = max(0, ms) // 1000
    if secs < 60:
        return f"{secs}s"
    if secs < 3600:
        return f"{secs // 60}m"
    if secs < 86400:
        return f"{secs // 3600}h"
    return f"{secs // 86400}d"


def self_argv() -> list[str]:
    """How a menu entry runs this same tma."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "__main__.py" or not argv0:
        return [sys.executable, "-m", "tma"]
    if os.sep in argv0 and os.path.exists(argv0):
        return [os.path.abspath(argv0)]
    return [argv0]


class _Jump:
    def __init__(self, g, cfg, server, result, sel) -> None:
        self.g = g
        self.cfg = cfg
        self.server = server
        self.result = result
        self.sel = sel
        self.snap = result.snapshot
        self.live = {p.pane_id: p for p in self.snap.panes}
        self._client = None

    # -- inputs
    def client(self):
        if self._client is None:
            self._client = pick_client(self.snap.clients, self.snap.panes, self.g.client,
                                       common.env_pane())
        return self._client

    def scoped(self) -> list:
        if self.sel.empty:
            return list(self.result.rows)
        from tma.runtime.session import Session

        git = None
        if self.sel.needs_git:
            from tma.runtime.git import GitInfo

            git = GitInfo()
        return Session.select(self.result.rows, self.sel, git)

    def _scope_note(self, msg: str, why: str) -> int:
        common.err(f"tma: {msg}{'' if self.sel.empty else ' in scope'}: {why}")
        return 0

    # -- moves
    def _go(self, pane, *, clear_attention: bool, record: bool) -> int:
        from tma.tmux import nav

        client = self.client()
        trail = None
        if record:
            old = nav.read_trail(self.server, client.name)
            origin = client.pane_id if client.pane_id != pane.pane_id else ""
            new = nav.push(old, origin, set(self.live))
            trail = new if new != old else None
        nav.jump(self.server, client.name, client.session_name, pane,
                 clear_attention=clear_attention, trail=trail)
        return 0

    def forward(self, direction: str) -> int:
        rows = self.scoped()
        if direction == "blocked":
            cands = [r for r in rows if r.stamp.state == states.BLOCKED]
            if not cands:
                return self._scope_note("no agent is blocked",
                                        "nothing is waiting for your answer")
            target = min(cands, key=lambda r: (r.stamp.since or _NEVER,) + r.pane.order_key)
            return self._go(target.pane, clear_attention=True, record=True)
        if direction == "attention":
            ordered = attention_order(rows)
            if not ordered:
                return self._scope_note("no agent is waiting for you",
                                        "none is blocked and no finished turn is unseen")
            target = after(ordered, self.client().pane_id)
            return self._go(target.pane, clear_attention=True, record=True)
        if not rows:
            return self._scope_note("no agent panes to jump to",
                                    "tma ls lists what tma sees")
        current = self.live.get(self.client().pane_id)
        target = next_by_position(rows, current.order_key if current is not None else None)
        return self._go(target.pane, clear_attention=False, record=True)

    def to_pane(self, pane_id: str) -> int:
        row = next((r for r in self.result.rows if r.pane.pane_id == pane_id), None)
        if row is None:
            if pane_id not in self.live:
                raise common.NoPane(pane_id)
            common.err(f"tma: no agent in pane {pane_id}")
            return 0
        return self._go(row.pane, clear_attention=True, record=True)

    def back(self) -> int:
        from tma.tmux import nav

        client = self.client()
        trail = nav.read_trail(self.server, client.name)
        rest = list(trail)
        while rest:
            pane_id = rest.pop()
            if pane_id in self.live and pane_id != client.pane_id:
                nav.jump(self.server, client.name, client.session_name, self.live[pane_id],
                         clear_attention=False, trail=rest)
                return 0
        if trail:
            nav.store_trail(self.server, client.name, [])
        common.err(NO_ORIGIN)
        return 0

    def home(self) -> int:
        from tma.tmux import nav

        client = self.client()
        trail = nav.read_trail(self.server, client.name)
        oldest = next((p for p in trail if p in self.live), None)
        if oldest is None:
            if trail:
                nav.store_trail(self.server, client.name, [])
            common.err(NO_ORIGIN)
            return 0
        nav.jump(self.server, client.name, client.session_name, self.live[oldest],
                 clear_attention=False, trail=[])
        return 0

    # -- the menu
    def menu(self) -> int:
        from tma.tmux import nav

        rows = self.scoped()
        if not rows:
            common.err("tma: no agent panes" + ("" if self.sel.empty else " in scope")
                       + ": nothing for the menu")
            return 0
        try:
            client = self.client()
        except NoClient as exc:
            raise NoClient(f"{exc}; the menu needs one to show on") from None
        rows = [r for r in rows if r.pane.pane_id != client.pane_id]
        if not rows:
            common.err("tma: no agent panes but this one: nothing for the menu")
            return 0
        now = common.now_ms()
        base = self.child_argv()
        items = []
        for i, r in enumerate(menu_order(rows)):
            key = str(i + 1) if i < 9 else ""
            argv = base + ["jump", "--pane", r.pane.pane_id, "--client", client.name]
            items.append((self.label(r, now), key, nav.run_shell_command(argv)))
        nav.display_menu(self.server, client.name, " tma ", items)
        return 0

    def child_argv(self) -> list[str]:
        """tma with this server (and config, manifests) baked in."""
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

    def label(self, row, now: int) -> str:
        from tma.tmux.nav import menu_text

        cls = row.cls
        glyph, color = self.cfg.status.get(cls, ("?", "default"))
        color = color.replace("]", "").replace(",", "")
        state = row.stamp.state + (f"/{row.stamp.detail}" if row.stamp.detail else "")
        if cls == states.DONE:
            state = states.DONE
        when = age(now - row.stamp.since) if row.stamp.since else "-"
        title = " ".join(row.pane.title.split())
        if len(title) > 32:
            title = title[:31] + "…"
        text = f"{row.agent or '?'}  {state}  {row.pane.locator}  {when}"
        if title:
            text += f"  {title}"
        return f"#[fg={color}]{menu_text(glyph)}#[default] {menu_text(text)}"

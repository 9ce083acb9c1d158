"""The picker (bare `tma`) and `tma watch`, driven in real panes of a private server.

Each screen runs in a pane of its own, is driven with send-keys and read back with
capture-pane; the agents are fake (real processes named like the agent); a real attached
PTY client is the one Enter moves.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.screens import row_of, screen, screen_pane, tma_command, wait_screen

FRESH = "[fold]\nfreshness_secs = 3600\n"


def keys(srv, pane: str, *names: str) -> None:
    srv.tmux("send-keys", "-t", pane, *names)


def type_text(srv, pane: str, text: str) -> None:
    srv.tmux("send-keys", "-l", "-t", pane, text)


def alive(srv, pane: str) -> bool:
    return pane in srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def agents(srv, n: int = 3) -> list[str]:
    """n fake agents in session s: the first blocked, the second working, the rest idle."""
    srv.config.write_text(FRESH)
    panes = [srv.agent_pane() for _ in range(n)]
    srv.draw(panes[0], "FAKE-BLOCKED allow this?\n")
    srv.draw(panes[1], "FAKE-WORKING on it\n")
    for p in panes[2:]:
        srv.draw(p, "FAKE-IDLE ready\n")
    srv.ls()
    return panes


# ---------------------------------------------------------------- the picker


@pytest.mark.tmux_contract
@pytest.mark.parametrize("size", [(80, 24), (200, 50), (40, 12)])
def test_picker_rows_order_filter_and_moves(srv, size):
    blocked, working, idle = agents(srv)
    width, height = size
    ui = screen_pane(srv, width=width, height=height)
    s = wait_screen(srv, ui, lambda s: "⚑" in s and "●" in s and "○" in s)
    lines = s.splitlines()
    order = [i for i, ln in enumerate(lines) for g in "⚑●○" if g in ln[:4]]
    assert order == sorted(order)
    first = next(ln for ln in lines if "⚑" in ln[:4])
    assert first.startswith(">")  # blocked first, and selected
    assert "blocked" in first
    if width >= 76:  # the preview of the selected pane
        s = wait_screen(srv, ui, lambda s: "── s:" in s and "FAKE-BLOCKED allow this?" in s)
    else:
        assert "FAKE-BLOCKED allow this?" not in s

    keys(srv, ui, "Down")
    wait_screen(srv, ui, lambda s: row_of(s, "●").startswith(">"))
    keys(srv, ui, "C-n")
    wait_screen(srv, ui, lambda s: row_of(s, "○").startswith(">"))
    keys(srv, ui, "C-n")  # wraps
    wait_screen(srv, ui, lambda s: row_of(s, "⚑").startswith(">"))
    keys(srv, ui, "C-p")
    wait_screen(srv, ui, lambda s: row_of(s, "○").startswith(">"))
    keys(srv, ui, "Up")
    wait_screen(srv, ui, lambda s: row_of(s, "●").startswith(">"))

    type_text(srv, ui, "wrk")  # fuzzy: w..r..k in "working"
    s = wait_screen(srv, ui, lambda s: "> wrk" in s and "⚑" not in s)
    assert "●" in s and "○" not in s
    keys(srv, ui, "BSpace", "BSpace", "BSpace")
    wait_screen(srv, ui, lambda s: "⚑" in s)
    type_text(srv, ui, "zzzz")
    wait_screen(srv, ui, lambda s: "no agent matches the filter" in s)
    for _ in range(4):
        keys(srv, ui, "BSpace")
    wait_screen(srv, ui, lambda s: "⚑" in s and "○" in s)

    keys(srv, ui, "Tab")  # no menu to show (no action covers the fake agent): said here
    wait_screen(srv, ui, lambda s: "no actions are fireable" in s and " tma  3/3" in s)
    assert alive(srv, ui)
    keys(srv, ui, "Escape")
    srv.wait_for(lambda: not alive(srv, ui))


def test_picker_tab_on_a_pane_with_nothing_fireable_says_so_and_stays(srv, attach):
    # the fake agents are covered by no bundled action: the menu would offer nothing.
    # The picker closes only for a menu that comes; else it says why, where you look
    blocked, _working, _idle = agents(srv)
    c = attach("s")
    ui = screen_pane(srv, "--client", c.name, width=100, height=30)
    wait_screen(srv, ui, lambda s: row_of(s, "⚑").startswith(">"))
    keys(srv, ui, "Tab")
    wait_screen(srv, ui, lambda s: f"no actions are fireable on {blocked} right now "
                                   "(fake is blocked/permission)" in s)
    assert alive(srv, ui)


def _stamp(srv, pane: str, agent: str, state: str) -> None:
    now = time.time_ns() // 1_000_000
    for key, value in (("@agent_since", now), ("@agent_state", state),
                       ("@agent_source", "hook"), ("@agent_evidence_at", now),
                       ("@agent_name", agent), ("@agent_pid", 0), ("@agent_stamped_at", now)):
        srv.tmux("set-option", "-p", "-t", pane, key, str(value))


def _claude_and_codex_under(srv, width: int, *command: str):
    """A blocked claude titled "fix the command parser" and an idle codex, and the
    picker (or COMMAND) running in a WIDTHx24 session: its pane and first full screen."""
    srv.config.write_text(FRESH)
    claude = srv.agent_pane("claude")
    codex = srv.agent_pane("codex")
    srv.tmux("select-pane", "-t", claude, "-T", "fix the command parser")
    _stamp(srv, claude, "claude", "blocked")
    _stamp(srv, codex, "codex", "idle")
    ui = srv.tmux("new-session", "-d", "-s", "ui", "-x", str(width), "-y", "24", "-P", "-F",
                  "#{pane_id}", f"cd {os.getcwd()} && TERM=xterm-256color "
                  f"{tma_command(srv, *command, manifests=False)}").strip()
    srv.tmux("resize-window", "-t", "ui", "-x", str(width), "-y", "24")
    return ui, wait_screen(srv, ui, lambda s: "claude" in s and "codex" in s)


def test_picker_ranks_the_best_match_first_as_fzf_does(srv):
    """Typing `cod` puts codex (a prefix of its name) above a blocked claude whose title
    says "command" (c, o ... d scattered), and selects it: Enter would go there."""
    ui, s = _claude_and_codex_under(srv, 80)
    assert row_of(s, "claude").startswith(">")  # blocked first while nothing is typed
    type_text(srv, ui, "cod")
    s = wait_screen(srv, ui, lambda s: "> cod" in s and "claude" in s)
    rows = [ln for ln in s.splitlines() if "claude" in ln[:12] or "codex" in ln[:12]]
    assert "codex" in rows[0] and rows[0].startswith(">"), s
    keys(srv, ui, "BSpace", "BSpace", "BSpace")
    s = wait_screen(srv, ui, lambda s: "> cod" not in s and row_of(s, "claude").startswith(">"))


def test_an_empty_picker_says_how_to_start_and_draws_no_divider(srv):
    srv.shell_pane()
    ui = screen_pane(srv, width=100, height=24)
    s = wait_screen(srv, ui, lambda s: "esc quit" in s)
    assert "no agent is running in this tmux server" in s and "start one (claude" in s
    assert "──" not in s, s
    keys(srv, ui, "Escape")
    srv.wait_for(lambda: not alive(srv, ui))


@pytest.mark.parametrize("args", [(), ("watch",)], ids=["picker", "watch"])
def test_a_broken_config_is_shown_until_a_key_not_lost_with_the_pane(srv, args):
    """prefix a (a popup) and prefix G (a split) close with the process: the error stays
    on screen until a key is pressed."""
    srv.agent_pane()
    srv.config.write_text("[fold\ndwell_secs = 3\n")
    ui = screen_pane(srv, *args, width=100, height=24)
    s = wait_screen(srv, ui, lambda s: "press any key to close" in s)
    assert "config" in s and str(srv.config) in s.replace("\n", ""), s
    time.sleep(1.0)
    assert alive(srv, ui)  # still there, the error readable
    keys(srv, ui, "x")
    srv.wait_for(lambda: not alive(srv, ui))


def test_picker_scope_toggle(srv):
    srv.config.write_text(FRESH)
    mine = srv.agent_pane(session="ui")  # the session the picker runs in
    other = srv.agent_pane(session="s")
    srv.ls()
    ui = srv.tmux("new-window", "-d", "-t", "ui:", "-P", "-F", "#{pane_id}",
                  f"cd {os.getcwd()} && TERM=xterm-256color {tma_command(srv)}").strip()
    srv.tmux("resize-window", "-t", "ui", "-x", "100", "-y", "30")
    s = wait_screen(srv, ui, lambda s: "ui:0.0" in s and "s:0.0" in s)
    assert "all sessions" in s
    keys(srv, ui, "C-s")
    s = wait_screen(srv, ui, lambda s: "this session" in s)
    wait_screen(srv, ui, lambda s: "ui:0.0" in s and "s:0.0" not in s)
    keys(srv, ui, "C-s")
    wait_screen(srv, ui, lambda s: "all sessions" in s and "s:0.0" in s)
    keys(srv, ui, "q")
    srv.wait_for(lambda: not alive(srv, ui))
    assert mine and other


@pytest.mark.tmux_contract
def test_picker_enter_jumps_the_attached_client_and_clears_attention(srv, attach):
    home = srv.shell_pane()  # s:0, what the client shows
    srv.config.write_text(FRESH)
    target = srv.agent_pane()
    srv.draw(target, "FAKE-IDLE finished\n")
    srv.option(target, "@agent_attention")
    srv.tmux("set-option", "-p", "-t", target, "@agent_attention", "1")
    srv.ls()
    c = attach("s")
    assert c.pane() == home
    ui = screen_pane(srv, f"--client {c.name}")
    wait_screen(srv, ui, lambda s: row_of(s, "✓").startswith(">"))  # done, selected
    keys(srv, ui, "Enter")
    srv.wait_for(lambda: c.pane() == target)
    srv.wait_for(lambda: srv.option(target, "@agent_attention") == "")
    srv.wait_for(lambda: not alive(srv, ui))  # the picker closes after the jump


def test_picker_survives_a_vanishing_pane_and_a_resize(srv):
    panes = agents(srv)
    ui = screen_pane(srv, width=100, height=30)
    wait_screen(srv, ui, lambda s: s.count(" fake ") >= 3)
    srv.tmux("kill-pane", "-t", panes[0])  # the selected one, even
    s = wait_screen(srv, ui, lambda s: "⚑" not in s and "●" in s)
    assert row_of(s, "●").startswith(">")
    srv.tmux("resize-window", "-t", "ui", "-x", "40", "-y", "12")
    s = wait_screen(srv, ui, lambda s: max(len(ln) for ln in s.splitlines()) <= 40
                    and "●" in s and "── " not in s)
    srv.tmux("resize-window", "-t", "ui", "-x", "25", "-y", "4")
    wait_screen(srv, ui, lambda s: "terminal too small" in s)
    srv.tmux("resize-window", "-t", "ui", "-x", "120", "-y", "30")
    wait_screen(srv, ui, lambda s: "●" in s and "── " in s)
    assert alive(srv, ui)
    keys(srv, ui, "Escape")
    srv.wait_for(lambda: not alive(srv, ui))


def test_picker_no_color_is_plain(srv):
    agents(srv, 2)
    ui = screen_pane(srv, env="NO_COLOR=1")
    wait_screen(srv, ui, lambda s: "⚑" in s)
    styled = srv.tmux("capture-pane", "-p", "-e", "-t", ui)
    assert "\x1b[3" not in styled and "\x1b[9" not in styled  # no foreground colour
    plain_ui = screen_pane(srv, session="ui2")
    wait_screen(srv, plain_ui, lambda s: "⚑" in s)
    assert "\x1b[3" in srv.tmux("capture-pane", "-p", "-e", "-t", plain_ui)  # the control
    for pane in (ui, plain_ui):
        keys(srv, pane, "Escape")


@pytest.mark.parametrize("term", ["dumb", "no-such-terminal"])
def test_picker_on_a_dumb_terminal_draws_plain_frames(srv, term):
    agents(srv, 2)
    ui = srv.tmux("new-session", "-d", "-s", "ui", "-x", "80", "-y", "24", "-P", "-F",
                  "#{pane_id}", f"cd {os.getcwd()} && TERM={term} {tma_command(srv)}").strip()
    s = wait_screen(srv, ui, lambda s: "esc quit" in s and "⚑" in s)
    assert row_of(s, "⚑").startswith(">")
    keys(srv, ui, "Down")
    wait_screen(srv, ui, lambda s: row_of(s.split("tma  ")[-1], "●").startswith(">"))
    keys(srv, ui, "Escape")
    srv.wait_for(lambda: not alive(srv, ui))


def test_no_server_on_a_terminal(srv):
    from tests.helpers.ptyclient import run_on_pty

    env = dict(srv.env, TERM="xterm-256color")
    for args in ([], ["watch"]):  # srv has no server started yet
        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, *args]
        assert run_on_pty(argv, env, timeout=20) == (1, "tma: no tmux server running\n")


def test_bare_tma_without_a_terminal_prints_help(srv):
    res = srv.tma()
    assert res.returncode == 2
    assert res.stdout == "" and "usage: tma" in res.stderr


# ---------------------------------------------------------------- watch


@pytest.mark.parametrize("size", [(80, 24), (200, 50), (40, 12)])
def test_watch_rows_keys_and_advertised_pid(srv, size):
    srv.config.write_text(FRESH)
    blocked, working, idle = agents(srv)
    srv.tmux("set-option", "-p", "-t", working, "@agent_tokens", "12345")
    srv.tmux("set-option", "-p", "-t", working, "@agent_cost_usd", "1.5")
    width, height = size
    ui = screen_pane(srv, "watch", width=width, height=height)
    s = wait_screen(srv, ui, lambda s: "⚑" in s and "●" in s)
    pid = srv.wait_for(lambda: srv.option(ui, "@tma_watch_pid"))
    assert pid.isdigit()
    if width >= 76:
        assert "12.3k tok" in s and "~$1.50" in s
        assert "estimate, not the bill" in s
        wait_screen(srv, ui, lambda s: "FAKE-BLOCKED allow this?" in s)  # the preview
        keys(srv, ui, "p")  # the full table
        s = wait_screen(srv, ui, lambda s: "AGENT" in s and "TOKENS" in s)
        assert "FAKE-BLOCKED allow this?" not in s
    keys(srv, ui, "j")
    wait_screen(srv, ui, lambda s: row_of(s, "●").startswith(">"))
    keys(srv, ui, "k")
    wait_screen(srv, ui, lambda s: row_of(s, "⚑").startswith(">"))
    keys(srv, ui, "g")
    wait_screen(srv, ui, lambda s: "▸ " in s)
    keys(srv, ui, "g")
    wait_screen(srv, ui, lambda s: "▸" not in s)
    keys(srv, ui, "Tab")  # the fake agent has no action: watch says so and stays
    wait_screen(srv, ui, lambda s: "no actions are fireable" in s)
    keys(srv, ui, "q")
    srv.wait_for(lambda: not alive(srv, ui))
    # the session is gone with the pane; a watch in a pane that stays removes its pid
    assert blocked and idle


def test_watch_help_overlay_and_search(srv):
    """`?` draws every key over the body (any key closes it); `/` filters as the picker
    does, best match first, Enter keeps the filter and Esc clears it; narrow, `p` is not
    advertised and says why it does nothing."""
    ui, s = _claude_and_codex_under(srv, 100, "watch")
    assert "? help" in s and "/ search" in s and "p table/preview" in s
    keys(srv, ui, "?")
    s = wait_screen(srv, ui, lambda s: "any key closes this help" in s)
    assert "search anew: type to filter" in s and "codex" not in s
    keys(srv, ui, "j")  # closes the help, moves nothing
    s = wait_screen(srv, ui, lambda s: "any key closes" not in s and "codex" in s)
    assert row_of(s, "claude").startswith(">")
    type_text(srv, ui, "/cod")
    s = wait_screen(srv, ui, lambda s: "/ cod▏" in s and "codex" in s)
    listed = [ln for ln in s.splitlines() if "claude" in ln[:12] or "codex" in ln[:12]]
    assert listed[0].startswith(">") and "codex" in listed[0], s
    keys(srv, ui, "Enter")  # keeps the filter and leaves search: j/k are keys again
    wait_screen(srv, ui, lambda s: "/ cod" in s and "/ cod▏" not in s)
    type_text(srv, ui, "/zq")
    s = wait_screen(srv, ui, lambda s: "no agent matches the filter" in s)
    keys(srv, ui, "Escape")  # clears the filter
    s = wait_screen(srv, ui, lambda s: "/ cod" not in s and row_of(s, "claude").startswith(">"))
    srv.tmux("resize-window", "-t", "ui", "-x", "60", "-y", "24")
    s = wait_screen(srv, ui, lambda s: "? help" in s and "p table" not in s)
    keys(srv, ui, "p")
    wait_screen(srv, ui, lambda s: "need 76 columns" in s)
    keys(srv, ui, "q")
    srv.wait_for(lambda: not alive(srv, ui))


def test_watch_removes_its_pid_on_quit_and_enter_stays_open(srv, attach):
    home = srv.shell_pane()
    srv.config.write_text(FRESH)
    target = srv.agent_pane()
    srv.draw(target, "FAKE-BLOCKED allow this?\n")
    srv.ls()
    c = attach("s")
    ui = srv.tmux("split-window", "-d", "-t", home, "-P", "-F", "#{pane_id}",
                  f"cd {os.getcwd()} && TERM=xterm-256color "
                  f"{tma_command(srv, f'--client {c.name} watch --table --group session', exec_=False)}"
                  f"; sleep 100").strip()
    srv.tmux("resize-window", "-t", "s", "-x", "120", "-y", "40")
    wait_screen(srv, ui, lambda s: "▸ s" in s and "⚑" in s)
    srv.wait_for(lambda: srv.option(ui, "@tma_watch_pid"))
    keys(srv, ui, "Enter")
    srv.wait_for(lambda: c.pane() == target)
    wait_screen(srv, ui, lambda s: f"jumped to {target}" in s)
    keys(srv, ui, "q")
    srv.wait_for(lambda: srv.option(ui, "@tma_watch_pid") == "")
    assert alive(srv, ui)  # the pane stays (sleep), the option is gone


def just_refreshed(srv, pane: str) -> None:
    """Return right after a periodic refresh (the age column moves on each one), so the
    next one is about a second away and a redraw sooner than that is the nudge's."""
    before = screen(srv, pane)
    srv.wait_for(lambda: screen(srv, pane) != before, timeout=3, interval=0.01)


def test_watch_sigusr1_redraws_at_once(srv):
    srv.config.write_text(FRESH)
    pane = srv.agent_pane()
    other = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE ready\n")
    srv.draw(other, "FAKE-WORKING busy\n")
    # stamped in a second after the screens' output: watch (a surface a person reads)
    # consumes a fresh stamp only over a window that printed nothing since
    srv.next_second()
    srv.ls()
    ui = screen_pane(srv, "watch", width=120, height=30)
    wait_screen(srv, ui, lambda s: "○" in s)
    pid = int(srv.wait_for(lambda: srv.option(ui, "@tma_watch_pid")))
    worst = 0.0
    for state, glyph in (("blocked", "⚑"), ("idle", "○"), ("blocked", "⚑"), ("idle", "○")):
        just_refreshed(srv, ui)
        # a stamp changed behind watch's back (as a hook would), then the nudge
        srv.tmux("set-option", "-p", "-t", pane, "@agent_state", state)
        t0 = time.monotonic()
        os.kill(pid, 10)  # SIGUSR1
        wait_screen(srv, ui, lambda s, g=glyph: row_of(s, "s:0.0").lstrip("> ")[:1] == g,
                    timeout=5)
        worst = max(worst, time.monotonic() - t0)
    assert worst < 0.3, worst

    # the focus hooks' path: clear-attention (arriving at the other pane) nudges watch,
    # which then shows the done mark that was set on this one meanwhile
    just_refreshed(srv, ui)
    srv.tmux("set-option", "-p", "-t", pane, "@agent_attention", "1")
    t0 = time.monotonic()
    assert srv.tma("clear-attention", other).returncode == 0
    wait_screen(srv, ui, lambda s: "✓" in row_of(s, "s:0.0"), timeout=5)
    assert time.monotonic() - t0 < 0.8  # a whole `tma clear-attention` process included


def test_watch_selectors_narrow_what_is_shown(srv):
    agents(srv)
    ui = screen_pane(srv, "watch", "--state", "blocked,idle", width=120, height=30)
    s = wait_screen(srv, ui, lambda s: "⚑" in s and "○" in s)
    assert "●" not in s and "2 agents" in s
    keys(srv, ui, "q")
    srv.wait_for(lambda: not alive(srv, ui))
    res = srv.tma("watch", "--state", "nope")
    assert res.returncode == 2 and "invalid state 'nope'" in res.stderr
    res = srv.tma("watch")  # no terminal
    assert res.returncode == 2 and "needs a terminal" in res.stderr


@pytest.mark.tmux_contract
def test_picker_in_a_popup_jumps_its_client(srv, attach):
    """The binding's way: `display-popup -E tma` on a real client (no $TMUX_PANE there);
    the pane under the popup is left out, keys typed on the client reach the picker."""
    home = srv.shell_pane()
    srv.config.write_text(FRESH)
    under = srv.agent_pane()
    target = srv.agent_pane()
    srv.draw(target, "FAKE-BLOCKED allow this?\n")
    srv.draw(under, "FAKE-IDLE ready\n")
    srv.ls()
    c = attach("s", cols=120, rows=40)
    srv.tmux("select-window", "-t", under)
    srv.wait_for(lambda: c.pane() == under)
    # display-popup holds its caller until the popup closes
    popup = subprocess.Popen([srv.tmux_bin, "-u", "-L", srv.name, "-f", "/dev/null",
                              "display-popup", "-c", c.name, "-w", "100", "-h", "30", "-E",
                              f"cd {os.getcwd()} && {tma_command(srv)}"], env=srv.env)
    srv.wait_for(lambda: "esc quit" in c.output() and "1/1" in c.output())
    c.type(b"blk")  # fuzzy: b..l..k in "blocked"
    srv.wait_for(lambda: "> blk" in c.output())
    c.type(b"\r")
    srv.wait_for(lambda: c.pane() == target)
    srv.wait_for(lambda: srv.option(target, "@agent_attention") == "")
    assert popup.wait(timeout=10) == 0  # the picker closed, and the popup with it
    assert home


def test_picker_mouse_click_selects_and_a_second_click_jumps(srv, attach):
    panes = agents(srv)
    srv.tmux("set-option", "-g", "mouse", "on")
    ui = srv.tmux("new-window", "-t", "s:", "-P", "-F", "#{pane_id}",
                  f"cd {os.getcwd()} && TERM=xterm-256color {tma_command(srv)}").strip()
    c = attach("s", cols=120, rows=40)
    srv.wait_for(lambda: c.pane() == ui)
    s = wait_screen(srv, ui, lambda s: row_of(s, "⚑").startswith(">"))
    y = s.splitlines().index(row_of(s, "○")) + 1  # SGR mouse rows count from 1
    c.type(f"\x1b[<0;10;{y}M\x1b[<0;10;{y}m".encode())
    wait_screen(srv, ui, lambda s: row_of(s, "○").startswith(">"))
    c.type(f"\x1b[<0;10;{y}M\x1b[<0;10;{y}m".encode())
    srv.wait_for(lambda: c.pane() == panes[2])


@pytest.mark.tmux_contract
def test_picker_enter_moves_a_client_that_attached_after_its_last_refresh(srv, attach):
    """The picker's rows are a refresh old (up to a second); the client its Enter moves is
    read when Enter comes. A picker whose last refresh saw no client (opened in a window
    before its client attached) said "no attached tmux client" to a click made under
    load before its next refresh."""
    from tma.runtime.screen import Feed
    from tma.runtime.session import Globals, Session

    panes = agents(srv)
    g = Globals(socket_name=srv.name, config=str(srv.config), manifest_dir=str(srv.manifests))
    feed = Feed(Session(g, env=srv.env, warn=lambda _line: None), None)
    feed.refresh(first=True)
    assert feed.result is not None and feed.result.snapshot.clients == []
    assert feed.client() is None  # none attached yet, read now
    c = attach("s", cols=120, rows=40)
    srv.wait_for(lambda: c.pane() not in (None, panes[2]))
    assert feed.result.snapshot.clients == []  # no refresh since: the rows are as they were
    assert feed.client() is not None
    assert feed.jump(panes[2]) == ""
    srv.wait_for(lambda: c.pane() == panes[2])


@pytest.mark.tmux_contract
def test_picker_tab_opens_the_action_menu_and_an_entry_fires(srv, attach):
    """Tab in the popup: the picker closes and the pane's action menu opens on the client;
    its first entry (Approve, on a blocked codex) types exactly the manifest's key."""
    from tests.helpers.keyrecorder import KeyRecorder
    from tma.core import fixture

    srv.shell_pane()  # what the client shows (and the popup is left out of)
    capture = Path(__file__).resolve().parents[1] / "fixtures" / "captures" / \
        "codex-0.171.0_blocked.txt"
    rec = KeyRecorder.start(srv, "codex", fixture.parse(capture.read_text(encoding="utf-8")))
    assert srv.row(rec.pane, manifests=False)["state"] == "blocked"
    c = attach("s", cols=120, rows=40)
    popup = subprocess.Popen([srv.tmux_bin, "-u", "-L", srv.name, "-f", "/dev/null",
                              "display-popup", "-c", c.name, "-w", "100", "-h", "30", "-E",
                              f"cd {os.getcwd()} && {tma_command(srv, manifests=False)}"],
                             env=srv.env)
    srv.wait_for(lambda: "esc quit" in c.output() and "codex" in c.output())
    c.type(b"\t")
    srv.wait_for(lambda: "Approve" in c.output() and "Deny" in c.output())
    assert popup.wait(timeout=10) == 0
    c.type(b"1")
    assert rec.settle(1) == b"1"  # approve's key for codex

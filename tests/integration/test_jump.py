"""`tma jump` against a private server with a real attached client.

Jumping needs a client to move, and `send-keys` only reaches panes, so each test
that moves focus attaches a real `tmux attach` on a pseudo-terminal (local helper
below); the menu is driven by typing into that terminal.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from tests.helpers.ptyclient import PtyClient

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

NO_ORIGIN = ("tma: nowhere to go back to: no earlier jump from this client is recorded "
             "(or the panes it left have closed)\n")

FRESH_FOREVER = "[fold]\nfreshness_secs = 600\n"


# ---------------------------------------------------------------- helpers
# (an attached client: the `attach` fixture of tests/integration/conftest.py)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def stamp(srv, pane: str, state: str, since: int, attention: bool = False,
          detail: str = "") -> None:
    """Write a settled tma stamp straight onto a pane (consumed as fresh by the cycle)."""
    at = max(now_ms(), since)
    pairs = [("@agent_since", str(since)), ("@agent_state", state),
             ("@agent_detail", detail), ("@agent_source", "capture"),
             ("@agent_evidence_at", str(since)), ("@agent_name", "fake"),
             ("@agent_pid", "0"), ("@agent_stamped_at", str(at))]
    args: list[str] = []
    for key, value in pairs:
        args += ["set-option", "-p", "-t", pane, key, value, ";"]
    if attention:
        args += ["set-option", "-p", "-t", pane, "@agent_attention", "1"]
    else:
        args += ["set-option", "-p", "-u", "-t", pane, "@agent_attention"]
    srv.tmux(*args)


def attention(srv, pane: str) -> str:
    return srv.option(pane, "@agent_attention")


def split_agent(srv, target: str) -> str:
    """A second agent pane in target's window (the split does not take focus)."""
    pane = srv.tmux("split-window", "-d", "-t", target, "-P", "-F", "#{pane_id}",
                    f"exec {srv.fake('fakeagent')} 100000").strip()
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "fakeagent")
    return pane


def jump(srv, *args: str, client: PtyClient | None = None):
    extra = ["--client", client.name] if client is not None else []
    return srv.tma("jump", *args, *extra)


def trail_options(srv) -> dict[str, str]:
    out = {}
    for line in srv.tmux("show-options", "-s").splitlines():
        if line.startswith("@tma_origin_"):
            key, _, value = line.partition(" ")
            out[key] = value.strip('"')
    return out


# ---------------------------------------------------------------- forward jumps


def test_blocked_picks_the_longest_blocked_and_clears_its_attention(srv, attach):
    home = srv.shell_pane()  # s:0, what the client shows
    old = srv.agent_pane()  # s:1
    srv.draw(old, "FAKE-BLOCKED allow this?\n")
    srv.ls()
    srv.next_second()
    new = srv.agent_pane(session="a")  # positionally first, blocked later
    srv.draw(new, "FAKE-BLOCKED and this?\n")
    rows = {r["pane"]: r for r in srv.ls()}
    assert rows[old]["state"] == rows[new]["state"] == "blocked"
    assert rows[old]["since"] < rows[new]["since"]
    assert attention(srv, old) == attention(srv, new) == "1"
    c = attach("s")
    assert c.pane() == home

    res = jump(srv, "--blocked", client=c)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    assert c.pane() == old
    assert attention(srv, old) == ""
    assert attention(srv, new) == "1"  # only the destination is cleared

    # --blocked never advances: the longest-blocked is still the answer
    assert jump(srv, "--blocked", client=c).returncode == 0
    assert c.pane() == old
    # scoped to the other session it is the newer one
    assert jump(srv, "--blocked", "--session", "a", client=c).returncode == 0
    assert c.pane() == new
    assert attention(srv, new) == ""
    res = jump(srv, "--blocked", "--session", "nope", client=c)
    assert (res.returncode, res.stderr) == (0, "tma: no agent is blocked in scope: nothing is waiting for your answer\n")


def test_attention_goes_blocked_first_then_done_and_wraps(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    srv.shell_pane()
    c = attach("s")
    base = now_ms() + 50
    d1, b1, b2, d2, w, i = (srv.agent_pane() for _ in range(6))
    stamp(srv, d1, "idle", base, attention=True)
    stamp(srv, b1, "blocked", base + 20, attention=True, detail="permission")
    stamp(srv, b2, "blocked", base + 10, attention=True, detail="permission")
    stamp(srv, d2, "idle", base + 30, attention=True)
    stamp(srv, w, "working", base, attention=True)
    stamp(srv, i, "idle", base)

    seen = []
    for _ in range(9):
        res = jump(srv, "--attention", client=c)
        assert res.returncode == 0, res.stderr
        seen.append(c.pane())
    # a visited done pane leaves the list (its mark is down); blocked panes stay
    assert seen == [b2, b1, d1, b2, b1, d2, b2, b1, b2]
    assert attention(srv, d1) == attention(srv, d2) == ""
    assert attention(srv, b1) == attention(srv, b2) == ""
    assert attention(srv, w) == "1"  # never a destination: untouched

    res = jump(srv, "--attention", "--state", "idle", client=c)
    assert (res.returncode, res.stderr) == (0, "tma: no agent is waiting for you in scope: none is blocked and no finished turn is unseen\n")


def test_attention_with_nothing_waiting(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    srv.shell_pane()
    p = srv.agent_pane()
    c = attach("s")
    stamp(srv, p, "working", now_ms())
    res = jump(srv, "--attention", client=c)
    assert (res.returncode, res.stderr) == (0, "tma: no agent is waiting for you: none is blocked and no finished turn is unseen\n")


def test_next_cycles_by_position_and_leaves_attention_alone(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    srv.shell_pane()
    c = attach("s")
    base = now_ms() + 50
    a1, a2, a3 = (srv.agent_pane() for _ in range(3))
    other = srv.agent_pane(session="t")
    stamp(srv, a1, "idle", base, attention=True)
    stamp(srv, a2, "blocked", base, attention=True, detail="permission")
    stamp(srv, a3, "working", base)
    stamp(srv, other, "idle", base)

    seen = []
    for _ in range(5):
        res = jump(srv, client=c)  # --next is the default
        assert res.returncode == 0, res.stderr
        seen.append(c.pane())
    assert seen == [a1, a2, a3, other, a1]
    assert attention(srv, a1) == attention(srv, a2) == "1"

    assert jump(srv, "--next", "--session", "s", client=c).returncode == 0
    assert c.pane() == a2
    res = jump(srv, "--next", "--session", "nope", client=c)
    assert (res.returncode, res.stderr) == (0, "tma: no agent panes to jump to in scope: tma ls lists what tma sees\n")


# ---------------------------------------------------------------- trail


def test_pane_back_and_home_walk_the_trail(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    home = srv.shell_pane()
    c = attach("s")
    base = now_ms() + 50
    panes = [srv.agent_pane() for _ in range(9)]
    for n, p in enumerate(panes):
        stamp(srv, p, "idle", base, attention=(n == 0))

    res = jump(srv, "--back", client=c)
    assert (res.returncode, res.stderr) == (0, NO_ORIGIN)

    for p in panes:
        res = jump(srv, "--pane", p, client=c)
        assert res.returncode == 0, res.stderr
        assert c.pane() == p
    assert attention(srv, panes[0]) == ""  # --pane clears its destination

    trails = trail_options(srv)
    assert len(trails) == 1
    key, value = next(iter(trails.items()))
    assert re.fullmatch(r"@tma_origin_[A-Za-z0-9_]+_[0-9a-f]{8}", key)
    # nine origins (home, p0..p7), capped at eight: home was dropped
    assert value.split() == panes[:8]

    assert jump(srv, "--back", client=c).returncode == 0
    assert c.pane() == panes[7]
    assert jump(srv, "--back", client=c).returncode == 0
    assert c.pane() == panes[6]
    assert jump(srv, "--home", client=c).returncode == 0
    assert c.pane() == panes[0]
    assert trail_options(srv) == {}
    res = jump(srv, "--home", client=c)
    assert (res.returncode, res.stderr) == (0, NO_ORIGIN)
    assert c.pane() == panes[0]

    # an emptied trail starts again from wherever the client is
    assert jump(srv, "--pane", panes[3], client=c).returncode == 0
    assert list(trail_options(srv).values()) == [panes[0]]
    assert jump(srv, "--back", client=c).returncode == 0
    assert c.pane() == panes[0]
    assert trail_options(srv) == {}
    assert home not in panes


def test_jump_to_the_pane_already_shown_moves_and_clears_nothing_else(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    srv.shell_pane()
    here = srv.agent_pane()  # s:1
    beside = split_agent(srv, here)  # s:1.1, not active
    away = srv.agent_pane()  # s:2
    srv.tmux("select-window", "-t", "s:1")
    c = attach("s")
    assert c.pane() == here
    base = now_ms() + 50
    for p in (here, beside, away):
        stamp(srv, p, "idle", base, attention=True)
    # record every pane/window hook firing
    srv.tmux("set-hook", "-g", "after-select-pane", "set-option -s @hits_pane 1")
    srv.tmux("set-hook", "-g", "session-window-changed", "set-option -s @hits_window 1")
    srv.tmux("set-hook", "-g", "client-session-changed", "set-option -s @hits_session 1")

    res = jump(srv, "--pane", here, client=c)
    assert res.returncode == 0, res.stderr
    assert c.pane() == here
    assert srv.display(here, "#{pane_active}#{window_active}") == "11"
    assert attention(srv, here) == ""  # the destination itself
    assert attention(srv, beside) == attention(srv, away) == "1"
    assert trail_options(srv) == {}  # the origin was the destination
    assert "@hits" not in srv.tmux("show-options", "-s")  # no hook fired

    # a real move does fire them (the probe works)
    assert jump(srv, "--pane", beside, client=c).returncode == 0
    assert c.pane() == beside
    assert srv.tmux("show-options", "-sqv", "@hits_pane").strip() == "1"
    assert "@hits_window" not in srv.tmux("show-options", "-s")  # same window


def test_pane_that_is_not_an_agent(srv, attach):
    shell = srv.shell_pane()
    c = attach("s")
    res = jump(srv, "--pane", shell, client=c)
    assert (res.returncode, res.stderr) == (0, f"tma: no agent in pane {shell}\n")
    res = jump(srv, "--pane", "%999", client=c)  # no such pane at all: an error
    assert (res.returncode, res.stderr) == (3, "tma: no pane %999\n")


# ---------------------------------------------------------------- the menu


def test_menu_shows_agents_and_an_entry_jumps(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    mine = srv.agent_pane()  # s:0, the invoking pane: not listed
    idle, work, blocked = (srv.agent_pane() for _ in range(3))
    c = attach("s")
    base = now_ms() + 50
    stamp(srv, mine, "working", base)
    stamp(srv, idle, "idle", base - 5000)
    stamp(srv, work, "working", base)
    stamp(srv, blocked, "blocked", base, attention=True, detail="permission")
    c.clear_output()

    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "jump", "--menu", "--client", c.name]
    proc = subprocess.Popen(argv, env=srv.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        srv.wait_for(lambda: "blocked/permission" in c.output())
        shown = c.output()
        assert "s:3.0" in shown and "s:2.0" in shown and "s:1.0" in shown
        assert "s:0.0" not in shown  # the invoking pane
        c.type(b"1")  # first entry: blocked sorts first
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    srv.wait_for(lambda: c.pane() == blocked)
    srv.wait_for(lambda: attention(srv, blocked) == "")
    # the entry ran `tma jump --pane` for this client: the origin is on its trail
    assert list(trail_options(srv).values()) == [mine]


def test_menu_dismissed_and_the_empty_and_clientless_cases(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    mine = srv.shell_pane()
    res = srv.tma("jump", "--menu")
    assert (res.returncode, res.stderr) == (0, "tma: no agent panes: nothing for the menu\n")
    for p in (srv.agent_pane(), srv.agent_pane()):
        stamp(srv, p, "idle", now_ms())
    res = srv.tma("jump", "--menu")  # agents, but nobody attached to show it on
    assert res.returncode == 1
    assert "no attached tmux client" in res.stderr

    c = attach("s")
    c.clear_output()
    proc = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", srv.name,
                             "jump", "--menu", "--client", c.name], env=srv.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        srv.wait_for(lambda: "s:1.0" in c.output() and "s:2.0" in c.output())
        c.type(b"q")
        _out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert c.pane() == mine  # dismissed: nothing moved


# ---------------------------------------------------------------- errors


def test_no_client_no_server_and_usage(srv):
    res = srv.tma("jump", "--blocked")
    assert (res.returncode, res.stderr.strip()) == (1, "tma: no tmux server running")

    srv.config.write_text(FRESH_FOREVER)
    p = srv.agent_pane()
    stamp(srv, p, "blocked", now_ms(), detail="permission")
    res = srv.tma("jump", "--blocked")
    assert res.returncode == 1
    assert "no attached tmux client" in res.stderr
    res = srv.tma("jump", "--blocked", "--client", "/dev/nope")
    assert res.returncode == 1 and "/dev/nope" in res.stderr
    # nothing to jump to is a note, client or not
    res = srv.tma("jump", "--attention", "--session", "nope")
    assert (res.returncode, res.stderr) == (0, "tma: no agent is waiting for you in scope: none is blocked and no finished turn is unseen\n")
    res = srv.tma("jump", "--back")
    assert res.returncode == 1

    assert srv.tma("jump", "--blocked", "--next").returncode == 2
    assert srv.tma("jump", "--state", "bogus").returncode == 2


# ---------------------------------------------------------------- which client moves


def test_the_acting_client_follows_tmux_pane_and_keeps_its_own_trail(srv, attach):
    srv.config.write_text(FRESH_FOREVER)
    s_home = srv.shell_pane()
    t_home = srv.shell_pane(session="t")
    x, z = srv.agent_pane(), srv.agent_pane(session="t")
    for p in (x, z):
        stamp(srv, p, "idle", now_ms() + 50)
    cs = attach("s")
    ct = attach("t")

    res = srv.tma("jump", "--pane", z, env={"TMUX_PANE": t_home})
    assert res.returncode == 0, res.stderr
    assert (cs.pane(), ct.pane()) == (s_home, z)
    res = srv.tma("jump", "--pane", x, env={"TMUX_PANE": s_home})
    assert res.returncode == 0, res.stderr
    assert (cs.pane(), ct.pane()) == (x, z)
    trails = trail_options(srv)
    assert sorted(trails.values()) == sorted([s_home, t_home])  # one trail per client
    # -c wins over $TMUX_PANE
    res = srv.tma("-c", ct.name, "jump", "--back", env={"TMUX_PANE": s_home})
    assert res.returncode == 0, res.stderr
    assert (cs.pane(), ct.pane()) == (x, t_home)
    assert list(trail_options(srv).values()) == [s_home]


def test_trail_key_and_menu_command_quoting():
    from tma.core.nav import push
    from tma.tmux import nav

    key = nav.trail_key("/dev/pts/1")
    assert re.fullmatch(r"@tma_origin__dev_pts_1_[0-9a-f]{8}", key)
    assert nav.trail_key("_dev_pts_1") != key  # sanitizing alone would collide
    assert push(["%1", "%2"], "%2") == ["%1", "%2"]
    assert push([f"%{n}" for n in range(8)], "%9") == [f"%{n}" for n in range(1, 8)] + ["%9"]
    assert push(["%1", "%2"], "%3", live={"%2", "%3"}) == ["%2", "%3"]
    assert nav.trail_line("c", []).endswith("-u " + nav.trail_key("c"))
    cmd = nav.run_shell_command(["/x y/tma", "--socket-name", "a#b", "jump", "--pane", "%3"])
    # menu expansion, then the tmux parser, then run-shell's expansion, then sh
    assert cmd == "run-shell -b \"'/x y/tma' --socket-name 'a####b' jump --pane %3\""
    assert nav.menu_text("50# done") == "50## done"

"""The terminal sink against real tmux servers and real attached clients.

A `tmux attach` runs on a pseudo-terminal this test owns: the bytes its master reads
are what a person's terminal emulator would receive. Where the pane a client shows
allows passthrough, the OSC notification arrives there unwrapped; where it does not
(off, or 3.2a, which has no such option), a BEL arrives and no OSC does. Every test
runs on each tmux build of the matrix.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.helpers.daemon import _claude, _draw, watched
from tma.runtime import config
from tma.runtime.notify import (
    dispatch as notify,
    sinks as notify_sinks,
    terminal as notify_terminal,
)
from tma.runtime.notify.note import Note
from tma.tmux import adapter, passthrough

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

OSC9 = "\x1b]9;fake blocked: Bash: rm -rf build/\x07"
OSC777 = "\x1b]777;notify;tma;fake blocked: Bash: rm -rf build/\x07"
OSC99 = ("\x1b]99;i=tma:d=0;tma\x1b\\"
         "\x1b]99;i=tma:d=1:p=body;fake blocked: Bash: rm -rf build/\x1b\\")


def has_option(srv) -> bool:
    """Does this release know allow-passthrough? (3.2a does not.)"""
    res = subprocess.run([srv.tmux_bin, "-L", srv.name, "show-options", "-g",
                          "allow-passthrough"], capture_output=True, text=True, env=srv.env)
    return res.returncode == 0


def passthrough_on(srv) -> bool:
    if not has_option(srv):
        return False
    srv.tmux("set-option", "-g", "allow-passthrough", "on")
    return True


def cfg_with(**terminal) -> config.Config:
    cfg = config.Config()
    cfg.notify = {"message": False, "terminal": dict({"enabled": True}, **terminal)}
    return cfg


def note_for(pane: str, **kw) -> Note:
    values = dict(trigger="blocked", agent="fake", pane=pane, detail="permission",
                  locator="s:0.0", title="SECRET title", tool="Bash",
                  summary="Bash: rm -rf build/")
    values.update(kw)
    return Note(**values)


def server_for(srv) -> adapter.Server:
    return adapter.Server(srv.tmux_bin, socket_name=srv.name)


def settle(client) -> None:
    """Let the client finish drawing after attach, then forget what it drew."""
    last = -1
    while len(client.output()) != last:
        last = len(client.output())
        time.sleep(0.3)
    client.clear_output()


def test_osc_reaches_the_client_terminal_through_passthrough(srv, attach):
    pane = srv.agent_pane()
    if not passthrough_on(srv):
        pytest.skip("this tmux has no allow-passthrough (the BEL test covers it)")
    client = attach()
    settle(client)
    notify.dispatch(server_for(srv), cfg_with(osc=[9, 777, 99]), note_for(pane))
    srv.wait_for(lambda: OSC99 in client.output())
    out = client.output()
    assert OSC9 in out and OSC777 in out
    assert out.index(OSC9) < out.index(OSC777) < out.index(OSC99)
    assert "SECRET" not in out and "Ptmux;" not in out
    # what the agent asks cannot end the sequence early or forge another: no control byte
    # of the summary reaches the terminal
    client.clear_output()
    hostile = "rm x\x1b]9;forged\x07\x1b\\\x9b\x07 end"
    notify.dispatch(server_for(srv), cfg_with(), note_for(pane, summary=hostile))
    srv.wait_for(lambda: "end\x07" in client.output())
    assert "\x1b]9;fake blocked: rm x]9;forged\\ end\x07" in client.output()
    assert client.output().count("\x1b]") == 1


def test_a_bel_and_no_osc_where_passthrough_is_off(srv, attach):
    pane = srv.agent_pane()
    if has_option(srv):
        srv.tmux("set-option", "-g", "allow-passthrough", "off")
    client = attach()
    settle(client)
    notify.dispatch(server_for(srv), cfg_with(osc=[9, 777, 99]), note_for(pane))
    srv.wait_for(lambda: "\x07" in client.output())
    time.sleep(0.3)  # an OSC would have come with the BEL's write; a grace to be sure
    out = client.output()
    assert "\x1b]9;" not in out and "\x1b]777;" not in out and "\x1b]99;" not in out
    # the control: bell = false leaves the terminal silent
    client.clear_output()
    notify.dispatch(server_for(srv), cfg_with(bell=False), note_for(pane))
    time.sleep(0.5)
    assert "\x07" not in client.output()


def test_every_attached_client_is_reached_whichever_pane_it_shows(srv, attach):
    pane = srv.agent_pane()
    other = srv.agent_pane(session="t")
    on = passthrough_on(srv)
    first, second = attach("s"), attach("t")
    settle(first)
    settle(second)
    views = passthrough.views(server_for(srv))
    assert sorted((v.client, v.pane) for v in views) == sorted(
        [(first.name, pane), (second.name, other)])
    assert {v.passthrough for v in views} == {on}
    notify.dispatch(server_for(srv), cfg_with(), note_for(pane))
    for c in (first, second):
        srv.wait_for(lambda c=c: (OSC9 if on else "\x07") in c.output())


def test_a_pane_that_alone_allows_passthrough_gets_the_osc(srv, attach):
    pane = srv.agent_pane()
    other = srv.agent_pane(session="t")
    if not has_option(srv):
        pytest.skip("this tmux has no allow-passthrough")
    srv.tmux("set-option", "-p", "-t", other, "allow-passthrough", "on")
    first, second = attach("s"), attach("t")
    settle(first)
    settle(second)
    notify.dispatch(server_for(srv), cfg_with(), note_for(pane))
    srv.wait_for(lambda: OSC9 in second.output())
    srv.wait_for(lambda: "\x07" in first.output())
    assert "\x1b]9;" not in first.output()


def test_no_client_no_write_and_a_dead_server_is_silent(srv, capfd):
    pane = srv.agent_pane()
    ring = notify_sinks.Ring(server=server_for(srv), cfg=cfg_with(), daemon=True)
    assert notify_terminal.deliver(ring, note_for(pane)) == []
    assert notify_terminal.test(ring, note_for(pane))[0].startswith("terminal none:")
    dead = adapter.Server(srv.tmux_bin, socket_name=srv.name + "-gone")
    notify_terminal.fire(notify_sinks.Ring(server=dead, cfg=cfg_with()), note_for(pane))
    assert capfd.readouterr() == ("", "")


def test_off_by_default_and_live_when_enabled():
    assert notify_sinks.live(config.Config()) == []
    assert notify_sinks.live(cfg_with()) == [notify_terminal]
    off = config.Config()
    off.notify = {"terminal": {"osc": 9}}
    assert notify_sinks.live(off) == []


def test_notify_test_names_each_client_and_the_passthrough(srv, attach, tmp_path):
    pane = srv.agent_pane()
    on = passthrough_on(srv)
    client = attach()
    settle(client)
    # no command and no desktop notifier (a headless dev box): the sinks are still tried
    srv.config.write_text('[notify]\ndesktop = false\n[notify.terminal]\nenabled = true\n'
                          'osc = [9, 99]\n')
    socket = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    env = dict(srv.env, TMA_SOCKET_PATH=socket, XDG_RUNTIME_DIR=str(tmp_path / "run"))
    res = subprocess.run([sys.executable, "-m", "tma", "debug", "notify-test"], env=env,
                         capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert "command none: desktop = false" in res.stdout, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("terminal ")]
    assert len(lines) == 1, res.stdout
    assert lines[0].startswith(f"terminal client {client.name} on pane {pane}: "), lines
    if on:
        assert lines[0].endswith("OSC 9, 99 through passthrough (allow-passthrough "
                                 + srv.display(pane, "#{allow-passthrough}") + ")")
        srv.wait_for(lambda: "\x1b]9;test blocked\x07" in client.output())
    else:
        assert ": a BEL, passthrough is off (allow-passthrough absent;" in lines[0]
        srv.wait_for(lambda: "\x07" in client.output())


def test_the_daemon_rings_the_client_when_a_hooked_pane_blocks(srv, attach, tmp_path):
    """End to end: Claude's PermissionRequest hook stamps the pane blocked with what it
    asks; the daemon rings; the client's terminal gets the summary."""
    on = passthrough_on(srv)
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    # the client looks at this pane and attached just now (input, to the ring-less rule):
    # quiet_if_active_s = 0 lets the ring through
    srv.config.write_text("[daemon]\nsweep_secs = 1\n[hooks]\nclaude_reply_lane = false\n"
                          "[notify]\nquiet_if_active_s = 0\ndesktop = false\n"
                          "[notify.terminal]\nenabled = true\n")
    client = attach()
    with watched(srv, tmp_path) as daemon:
        daemon.start()
        settle(client)
        payload = ('{"session_id": "s1", "tool_name": "Bash", "tool_use_id": "t-1",'
                   ' "tool_input": {"command": "rm -rf build/"}}')
        res = srv.tma("event", "--agent", "claude", "--kind", "PermissionRequest", "--pane",
                      pane, input=payload, manifests=False, env={"TMA_HOOK_STRICT": "1"})
        assert res.returncode == 0, res.stderr
        assert srv.option(pane, "@agent_state") == "blocked"
        want = "\x1b]9;claude blocked: Bash: rm -rf build/\x07" if on else "\x07"
        srv.wait_for(lambda: want in client.output(), timeout=10)


def test_the_hook_path_rings_the_client_without_a_daemon(srv, attach):
    """`from_event`: the hook process itself fires, and leaves with os._exit; the sink's
    thread has finished its write by then (it waits HOOK_WAIT at most)."""
    on = passthrough_on(srv)
    pane = srv.agent_pane("claude")
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n[notify]\nfrom_event = true\n"
                          "desktop = false\nmessage = false\nquiet_if_active_s = 0\n"
                          "[notify.terminal]\nenabled = true\n")
    client = attach()
    settle(client)
    payload = ('{"session_id": "s1", "tool_name": "Bash", "tool_use_id": "t-1",'
               ' "tool_input": {"command": "make deploy"}}')
    res = srv.tma("event", "--agent", "claude", "--kind", "PermissionRequest", "--pane",
                  pane, input=payload, manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0 and res.stdout == "", res.stderr
    want = "\x1b]9;claude blocked: Bash: make deploy\x07" if on else "\x07"
    srv.wait_for(lambda: want in client.output(), timeout=5)

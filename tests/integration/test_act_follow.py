"""After `tma act approve` answers a prompt, every surface stops showing `blocked` at
once (issue 22): act watches the screen move on and stamps it (`_follow`), so `tma ls`
and the pane options read the answer within about a second of the spawn, and act nudges
every advertised `tma watch` (SIGUSR1 to `@tma_watch_pid`) so its row follows at once
rather than on its next one-second tick."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.screens import row_of, screen_pane, wait_screen
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
BLOCKED = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text(encoding="utf-8"))
IDLE = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text(encoding="utf-8"))
FRESH = "[fold]\nfreshness_secs = 3600\n"  # nothing but act may move the stamp

WATCHER = r'''
import os, signal, sys, time
out = sys.argv[1]
def got(*_):
    with open(out, "a") as fh:
        fh.write(f"{time.monotonic()}\n")
signal.signal(signal.SIGUSR1, got)
open(out + ".ready", "w").close()
while True:
    time.sleep(3600)
'''


def _approve(srv, pane: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.monotonic()
    res = srv.tma("act", "approve", "--pane", pane, manifests=False)
    return t0, res


@pytest.mark.tmux_contract
def test_the_answered_pane_reads_not_blocked_as_act_returns(srv):
    srv.config.write_text(FRESH)
    rec = KeyRecorder.start(srv, "claude", BLOCKED, after=IDLE, redraw_ms=100)
    assert srv.row(rec.pane, manifests=False)["state"] == "blocked"
    t0, res = _approve(srv, rec.pane)
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stderr
    assert rec.settle(1) == b"1"
    # act stamped what followed before it exited: no reader has to re-read anything
    assert srv.option(rec.pane, "@agent_state") == "idle"
    assert srv.row(rec.pane, manifests=False)["state"] == "idle"
    print(f"act approve: spawn to exit with the pane stamped idle {took:.2f}s")
    assert took < 2.0  # ~0.1 s key, 0.1 s redraw, two settled reads (bench: ~0.4 s)


def test_act_nudges_every_advertised_watch(srv, tmp_path):
    """A stand-in watcher (a real process advertising its pid the way watch does) gets
    SIGUSR1 once act has stamped the answer."""
    srv.config.write_text(FRESH)
    rec = KeyRecorder.start(srv, "claude", BLOCKED, after=IDLE, redraw_ms=100)
    srv.row(rec.pane, manifests=False)
    out = tmp_path / "nudges"
    proc = subprocess.Popen([sys.executable, "-c", WATCHER, str(out)])
    try:
        srv.wait_for(lambda: Path(str(out) + ".ready").exists())
        holder = srv.shell_pane()
        srv.tmux("set-option", "-p", "-t", holder, "@tma_watch_pid", str(proc.pid))
        _t0, res = _approve(srv, rec.pane)
        assert res.returncode == 0, res.stderr
        srv.wait_for(lambda: out.exists(), timeout=2)
        assert proc.poll() is None  # nudged, not killed
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=5)


def test_a_refused_act_nudges_nobody(srv, tmp_path):
    srv.config.write_text(FRESH)
    rec = KeyRecorder.start(srv, "claude", IDLE)  # nothing to approve
    srv.row(rec.pane, manifests=False)
    out = tmp_path / "nudges"
    proc = subprocess.Popen([sys.executable, "-c", WATCHER, str(out)])
    try:
        srv.wait_for(lambda: Path(str(out) + ".ready").exists())
        srv.tmux("set-option", "-p", "-t", srv.shell_pane(), "@tma_watch_pid", str(proc.pid))
        _t0, res = _approve(srv, rec.pane)
        assert res.returncode != 0
        time.sleep(0.3)
        assert not out.exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=5)


def test_a_watch_row_follows_the_answer_at_once(srv):
    """A real `tma watch` in a pane: its row leaves ⚑ (blocked) well inside watch's own
    one-second tick after act returns."""
    srv.config.write_text(FRESH)
    rec = KeyRecorder.start(srv, "claude", BLOCKED, after=IDLE, redraw_ms=100)
    srv.row(rec.pane, manifests=False)
    ui = screen_pane(srv, "watch", width=100, height=30)
    wait_screen(srv, ui, lambda s: "⚑" in s)
    srv.wait_for(lambda: srv.option(ui, "@tma_watch_pid"))
    time.sleep(0.2)  # just after a tick: the next one is ~0.8 s away
    _t0, res = _approve(srv, rec.pane)
    assert res.returncode == 0, res.stderr
    t1 = time.monotonic()
    s = wait_screen(srv, ui, lambda s: "⚑" not in s, timeout=3)
    lag = time.monotonic() - t1
    print(f"watch row left blocked {lag:.2f}s after act returned")
    assert row_of(s, "claude")  # the row is still there, no longer blocked
    assert lag < 0.5


def test_the_next_prompt_drawn_at_once_is_its_own_episode_and_takes_its_own_answer(srv):
    """act answers prompt A and the agent draws prompt B at once (the next tool call's,
    no working screen between): act's follow sees another prompt, stamps it, and B is
    an episode of its own, so its answer goes through instead of being refused as
    already given (A's), and B's answer types one key, once."""
    srv.config.write_text(FRESH)
    prompt_b = fixture.Capture(BLOCKED.headers, BLOCKED.body.replace(
        "echo hi > mockllm-hi.txt", "rm -rf build/cache"))
    rec = KeyRecorder.start(srv, "claude", BLOCKED, after=prompt_b, redraw_ms=100)
    first = srv.row(rec.pane, manifests=False)
    assert first["state"] == "blocked"
    _t0, res = _approve(srv, rec.pane)
    assert res.returncode == 0, res.stderr
    assert rec.settle(1) == b"1"
    assert srv.option(rec.pane, "@agent_state") == "blocked"
    assert int(srv.option(rec.pane, "@agent_since")) > first["episode_ms"]  # B's own
    _t0, res = _approve(srv, rec.pane)
    assert res.returncode == 0, res.stderr
    assert rec.settle(2) == b"11"
    _t0, res = _approve(srv, rec.pane)  # B answered: nothing more is typed into it
    assert res.returncode == 6 and "already answered" in res.stderr, res.stderr
    assert rec.settle(2) == b"11"

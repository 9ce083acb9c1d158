"""The desktop notification's buttons, with real things end to end: a real `tma daemon`,
the real notify-send (libnotify-bin), a real D-Bus session bus (dbus-daemon) and a small
notification server on it (tests/helpers/notify_server.py), and a fake agent (a real
process named `claude`, tests/helpers/keyrecorder.py) that draws its captured permission
prompt and records every key it receives.

A click on Approve fires `tma act approve` through the broker, bound to the episode the
notification was for: the agent receives exactly one answer; a click on a notification
whose prompt was answered by hand (and the agent then asked again: a new episode with
the same screen) types nothing.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import _until, watched
from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.notify_server import NotifyBus, need_tools
from tma.core import fixture
from tma.runtime.notify import backends as notify_backends, note as notify_note

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
SUMMARY = "Bash: rm -rf build/"


def _cap(name: str) -> fixture.Capture:
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text(encoding="utf-8"))


def _screen(name: str) -> str:
    cap = _cap(name)
    return "\n".join(cap.body.rstrip("\n").split("\n")[-(cap.height or 30):])


@pytest.fixture
def bus():
    need_tools()
    with NotifyBus() as b:
        yield b


@pytest.fixture
def daemon(srv, tmp_path, bus):
    with watched(srv, tmp_path) as d:
        d.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        srv.config.write_text("[daemon]\nsweep_secs = 1\n")
        yield d


def _agent(srv, after: str | None = None) -> KeyRecorder:
    rec = KeyRecorder.start(srv, "claude", _cap("blocked"),
                            after=_cap(after) if after else None, redraw_ms=100)
    # what the hook intake stamps beside a blocked state (this agent has no hooks);
    # a second line that must never reach the body
    srv.tmux("set-option", "-p", "-t", rec.pane, "@agent_pending_summary",
             SUMMARY + "\nsecond line")
    return rec


def _redraw(srv, pane: str, name: str) -> None:
    """The agent draws another screen (its tty written as the agent would)."""
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + _screen(name).replace("\n", "\r\n"))


def test_approve_on_the_notification_types_exactly_one_answer(srv, daemon, bus):
    srv.shell_pane()
    rec = _agent(srv)
    daemon.start()
    note = bus.wait_notify()
    assert note.app_name == "tma" and note.summary == "tma: claude blocked"
    assert note.actions == [("approve", "Approve"), ("deny", "Deny"), ("default", "Jump")]
    assert note.body.split("\n")[0] == SUMMARY and "second line" not in note.body
    since = srv.option(rec.pane, "@agent_since")
    assert since.isdigit()
    assert daemon.status()["notify"]["in_flight"] == 1  # the waiting notify-send, adopted
    bus.invoke(note.id, "approve")
    assert rec.settle(1, timeout=15) == b"1"
    bus.wait_closed(note.id)  # notify-send closed it once it had the answer
    srv.wait_for(lambda: daemon.status()["notify"]["in_flight"] == 0, timeout=10)
    assert rec.settle(quiet=1.0) == b"1"  # and nothing more, ever
    assert len(bus.notes) == 1  # a sent answer says nothing more


def test_a_click_on_a_stale_notification_types_nothing(srv, daemon, bus):
    """Answered by hand; the agent works, then asks the same thing again (a new
    episode, the very same screen): Approve on the first notification is refused by
    the binder, and the second notification's Approve answers the second prompt once."""
    srv.shell_pane()
    rec = _agent(srv, after="working")
    daemon.start()
    first = bus.wait_notify()
    old = srv.option(rec.pane, "@agent_since")
    srv.tmux("send-keys", "-t", rec.pane, "1")  # by hand
    assert rec.settle(1) == b"1"
    _until(srv, rec.pane, "@agent_state", "working", timeout=10)
    _redraw(srv, rec.pane, "blocked")
    second = bus.wait_notify(2, timeout=15)
    assert srv.option(rec.pane, "@agent_since") != old
    bus.invoke(first.id, "approve")  # stale: the prompt on screen is another episode's
    bus.wait_closed(first.id)
    said = bus.wait_notify(3, timeout=15)  # the refusal, said in a notification
    assert said.summary == "tma: approve not sent" and not said.actions
    assert "moved on from the episode" in said.body and "nothing done" in said.body
    assert rec.settle(quiet=2.0) == b"1"  # only the hand's key
    bus.invoke(second.id, "approve")
    assert rec.settle(2, timeout=15) == b"11"
    assert rec.settle(quiet=1.0) == b"11"


def test_deny_and_the_body_click(srv, daemon, bus):
    """Deny sends the manifest's deny keys; a click on the body jumps (no key)."""
    srv.shell_pane()
    rec = _agent(srv)
    daemon.start()
    note = bus.wait_notify()
    bus.invoke(note.id, "default")
    bus.wait_closed(note.id)
    assert rec.settle(quiet=1.5) == b""
    from tests.helpers.keyrecorder import key_bytes
    from tma.runtime.act import registry as actions

    deny = key_bytes(actions.load().get("deny").keys["claude"])
    # the same episode, a second notification for it never comes: fire deny by hand
    # through the same wrapper the notification runs, with the episode pinned
    res = srv.tma("act", "deny", "--pane", rec.pane, "--expect-episode",
                  str(srv.row(rec.pane, manifests=False)["episode_ms"]), manifests=False)
    assert res.returncode == 0, res.stderr
    assert rec.settle(len(deny)) == deny


def test_the_wait_is_bounded_and_closes_the_notification(bus, tmp_path, monkeypatch):
    """No click within WAIT_SECS: notify-send is interrupted, closes its notification,
    the wrapper exits 0 and runs nothing."""
    monkeypatch.setattr(notify_backends, "WAIT_SECS", 1)
    ran = tmp_path / "ran"
    fake = tmp_path / "tma"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {ran}\n")
    fake.chmod(0o755)
    note = notify_note.Note(trigger="blocked", agent="claude", pane="%7", summary=SUMMARY)
    argv = notify_backends.desktop_argv(note, platform="linux", actions=True,
                                        answers=(("approve", "Approve"), ("deny", "Deny")))
    assert argv is not None and "timeout" in os.path.basename(argv[4])
    env = dict(notify_note.child_env(note), DBUS_SESSION_BUS_ADDRESS=bus.address,
               TMA_EPISODE_MS="1757030400000",
               **notify_backends.jump_env(["--socket-name", "x"], str(fake)))
    t0 = time.monotonic()
    res = subprocess.run(argv, env=env, timeout=30, capture_output=True)
    took = time.monotonic() - t0
    shown = bus.wait_notify()
    assert res.returncode == 0 and 1.0 <= took < 8, (res, took)
    bus.wait_closed(shown.id)
    assert not ran.exists()
    # and a click does run the bound act (the same wrapper, a button chosen in time)
    monkeypatch.setattr(notify_backends, "WAIT_SECS", 20)
    argv = notify_backends.desktop_argv(note, platform="linux", actions=True,
                                        answers=(("approve", "Approve"),))
    proc = subprocess.Popen(argv, env=env)
    again = bus.wait_notify(2)
    bus.invoke(again.id, "approve")
    assert proc.wait(timeout=15) == 0
    assert ran.read_text().split() == ["--socket-name", "x", "act", "approve", "--pane", "%7",
                                       "--expect-episode", "1757030400000"]

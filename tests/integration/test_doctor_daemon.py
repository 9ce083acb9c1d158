"""doctor with a daemon running: tier 3 where it watches the pane's session, the
`daemon:` lines, and which status-line set-up the server has."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.helpers.daemon import watched
from tests.helpers.doctor import (
    doctor,
    isolate_installers,
    pane_block,
    row,
    wired_pane,
)
from tma.install import tmux_status


@pytest.fixture
def daemon(srv, tmp_path):
    srv.env["XDG_RUNTIME_DIR"] = str(tmp_path / "rt")  # doctor and the daemon share it
    with watched(srv, tmp_path) as d:
        yield d


def test_a_wired_pane_the_daemon_watches_is_tier_3(srv, daemon):
    isolate_installers(srv)
    pane = wired_pane(srv, "claude")
    daemon.start()
    status = daemon.status()
    r = doctor(srv, bundled=True)
    a = row(r, pane)
    assert (a["tier"], a["tier_reason"]) == (3, None)
    assert pane_block(r, pane)[0].startswith(f"  {pane} claude s:1.0 tier 3 ")
    assert not any(line.startswith("not tier") for line in pane_block(r, pane))
    d = r.doc["daemon"]
    assert d["running"] and d["pid"] == status["pid"] and d["version_skew"] is False
    assert d["watched_sessions"] == status["sessions"]
    section = r.section("daemon")
    assert section.startswith(f"daemon:  running, pid {status['pid']}, version ")
    assert f"socket: {d['socket']}" in section
    assert r.doc["below_expected_tier"] == 0
    # its control clients draw no status line: they are not "attached" clients
    assert r.doc["clients"] == {"attached": 0}
    # a session the daemon does not watch yet is tier 2, and says why
    daemon.stop()
    r = doctor(srv, bundled=True)
    a = row(r, pane)
    assert a["tier"] == 2 and a["tier_reason"].startswith("no daemon")
    assert r.doc["below_expected_tier"] == 0  # a missing daemon never fails the gate


def tma_shim(tmp_path) -> str:
    """An absolute `tma` that runs this interpreter's tma: the test needs no venv bin/ on
    PATH (a bare `tma` there would be whatever PATH finds, or nothing)."""
    shim = tmp_path / "shim" / "tma"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tma "$@"\n')
    shim.chmod(0o755)
    return str(shim)


def test_doctor_sees_the_daemon_form_of_the_status_line(srv, daemon, tmp_path):
    srv.shell_pane()
    tma = tma_shim(tmp_path)
    srv.tmux("set-option", "-g", "status-right", tmux_status.daemon_status_right(tma))
    r = doctor(srv)
    seg = r.doc["ambient_driver"]["daemon_segment"]
    assert (seg["reads"], seg["live"]) == (True, False)
    assert "daemon form, but no daemon keeps the segment now" in r.section("ambient")
    daemon.start()
    srv.wait_for(lambda: srv.tmux("show-options", "-sv", tmux_status.SEGMENT_UNTIL,
                                  check=False).strip() != "", timeout=10)
    r = doctor(srv)
    seg = r.doc["ambient_driver"]["daemon_segment"]
    assert (seg["reads"], seg["live"]) == (True, True)
    assert "daemon form: the status line reads the daemon's segment" in r.section("ambient")
    srv.tmux("set-option", "-g", "status-right", f"#({tma} status)")
    r = doctor(srv)
    assert r.doc["ambient_driver"]["daemon_segment"]["reads"] is False
    assert "daemon form" not in r.section("ambient")


def test_a_config_edit_the_daemon_could_not_load_says_so(srv, daemon):
    """The daemon reloads an edit by itself; one that does not load keeps it on the old
    settings, and doctor says so and why, until the file is fixed."""
    import os
    import time

    srv.shell_pane()
    srv.config.write_text("[fold]\ndwell_secs = 3\n")
    past = time.time() - 60
    os.utime(srv.config, (past, past))
    daemon.start()
    r = doctor(srv)
    assert r.doc["config"]["daemon_stale"] is False and "config changed" not in r.text
    srv.config.write_text("[fold]\ndwell_secs = 4\n")  # loaded by the daemon's watch
    srv.wait_for(lambda: daemon.status()["reloads"] == 1, timeout=8)
    assert doctor(srv).doc["config"]["daemon_stale"] is False
    srv.config.write_text('[fold]\ndwell_secs = "x"\n')
    srv.wait_for(lambda: daemon.status()["reload_errors"] == 1, timeout=8)
    r = doctor(srv)
    assert r.doc["config"]["daemon_stale"] is True and r.rc == 1
    section = r.section("daemon")
    assert "last error: reload kept the running config: " in section
    assert ("✗ the config changed after the daemon loaded it (" in section
            and "): it still runs the old settings (the edit does not load: see the last "
                "error); fix the file and the daemon reloads it within 2 s" in section)
    srv.config.write_text("[fold]\ndwell_secs = 5\n")
    srv.wait_for(lambda: daemon.status()["reloads"] == 2, timeout=8)
    r = doctor(srv)
    assert r.doc["config"]["daemon_stale"] is False and "config changed" not in r.text


def test_doctor_names_every_sink_that_rings_as_notify_test_does(srv, daemon, tmp_path):
    """The log, ntfy and the webhook ring beside the message line: doctor's `sink:` names
    each (the daemon's view, from the one answer notify-test's last line words), and a
    push sink whose `on` leaves a trigger out is not named for it."""
    from tests.helpers.http_sink import Sink

    push = Sink()
    try:
        srv.shell_pane()
        log = tmp_path / "n.jsonl"
        srv.config.write_text(
            f'[notify]\non = ["blocked", "done"]\ndesktop = false\nlog = "{log}"\n'
            f'[notify.ntfy]\nurl = "{push.url("/topic")}"\non = ["blocked"]\n'
            f'[notify.webhook]\nurl = "{push.url()}"\n')
        daemon.start()
        r = doctor(srv)
        assert r.section("sink") == (
            f"sink:    the daemon rings: blocked → the tmux message line, the log {log}, "
            f"ntfy, webhook; done → the tmux message line, the log {log}, webhook")
        named = [x["sink"] for x in r.doc["notify"]["sink"]["blocked"]["rings"]]
        assert named == ["message", "log", "ntfy", "webhook"]
        test = srv.tma("debug", "notify-test", env=daemon.env)
        assert test.stdout.splitlines()[-1] == (
            f"rings the tmux message line on every attached client; a line in {log}; "
            "ntfy (its line above); webhook (its line above)"), test.stdout
        done = srv.tma("debug", "notify-test", "--trigger", "done", env=daemon.env)
        assert done.stdout.splitlines()[-1] == (
            f"rings the tmux message line on every attached client; a line in {log}; "
            "webhook (its line above)"), done.stdout
    finally:
        push.close()

"""The daemon tier on private servers: control clients, quiet edges, lifecycle.

The agents are hookless fakes (a process named `claude`, really `sleep`) whose panes
show real captured Claude screens written straight to their ttys. Stamps are read
from tmux with show-options, never through a tma command (which would poll and so
hide whether the daemon did the work). Each latency is measured from the moment the
screen is on the pane to the moment the stamp is; the figures are printed (`-s`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import _claude, _draw, _until, settled, watched
from tests.helpers.ptyclient import PtyClient

DEADLINE = 1.5


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


def _report(what: str, value: float, unit: str = "s") -> None:
    print(f"\nMEASURED {what} {value:.3f}{unit}")


@pytest.mark.tmux_contract
def test_blocked_working_idle_and_exit_are_stamped_from_edges(srv, daemon):
    pane, pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)  # the first sweep, then edges

    _draw(srv, pane, "blocked")
    dt = _until(srv, pane, "@agent_state", "blocked")
    _report("blocked", dt)
    assert dt <= DEADLINE

    time.sleep(0.8)  # past the quiet threshold: the output below starts a new burst
    _draw(srv, pane, "working")
    dt = _until(srv, pane, "@agent_state", "working")
    _report("working", dt)
    assert dt <= DEADLINE

    time.sleep(0.3)
    _draw(srv, pane, "idle")
    dt = _until(srv, pane, "@agent_state", "idle")
    dwell = 3.0
    _report("idle-after-work", dt)
    assert dt <= dwell + DEADLINE

    def rollups() -> tuple[str, str]:
        return (srv.tmux("show-options", "-w", "-qv", "-t", pane, "@agent_summary").strip(),
                srv.tmux("show-options", "-qv", "-t", pane, "@agent_session_summary").strip())

    srv.wait_for(lambda: rollups() == ("idle:1", "idle:1"), timeout=2)  # the pass's last spawn
    os.kill(pid, signal.SIGKILL)  # the agent quits; its shell prints a prompt
    dt = _until(srv, pane, "@agent_state", "")
    _report("exit", dt)
    assert dt <= DEADLINE
    assert srv.option(pane, "@agent_stamped_at") == ""
    srv.wait_for(lambda: rollups() == ("", ""), timeout=0.3)  # the same pass as the removal


@pytest.mark.tmux_contract
def test_a_new_session_is_watched_within_a_second(srv, daemon):
    srv.shell_pane()
    daemon.start()
    t0 = time.monotonic()
    srv.tmux("new-session", "-d", "-s", "later", "sh")
    srv.wait_for(lambda: any(line.split() == ["1", "later"] for line in srv.tmux(
        "list-clients", "-F", "#{client_control_mode} #{session_name}").splitlines()),
        timeout=3, interval=0.01)
    dt = time.monotonic() - t0
    _report("session-watched", dt)
    assert dt <= 1.0
    srv.tmux("kill-session", "-t", "later")
    srv.wait_for(lambda: not any(line.endswith(" later") for line in srv.tmux(
        "list-clients", "-F", "#{client_control_mode} #{session_name}").splitlines()))


def test_killing_the_server_ends_the_daemon_and_leaves_nothing(srv, daemon):
    srv.shell_pane()
    daemon.start()
    assert len(daemon.files()) == 2
    t0 = time.monotonic()
    srv.tmux("kill-server")
    srv.wait_for(lambda: daemon.proc.poll() is not None, timeout=5)
    dt = time.monotonic() - t0
    _report("server-exit", dt)
    assert dt <= 2.0
    assert daemon.proc.returncode == 0
    assert daemon.files() == []


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_cleanly(srv, daemon, signo):
    srv.shell_pane()
    daemon.start()
    watchers = _control_clients(srv)
    assert watchers
    daemon.proc.send_signal(signo)
    assert daemon.proc.wait(timeout=3) == 0
    assert daemon.files() == []
    srv.wait_for(lambda: not _control_clients(srv), timeout=3)


def _control_clients(srv) -> list[str]:
    out = srv.tmux("list-clients", "-F", "#{client_control_mode} #{client_pid}")
    return [ln.split()[1] for ln in out.splitlines() if ln.startswith("1 ")]


def test_two_ensures_at_once_start_one_daemon(srv, daemon):
    srv.shell_pane()
    results = []

    def ensure():
        results.append(subprocess.run(daemon.argv("--ensure"), env=daemon.env,
                                      capture_output=True, text=True, timeout=20))

    threads = [threading.Thread(target=ensure) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
    # a loser of the lock race may still be exiting (how long it takes is the machine's
    # load): one daemon left is the claim, two that stay fail it at the timeout
    srv.wait_for(lambda: len(daemon.pids()) == 1, timeout=10)
    assert daemon.status()["pid"] == daemon.pids()[0]
    assert len(_control_clients(srv)) == 1
    again = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                           timeout=20)
    assert again.returncode == 0 and len(daemon.pids()) == 1


def test_a_killed_daemons_leftovers_do_not_block_a_new_one(srv, daemon):
    srv.shell_pane()
    daemon.start()
    old = daemon.status()["pid"]
    os.kill(old, signal.SIGKILL)
    daemon.proc.wait(timeout=5)
    assert len(daemon.files()) == 2  # the lock file and socket stay behind
    res = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                         text=True, timeout=20)
    assert res.returncode == 0, res.stderr
    status = daemon.status()
    assert status is not None and status["pid"] != old
    # the dead daemon's control client detached (its stdin closed with it)
    srv.wait_for(lambda: len(_control_clients(srv)) == 1, timeout=3)


def test_ensure_without_a_server_is_a_clean_no_op(srv, daemon):
    res = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                         text=True, timeout=20)
    assert res.returncode == 0
    assert daemon.pids() == [] and daemon.files() == []


def test_the_runtime_files_are_private(srv, daemon):
    srv.shell_pane()
    daemon.start()
    d = daemon.runtime / "tma"
    assert d.stat().st_mode & 0o777 == 0o700
    assert daemon.sock().stat().st_mode & 0o777 == 0o600
    lock = next(d.glob("*.lock")).read_text().splitlines()
    assert lock[0] == str(daemon.status()["pid"]) and lock[1].startswith("version=")


@pytest.mark.tmux_contract
def test_a_control_client_never_resizes_a_users_window(srv, daemon):
    pane = srv.shell_pane()
    user = PtyClient(srv, cols=132, rows=41)
    try:
        srv.wait_for(lambda: srv.display(pane, "#{window_width}x#{window_height}") == "132x40")
        daemon.start()
        srv.wait_for(lambda: len(_control_clients(srv)) == 1)
        _drawn_and_read(srv, daemon, pane)
        assert srv.display(pane, "#{window_width}x#{window_height}") == "132x40"
    finally:
        user.close()
    # alone with the control client, the window keeps its size: it has no say in it
    srv.wait_for(lambda: len(_control_clients(srv)) == 1 and
                 len(srv.tmux("list-clients").splitlines()) == 1)
    time.sleep(0.3)
    assert srv.display(pane, "#{window_width}x#{window_height}") == "132x40"


def _drawn_and_read(srv, daemon, pane: str) -> None:
    """Output on the pane, and the daemon's reads of it done: its onset and quiet-edge
    reads counted, then its counters still. (A guessed sleep let a slow daemon read
    after the size was checked: the check then proved nothing.)"""
    edges = settled(daemon)["edges"]
    srv.draw(pane, "some output\nand more")
    srv.wait_for(lambda: daemon.status()["edges"] >= edges + 2, timeout=10)
    settled(daemon)


@pytest.mark.tmux_contract
def test_a_sized_control_client_never_resizes_a_users_window(srv, daemon):
    """A control client without a size has no say on tmux 3.3 whatever its flags, so the
    test above cannot tell whether ignore-size is there. Give the daemon's client a size
    (it is the most recent client: window-size latest would pick it): only ignore-size
    keeps the window at the size of the user's client."""
    pane = srv.shell_pane()
    user = PtyClient(srv, cols=132, rows=41)
    try:
        srv.wait_for(lambda: srv.display(pane, "#{window_width}x#{window_height}") == "132x40")
        daemon.start()
        srv.wait_for(lambda: len(_control_clients(srv)) == 1)
        for line in srv.tmux("list-clients", "-F",
                             "#{client_control_mode} #{client_name}").splitlines():
            if line.startswith("1 "):
                srv.tmux("refresh-client", "-t", line[2:], "-C", "80x24")
        _drawn_and_read(srv, daemon, pane)
        assert srv.display(pane, "#{window_width}x#{window_height}") == "132x40"
    finally:
        user.close()


@pytest.mark.tmux_contract
def test_a_control_client_never_clears_attention(srv, daemon):
    """The seen clear retires a done mark once a client showing the pane has been active
    since the mark was raised. A control client attaching is such activity (tmux sets
    client_activity at attach), so the mark is raised first and the daemon's clients
    attach a second later: only the exclusion of control clients keeps the mark."""
    srv.config.write_text("[daemon]\nsweep_secs = 1\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    srv.tma("ls", manifests=False, check=True)  # a poll stamps it: the episode starts
    assert srv.option(pane, "@agent_state") == "idle"
    srv.tmux("set-option", "-p", "-t", pane, "@agent_attention", "1")
    srv.next_second()
    time.sleep(1.0)  # client_activity has whole seconds: attach clearly after the episode
    daemon.start()
    srv.wait_for(lambda: len(_control_clients(srv)) == 1)
    sweeps = daemon.status()["sweeps"]
    _draw(srv, pane, "idle")  # and an edge is read
    srv.wait_for(lambda: daemon.status()["sweeps"] >= sweeps + 2, timeout=8)
    assert srv.option(pane, "@agent_attention") == "1"
    assert srv.option(pane, "@agent_state") == "idle"


def test_a_flood_of_output_from_twenty_panes_is_no_capture_storm(srv, daemon):
    panes = []
    for _ in range(20):
        pane, _pid = _claude(srv)
        panes.append(pane)
    daemon.start()
    base = daemon.status()
    ttys = [srv.display(p, "#{pane_tty}") for p in panes]
    handles = [open(t, "w", encoding="utf-8") for t in ttys]
    try:
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < 3.0:  # every pane streams ~50 lines a second
            for fh in handles:
                fh.write(f"streaming line {n} ✻ Working… (esc to interrupt)\r\n")
                fh.flush()
            n += 1
            time.sleep(0.02)
        elapsed = time.monotonic() - t0
    finally:
        for fh in handles:
            fh.close()
    during = daemon.status()
    reads = during["edges"] - base["edges"]
    rate = reads / elapsed
    _report("flood-reads-per-second", rate, "/s")
    # the streamed lines are not claude's spinner row (no glyph in column 0), so the panes
    # stay idle under the stream: one onset read per pane, then burst re-reads backing off
    # (0.5 s, 0.5 s, then 1 s later): at most four reads per pane in the 3 s, whatever the
    # byte rate
    assert reads <= len(panes) * 4, during
    # the stream ends: one quiet-edge read per pane, then nothing
    time.sleep(1.5)
    after = daemon.status()
    assert after["edges"] - during["edges"] <= len(panes) + 5, after
    time.sleep(1.0)
    assert daemon.status()["edges"] - after["edges"] <= len(panes)  # dwell follow-ups only


@pytest.mark.tmux_contract
def test_one_burst_is_read_once_at_its_onset_and_once_at_its_quiet_edge(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    before = settled(daemon)  # every edge of the first screen has been served
    _draw(srv, pane, "blocked")
    _until(srv, pane, "@agent_state", "blocked")
    after = settled(daemon)  # past the quiet edge, and anything it armed
    assert after["edges"] - before["edges"] == 2, (before, after)
    # three captures: the onset read's, the onset read's second look at a prompt it
    # has not recorded yet (a new dialog target is believed when it reads the same
    # twice, CONFIRM_MS apart: tma.runtime.cycle), and the quiet edge's
    assert after["captures"] - before["captures"] == 3, (before, after)
    # a quiet blocked pane is not read again (the sweep is 45 s away): counters that
    # stood still 1.5 s stay so for 3 s more
    assert settled(daemon, still=3.0)["captures"] == after["captures"]


def _reload(daemon) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tma", "--socket-name", daemon.srv.name,
                           "reload"], env=daemon.env, capture_output=True, text=True,
                          timeout=20)


def test_reload_swaps_a_good_config_and_keeps_the_old_one_on_a_broken_one(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    assert daemon.status()["quiet_ms"] == 600
    srv.config.write_text("[daemon]\nquiet_ms = 400\nsweep_secs = 30\n")
    res = _reload(daemon)
    assert res.returncode == 0, res.stderr
    assert "reloaded" in res.stderr
    status = daemon.status()
    # (the daemon's own config watch may have reloaded the edit too: at least once)
    assert (status["quiet_ms"], status["sweep_ms"]) == (400, 30_000) and status["reloads"] >= 1

    srv.config.write_text('[daemon]\nquiet_ms = "soon"\n')
    res = _reload(daemon)
    assert res.returncode == 1
    assert "daemon.quiet_ms" in res.stderr and "kept the running config" in res.stderr
    status = daemon.status()
    assert status["quiet_ms"] == 400 and status["reload_errors"] >= 1
    assert "daemon.quiet_ms" in status["last_error"]
    _draw(srv, pane, "blocked")  # still watching, with the config it kept
    assert _until(srv, pane, "@agent_state", "blocked") <= DEADLINE


def test_an_edited_config_takes_effect_without_a_reload(srv, daemon):
    """The daemon watches config.toml (by stat, as it watches hosts.toml): an edit takes
    effect within a few seconds with no `tma reload`; an edit that does not load keeps
    the running config and says so in one log line (not one per look); the fix after
    it loads."""
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    assert (daemon.status()["quiet_ms"], daemon.status()["reloads"]) == (600, 0)
    srv.config.write_text("[daemon]\nquiet_ms = 400\n")
    srv.wait_for(lambda: daemon.status()["quiet_ms"] == 400, timeout=8)
    assert daemon.status()["reloads"] == 1

    srv.config.write_text('[daemon]\nquiet_ms = "soon"\n')
    srv.wait_for(lambda: daemon.status()["reload_errors"] == 1, timeout=8)
    status = daemon.status()
    assert status["quiet_ms"] == 400 and "daemon.quiet_ms" in status["last_error"]
    time.sleep(5)  # two more looks at the file: the broken edit is not tried again
    assert daemon.status()["reload_errors"] == 1
    _draw(srv, pane, "blocked")  # still watching, with the config it kept
    assert _until(srv, pane, "@agent_state", "blocked") <= DEADLINE

    srv.config.write_text("[daemon]\nquiet_ms = 500\n")
    srv.wait_for(lambda: daemon.status()["quiet_ms"] == 500, timeout=8)
    assert (daemon.status()["reloads"], daemon.status()["last_error"]) == (2, "")
    assert daemon.proc is not None
    daemon.proc.send_signal(signal.SIGTERM)
    _out, err = daemon.proc.communicate(timeout=15)
    said = [x for x in err.decode().splitlines() if "config.toml changed: " in x]
    assert len(said) == 3, err
    assert said[0].endswith("config.toml changed: reloaded the config and manifests")
    assert "config.toml changed: reload kept the running config: " in said[1]
    assert "daemon.quiet_ms" in said[1]
    assert said[2].endswith("config.toml changed: reloaded the config and manifests")


def test_reload_without_a_daemon_is_a_clean_no_op(srv, daemon):
    srv.shell_pane()
    res = _reload(daemon)
    assert res.returncode == 0
    assert "no daemon running" in res.stderr


def _cpu_seconds(pid: int) -> float:
    """User + system time of the daemon and its reaped children (its tmux spawns)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def test_cpu_with_twenty_agent_panes_quiet_and_streaming(srv, daemon):
    panes = [_claude(srv)[0] for _ in range(20)]
    for pane in panes:
        _draw(srv, pane, "idle")
    daemon.start()
    pid = settled(daemon)["pid"]  # the start-up sweep and the first edges are over
    c0, t0 = _cpu_seconds(pid), time.monotonic()
    time.sleep(10.0)
    quiet = (_cpu_seconds(pid) - c0) / (time.monotonic() - t0)
    _report("cpu-quiet-20-panes", quiet * 100, "% of a core")
    handles = [open(srv.display(p, "#{pane_tty}"), "w", encoding="utf-8") for p in panes]
    try:
        c0, t0 = _cpu_seconds(pid), time.monotonic()
        n = 0
        while time.monotonic() - t0 < 10.0:  # ~20 lines a second from every pane
            for fh in handles:
                fh.write(f"line {n} ✻ Working… (esc to interrupt)\r\n")
                fh.flush()
            n += 1
            time.sleep(0.05)
        streaming = (_cpu_seconds(pid) - c0) / (time.monotonic() - t0)
    finally:
        for fh in handles:
            fh.close()
    _report("cpu-streaming-20-panes", streaming * 100, "% of a core")
    assert quiet < 0.01
    assert streaming < 0.10


def _doctor(daemon) -> dict:
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", daemon.srv.name,
                          "doctor", "--json"], env=daemon.env, capture_output=True,
                         text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["daemon"]


def test_doctor_says_whether_the_daemon_runs_and_what_a_dead_one_left(srv, daemon):
    srv.shell_pane()
    off = _doctor(daemon)
    assert (off["running"], off["pid"], off["stale"]) == (False, None, [])
    daemon.start()
    on = _doctor(daemon)
    assert on["running"] and on["answers"] and on["pid"] == daemon.status()["pid"]
    assert (on["version_skew"], on["sessions"], on["last_error"]) == (False, 1, None)
    os.kill(on["pid"], signal.SIGKILL)
    daemon.proc.wait(timeout=5)
    dead = _doctor(daemon)
    assert not dead["running"]
    assert sorted(Path(p).suffix for p in dead["stale"]) == [".lock", ".sock"]
    text = subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv.name, "doctor"],
                          env=daemon.env, capture_output=True, text=True, timeout=30).stdout
    assert "daemon:  not running" in text and "left by a daemon that died" in text


@pytest.mark.tmux_contract
def test_the_sweep_finds_an_agent_that_never_printed_anything(srv, daemon):
    srv.config.write_text("[daemon]\nsweep_secs = 1\n")
    srv.shell_pane()
    daemon.start()
    sweeps = daemon.status()["sweeps"]
    pane = srv.new_pane(f"exec {srv.fake('claude')} 100000")  # a blank screen, no output
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    _until(srv, pane, "@agent_name", "claude", timeout=3)
    assert daemon.status()["sweeps"] > sweeps
    assert srv.option(pane, "@agent_state") in ("unknown", "idle", "working", "blocked")


def test_ensure_with_a_broken_config_says_so_and_leaves_nothing_running(srv, daemon):
    srv.shell_pane()
    srv.config.write_text("[daemon]\nsweep_secs = 0\n")
    res = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                         text=True, timeout=20)
    # refused before anything is spawned, naming the key (the config is checked where
    # it is loaded, so an autostarting surface refuses it too instead of spawning)
    assert res.returncode == 1
    assert "daemon.sweep_secs: must be between 1 and 86400" in res.stderr
    assert daemon.pids() == [] and [f for f in daemon.files() if not f.endswith(".log")] == []

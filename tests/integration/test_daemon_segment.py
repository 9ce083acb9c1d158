"""The daemon's status-line segment on private servers, seen by a real attached client.

The status-right under test is the documented one (tma.daemon.segment.status_right);
its polling branch runs a wrapper that counts every `tma status` job tmux starts, so
"the status line spawns nothing" is counted, not assumed.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tests.helpers.ptyclient import PtyClient
from tma.daemon import segment


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


def _wrapper(srv) -> tuple[str, object]:
    counter = srv.root / "status-jobs"
    counter.touch()
    script = srv.bin / "tma-counted"
    script.write_text(f"#!/bin/sh\necho x >> {counter}\n"
                      f"exec {sys.executable} -m tma --socket-name {srv.name} \"$@\"\n")
    script.chmod(0o755)
    return str(script), counter


def _jobs(counter) -> int:
    return len(counter.read_text().splitlines())


def _wired(srv):
    """The daemon form in status-right, redrawn every second, a real client attached."""
    tma, counter = _wrapper(srv)
    srv.tmux("set-option", "-g", "status-right", segment.status_right(tma))
    srv.tmux("set-option", "-g", "status-right-length", "200")
    srv.tmux("set-option", "-g", "status-interval", "1")
    return counter


def _shown(srv) -> str:
    """What the status-right expands to now (the branch a redraw would take)."""
    return srv.tmux("display-message", "-p", "#{T:status-right}").rstrip("\n")


def _tma_status(srv) -> str:
    res = srv.tma("status", manifests=False, check=True)
    return res.stdout


@pytest.mark.tmux_contract
def test_the_segment_follows_state_with_no_status_job(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    counter = _wired(srv)
    client = PtyClient(srv)
    try:
        daemon.start()
        srv.wait_for(lambda: srv.tmux("show-options", "-sv", segment.SEGMENT,
                                      check=False).strip() != "", timeout=10)
        _until(srv, pane, "@agent_state", "idle", timeout=10)
        srv.wait_for(lambda: "○1" in _shown(srv), timeout=3)
        jobs0 = _jobs(counter)
        _draw(srv, pane, "blocked")
        _until(srv, pane, "@agent_state", "blocked", timeout=10)
        t0 = time.monotonic()
        srv.wait_for(lambda: "⚑1" in _shown(srv), timeout=3, interval=0.02)
        lag = time.monotonic() - t0
        print(f"\nMEASURED segment lag after the stamp {lag:.3f}s")
        assert lag < 1.5
        # the client's own status line drew it (set-option redraws every client)
        srv.wait_for(lambda: "⚑1" in client.output(), timeout=3)
        # a hook's stamp on a pane that prints nothing (no read of the daemon's)
        other = srv.new_pane("sleep 100000")
        res = srv.tma("event", "--agent", "claude", "--kind", "UserPromptSubmit", "--pane",
                      other, manifests=False, input="{}")
        assert res.returncode == 0
        _until(srv, other, "@agent_state", "working")
        t0 = time.monotonic()
        srv.wait_for(lambda: "●1" in _shown(srv), timeout=4, interval=0.02)
        lag = time.monotonic() - t0
        print(f"\nMEASURED segment lag after a hook stamp {lag:.3f}s")
        assert lag < segment.IDLE_REFRESH_MS / 1000 + 1
        time.sleep(3)  # three more redraws at status-interval 1
        assert _jobs(counter) == jobs0, "the status line ran a tma status job"
        value = srv.tmux("show-options", "-sv", segment.SEGMENT).rstrip("\n")
        assert value == _tma_status(srv)  # the very bytes `tma status` prints
        assert daemon.status()["segment"] == value
    finally:
        client.close()


def test_a_daemon_killed_with_9_leaves_no_stale_count(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    counter = _wired(srv)
    client = PtyClient(srv)
    try:
        daemon.start()
        srv.wait_for(lambda: "○1" in _shown(srv), timeout=10)
        jobs0 = _jobs(counter)
        os.kill(daemon.status()["pid"], signal.SIGKILL)
        daemon.proc.wait(timeout=5)
        t0 = time.monotonic()
        # the deadline passes: the status line takes the polling branch again
        srv.wait_for(lambda: _jobs(counter) > jobs0, timeout=segment.TTL_S + 6)
        fallback = time.monotonic() - t0
        print(f"\nMEASURED polling again after kill -9 {fallback:.3f}s")
        assert fallback <= segment.TTL_S + 3
        assert int(srv.tmux("show-options", "-sv", segment.UNTIL)) <= time.time()
    finally:
        client.close()


@pytest.mark.tmux_contract
def test_a_daemon_that_stops_hands_the_status_line_back_at_once(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    _wired(srv)
    daemon.start()
    srv.wait_for(lambda: srv.tmux("show-options", "-sv", segment.UNTIL,
                                  check=False).strip() != "", timeout=10)
    os.kill(daemon.status()["pid"], signal.SIGTERM)
    daemon.proc.wait(timeout=5)
    assert srv.tmux("show-options", "-s", check=False).count("@tma_status_") == 0


def test_no_segment_is_written_while_no_status_line_reads_it(srv, daemon):
    """Every set-option redraws the status lines, and a redraw re-runs #() jobs: with the
    polling form (or none) in status-right the daemon must write nothing there."""
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    tma, counter = _wrapper(srv)
    srv.tmux("set-option", "-g", "status-right", f"#({tma} status)")
    srv.tmux("set-option", "-g", "status-interval", "15")
    client = PtyClient(srv)
    try:
        daemon.start()
        _until(srv, pane, "@agent_state", "idle", timeout=10)
        srv.wait_for(lambda: _jobs(counter) >= 1, timeout=10)
        looked = daemon.status()["segment_refreshes"]
        time.sleep(6)  # past one NOT_READ_MS look, well inside one status-interval
        # it looked, saw no status line reading the segment, and wrote nothing (the
        # status line's job count is no measure here: the daemon's stamps and rollups
        # are option writes too, and each redraws the status line)
        st = daemon.status()
        assert st["segment_refreshes"] > looked
        assert st["segment_writes"] == 0 and st["segment"] is None
        assert srv.tmux("show-options", "-s", check=False).count("@tma_status_") == 0
        # switching to the daemon form: the segment appears within a look
        srv.tmux("set-option", "-g", "status-right", segment.status_right(tma))
        srv.wait_for(lambda: srv.tmux("show-options", "-sv", segment.SEGMENT,
                                      check=False).strip() != "",
                     timeout=segment.NOT_READ_MS / 1000 + 3)
    finally:
        client.close()


def _status_counts(daemon) -> tuple[int, int]:
    st = daemon.status()
    return st["segment_answers"], st["segment_naks"]


@pytest.mark.tmux_contract
def test_tma_status_is_answered_by_the_daemon_with_the_same_bytes(srv, daemon):
    """With a daemon, `tma status` (tmux format, no selectors, same config) asks the
    daemon for the segment it keeps instead of running its own cycle; what it prints is
    what the daemonless cycle prints, state changes included."""
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    no_daemon = {"XDG_RUNTIME_DIR": str(srv.root / "elsewhere")}
    (srv.root / "elsewhere").mkdir(mode=0o700)

    def via_daemon() -> str:
        return srv.tma("status", manifests=False, env=daemon.env, check=True).stdout

    via_daemon()  # the first ask finds nothing computed: it polls, and the daemon starts
    srv.wait_for(lambda: (via_daemon(), _status_counts(daemon)[0])[1] >= 1, timeout=6)
    answered = _status_counts(daemon)[0]
    assert via_daemon() == srv.tma("status", manifests=False, env=no_daemon,
                                   check=True).stdout != ""
    assert _status_counts(daemon)[0] == answered + 1
    _draw(srv, pane, "blocked")
    _until(srv, pane, "@agent_state", "blocked", timeout=10)
    srv.wait_for(lambda: "⚑1" in via_daemon(), timeout=4)
    assert via_daemon() == srv.tma("status", manifests=False, env=no_daemon,
                                   check=True).stdout


def test_tma_status_follows_an_edited_config_without_a_reload(srv, daemon):
    """An edit of the config (or a manifest added) is the daemon's to load: it reloads it
    by itself within seconds and answers `tma status` again (the status line keeps the
    segment, the hosts' counts with it), in the new config's glyphs; an edit that does
    not load is never answered for: the status line polls and shows `tma:config!`.
    Selectors and other formats never ask."""
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    srv.config.write_text("[status]\n")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)

    def ask() -> str:
        return srv.tma("status", manifests=False, env=daemon.env).stdout

    ask()
    srv.wait_for(lambda: (ask(), _status_counts(daemon)[0])[1] >= 1, timeout=6)
    srv.config.write_text('[status]\nidle = { glyph = "I" }\n')  # no `tma reload`
    srv.wait_for(lambda: "I1" in ask() and daemon.status()["reloads"] == 1, timeout=8)
    answers, naks = _status_counts(daemon)
    assert "I1" in ask() and _status_counts(daemon) == (answers + 1, naks)  # the daemon's
    # a user manifest added: the daemon reloads its set by itself too
    agents = srv.root / "config" / "tma" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "snooze.toml").write_text("# a new agent\n")
    srv.wait_for(lambda: daemon.status()["reloads"] + daemon.status()["reload_errors"] == 2,
                 timeout=8)
    answers, naks = _status_counts(daemon)
    # a broken edit: the daemon keeps its config, and the status line says the file is bad
    srv.config.write_text("[status]\nidle = 3\n")
    srv.wait_for(lambda: "status.idle" in daemon.status()["last_error"], timeout=8)
    assert ask() == "tma:config!"
    assert _status_counts(daemon) == (answers, naks + 1)
    srv.config.write_text("[status]\n")
    srv.wait_for(lambda: daemon.status()["last_error"] == "", timeout=8)
    answers, naks = _status_counts(daemon)
    srv.tma("status", "--agent", "claude", manifests=False, env=daemon.env, check=True)
    srv.tma("status", "--format", "plain", manifests=False, env=daemon.env, check=True)
    assert _status_counts(daemon) == (answers, naks)  # never asked


def test_tma_status_after_a_kill_9_of_the_daemon_still_answers(srv, daemon):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    os.kill(daemon.status()["pid"], signal.SIGKILL)
    daemon.proc.wait(timeout=5)
    res = srv.tma("status", manifests=False, env=daemon.env, check=True, timeout=10)
    assert "○1" in res.stdout


def test_a_daemon_answered_status_imports_only_the_client(srv, daemon):
    import subprocess

    from tests.helpers.import_audit import FORBIDDEN, PROBE

    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    srv.wait_for(lambda: (srv.tma("status", manifests=False, env=daemon.env),
                          _status_counts(daemon)[0])[1] >= 1, timeout=6)
    answers = _status_counts(daemon)[0]
    res = subprocess.run([sys.executable, "-c", PROBE % ["--socket-name", srv.name, "status"]],
                         capture_output=True, text=True, env=daemon.env, timeout=30)
    assert res.returncode == 0, res.stderr
    mods = set(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our own repr
    assert _status_counts(daemon)[0] == answers + 1  # the daemon answered it
    heavy = sorted(m for m in FORBIDDEN + ("socket", "tma.runtime.cycle", "tma.runtime.config",
                                           "tma.runtime.manifests", "tma.tmux.adapter",
                                           "tma.tmux.read", "tma.ui.status")
                   if m in mods)
    assert heavy == [], f"a daemon-answered tma status imported {heavy}"


def _message_log(srv) -> int:
    """How many entries tmux's message log holds (show-messages wants a client: a
    short-lived control client asks; its own attach and show-messages add two)."""
    import subprocess

    out = subprocess.run([srv.tmux_bin, "-u", "-L", srv.name, "-f", "/dev/null", "-C",
                          "attach"], input="show-messages\n", capture_output=True,
                         text=True, env=srv.env, timeout=10).stdout
    blocks, inside = [], False
    for line in out.splitlines():
        if line.startswith("%begin"):
            inside = True
            blocks.append(0)
        elif line.startswith(("%end", "%error")):
            inside = False
        elif inside:
            blocks[-1] += 1
    return blocks[-1]


@pytest.mark.tmux_contract
def test_an_idle_segment_refresh_logs_few_commands_in_tmux_s_message_log(srv, daemon):
    """tmux logs every command it runs (cmd-queue.c, every release) up to message-limit
    (1000): a refresh that logged five (source-file, list-panes, display-message,
    list-sessions, set-option) filled it in 6.5 min (bench/bench_message_log.py). Now a
    quiet refresh is one command line: list-panes and the deadline, the status options
    every NOT_READ_MS."""
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    _wired(srv)
    srv.tmux("set-option", "-g", "message-limit", "100000")
    daemon.start()
    srv.wait_for(lambda: srv.tmux("show-options", "-sv", segment.SEGMENT,
                                  check=False).strip() != "", timeout=10)
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    time.sleep(2 * segment.IDLE_REFRESH_MS / 1000)  # past the start's edges and sweep
    before, refreshes0 = _message_log(srv), daemon.status()["segment_refreshes"]
    time.sleep(12)
    after, refreshes = _message_log(srv), daemon.status()["segment_refreshes"]
    n = refreshes - refreshes0
    per = (after - before - 2) / n
    print(f"\nMEASURED {after - before - 2} message-log entries over {n} idle refreshes "
          f"({per:.2f} each)")
    assert n >= 4 and per <= 3.0, (n, after - before)

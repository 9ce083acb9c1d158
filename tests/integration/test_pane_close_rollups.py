"""Closing a pane recomputes the rollups it counted in (issue 22): the window's
@agent_summary and the session's @agent_session_summary, by the next one-shot and, with
a daemon, on the layout change alone. The closed pane's own options go with it, so
nothing else would ever take its count out."""

from __future__ import annotations

import pytest

from tests.helpers.daemon import watched


def _rollups(srv, pane: str) -> tuple[str, str]:
    return (srv.tmux("show-options", "-w", "-qv", "-t", pane, "@agent_summary").strip(),
            srv.tmux("show-options", "-qv", "-t", pane, "@agent_session_summary").strip())


def _two_in_one_window(srv) -> tuple[str, str, str]:
    """Two agent panes side by side (blocked, idle) and a third in another window."""
    a = srv.agent_pane()
    b = srv.tmux("split-window", "-d", "-t", a, "-P", "-F", "#{pane_id}",
                 f"exec {srv.fake('fakeagent')} 100000").strip()
    srv.wait_for(lambda: srv.display(b, "#{pane_current_command}") == "fakeagent")
    other = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-IDLE\n")
    srv.draw(other, "FAKE-WORKING\n")
    srv.ls()
    assert _rollups(srv, b) == ("blocked:1 idle:1", "blocked:1 working:1 idle:1")
    return a, b, other


@pytest.mark.tmux_contract
def test_a_one_shot_after_kill_pane_recomputes_both_rollups(srv):
    a, b, other = _two_in_one_window(srv)
    srv.next_second()
    srv.tmux("kill-pane", "-t", a)
    srv.ls()
    assert _rollups(srv, b) == ("idle:1", "working:1 idle:1")
    assert _rollups(srv, other)[0] == "working:1"  # the other window is untouched
    srv.tmux("kill-pane", "-t", b)  # the window closes; the session counts the rest
    srv.next_second()
    srv.ls()
    assert _rollups(srv, other) == ("working:1", "working:1")


def test_the_daemon_recomputes_on_the_close_alone(srv, tmp_path):
    """No one-shot runs after the kill: the daemon's layout-change edge does it."""
    a, b, _other = _two_in_one_window(srv)
    with watched(srv, tmp_path) as daemon:
        daemon.start()
        srv.tmux("kill-pane", "-t", a)
        srv.wait_for(lambda: _rollups(srv, b) == ("idle:1", "working:1 idle:1"), timeout=3)


def _in_process(srv, monkeypatch):
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMA_TMUX_BIN", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    import time

    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle, probe
    from tma.tmux.adapter import Server

    server = Server(srv.tmux_bin, socket_name=srv.name)
    probe(server)  # the server's -F answer, as every server has it after its first cycle
    # 3 s on: the screens drawn just now have sat still, so no prompt is read twice
    return server, Cycle(server, Config(), manifest_dir=str(srv.manifests),
                         clock=lambda: time.time_ns() // 1_000_000 + 3000)


@pytest.mark.tmux_contract
def test_a_cold_refresh_writes_the_rollups_with_the_stamps(srv, monkeypatch):
    """Issue 29: read, capture, and one write holding the stamps and the rollups they
    leave (three spawns), not a fourth for the rollups."""
    a = srv.agent_pane()
    b = srv.tmux("split-window", "-d", "-t", a, "-P", "-F", "#{pane_id}",
                 f"exec {srv.fake('fakeagent')} 100000").strip()
    srv.wait_for(lambda: srv.display(b, "#{pane_current_command}") == "fakeagent")
    srv.draw(a, "FAKE-BLOCKED\n")
    srv.draw(b, "FAKE-WORKING\n")
    _server, cycle = _in_process(srv, monkeypatch)
    res = cycle.run()
    assert res.stats.produced == 2 and res.stats.spawns == 3
    assert _rollups(srv, a) == ("blocked:1 working:1", "blocked:1 working:1")


@pytest.mark.tmux_contract
def test_rollups_predicted_wrong_by_a_lost_race_are_written_again(srv, monkeypatch):
    """A hook's stamp lands between the cycle's read and its write: the cycle's guarded
    write is refused, so the rollups it sent with it were wrong; the re-read shows the
    hook's state and the rollups are written again to count it."""
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    server, cycle = _in_process(srv, monkeypatch)
    real = server.begin_source  # every batch of lines goes through it (source too)
    raced = []

    def hook_first(lines):
        if not raced and any("@agent_state" in line for line in lines):
            raced.append(1)  # the hook's claim as the intake writes it, unguarded
            import time

            from tma.core import plan as P
            from tma.tmux import write

            now = time.time_ns() // 1_000_000
            real([write.render(a, P.Plan(P.PUBLISH, state="blocked", detail="permission",
                                         source="hook", evidence_at=now), now,
                               name="fakeagent", pid=0, guarded=False)]).result()
        return real(lines)

    monkeypatch.setattr(server, "begin_source", hook_first)
    res = cycle.run()
    assert raced and srv.option(a, "@agent_state") == "blocked"
    assert _rollups(srv, a) == ("blocked:1", "blocked:1")
    assert res.stats.spawns == 5  # read, capture, the hook's write, the write, the fix

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

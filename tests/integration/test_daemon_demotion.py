"""Hook demotion on a private server: a stale hook claim that quiet edges keep
contradicting is demoted after `[daemon] demote_edges` edges, and the screen decides."""

from __future__ import annotations

import json
import time

import pytest
from test_daemon import Daemon, _claude, _draw, _until


@pytest.fixture
def daemon(srv, tmp_path):
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    d = Daemon(srv, runtime)
    try:
        yield d
    finally:
        d.stop()
        assert not d.pids(), "a daemon outlived its test"


def _hook_blocked(srv, pane: str) -> None:
    res = srv.tma("event", "--agent", "claude", "--kind", "Notification", "--pane", pane,
                  manifests=False, input=json.dumps({"notification_type": "quota_auto_resume_stale"}))
    assert res.returncode == 0
    _until(srv, pane, "@agent_source", "hook")


def _edges(srv, daemon, pane: str, n: int) -> None:
    """n quiet edges on the pane, each one read by the daemon."""
    for _ in range(n):
        reads = daemon.status()["edges"]
        _draw(srv, pane, "idle")
        srv.wait_for(lambda r=reads: daemon.status()["edges"] > r, timeout=6)


@pytest.mark.parametrize("threshold", [3, 1000])
def test_a_stale_hook_claim_contradicted_by_edges_is_demoted(srv, daemon, threshold):
    srv.config.write_text(f"[fold]\nhook_decay_secs = 1\n[daemon]\nquiet_ms = 150\n"
                          f"demote_edges = {threshold}\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _hook_blocked(srv, pane)
    time.sleep(1.3)  # the hook claim is no longer hook-fresh; its blocked decay is 300 s
    _edges(srv, daemon, pane, 4)
    if threshold == 1000:  # the control: the guard keeps the hook claim standing
        assert (srv.option(pane, "@agent_state"), srv.option(pane, "@agent_source")) == \
            ("blocked", "hook")
        assert daemon.status()["demoted"] == []
        return
    _until(srv, pane, "@agent_state", "idle", timeout=6)
    assert srv.option(pane, "@agent_source") == "capture"
    assert daemon.status()["demoted"] == [pane]
    # new hook evidence resets it: the hook is believed again
    _hook_blocked(srv, pane)
    _edges(srv, daemon, pane, 1)
    assert daemon.status()["demoted"] == []
    assert (srv.option(pane, "@agent_state"), srv.option(pane, "@agent_source")) == \
        ("blocked", "hook")

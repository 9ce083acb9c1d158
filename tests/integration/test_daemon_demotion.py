"""Hook demotion on a private server: a stale hook claim that quiet edges keep
contradicting is demoted after `[daemon] demote_edges` edges, and the screen decides."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


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


def test_a_blocked_hook_claim_is_not_demoted_inside_its_own_window(srv, daemon):
    """Past hook_decay but inside blocked_decay (300 s): quiet edges on a hook-only
    blocked claim (rate_limit, which no screen rule draws) are not counted against it,
    so the person waiting on it keeps the flag however much the pane redraws."""
    srv.config.write_text("[fold]\nhook_decay_secs = 1\n[daemon]\nquiet_ms = 150\n"
                          "demote_edges = 2\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _hook_blocked(srv, pane)
    time.sleep(1.3)  # past hook_decay; blocked_decay is 300 s
    _edges(srv, daemon, pane, 4)
    assert (srv.option(pane, "@agent_state"), srv.option(pane, "@agent_source")) == \
        ("blocked", "hook")
    assert daemon.status()["demoted"] == []


@pytest.mark.parametrize("threshold", [3, 1000])
def test_a_stale_blocked_claim_past_its_window_yields_to_the_screen(srv, daemon, threshold):
    """Past blocked_decay the screen decides (demoted or not), and new hook evidence is
    believed again."""
    srv.config.write_text("[fold]\nhook_decay_secs = 1\nblocked_decay_secs = 1\n"
                          f"[daemon]\nquiet_ms = 150\ndemote_edges = {threshold}\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _hook_blocked(srv, pane)
    time.sleep(1.3)
    _edges(srv, daemon, pane, 4)
    _until(srv, pane, "@agent_state", "idle", timeout=6)
    assert srv.option(pane, "@agent_source") == "capture"
    _hook_blocked(srv, pane)
    _edges(srv, daemon, pane, 1)
    assert daemon.status()["demoted"] == []
    assert (srv.option(pane, "@agent_state"), srv.option(pane, "@agent_source")) == \
        ("blocked", "hook")

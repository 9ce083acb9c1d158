"""`tma web` on a machine whose daemon links a fleet host, over a REAL OpenSSH server: the
host's rows reach the page's snapshot and stream (named by their host), and a browser
reads a remote pane's card and answers its prompt exactly once.

This machine: a private tmux server with a shell pane, its own HOME and config, and a
real `tma daemon` holding the one link to the host. The host: the test's tmux server
`srv` behind sshd's forced command `tma serve --stdio --scope read,act:answer`, with a fake
Claude drawing a captured blocked screen (idle once a key reaches it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.web import Web
from tma.core import fixture

pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


def _capture(name: str):
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text("utf-8"))


def test_a_fleet_hosts_pane_is_read_and_answered_once_from_the_web(
        srv, sshd, fleet_local, fleet_daemon, tmp_path):
    local = fleet_local
    rec = KeyRecorder.start(srv, "claude", _capture("blocked"), after=_capture("idle"),
                            redraw_ms=100)
    sshd.set_command(sshd.serve_command(srv, "--interval", "500", "--scope",
                                        "read,act:answer"))
    res = local.tma("host", "add", "box", "tma-test", "--via", sshd.via(), "--act", "answer")
    assert res.returncode == 0, res.stderr
    srv.wait_for(lambda: (srv.row(rec.pane, manifests=False) or {}).get("state") == "blocked",
                 timeout=15)
    fleet_daemon.start()
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    w = Web(local, tmp_path, "--interval", "500")
    try:
        token = w.paired("--scope", "act:answer")
        s = w.stream(token)

        def remote():
            return [r for r in w.get("/api/snapshot", token).doc["agents"]
                    if r["host"] == "box"]

        local.wait_for(lambda: [(r["pane"], r["state"]) for r in remote()] == [
            (rec.pane, "blocked")], timeout=20, interval=0.3)
        row = remote()[0]
        card = w.get(f"/api/card?pane=box:{rec.pane}", token)
        assert card.status == 200 and card.doc["t"] == "card", card.body
        frame = {"schema": 1, "id": "1", "t": "dispatch", "slot": "web-tap", "host": "box",
                 "pane": rec.pane, "action": "approve",
                 "binder": {"expect_episode_ms": row["episode_ms"]}}
        first = w.request("POST", "/api/dispatch", body=frame, cookie=token)
        assert first.status == 200 and first.doc["outcome"] == "sent", first.body
        sent = rec.settle(expect=1)
        assert sent
        # a page whose response was lost finds its receipt by its own slot
        got = w.get("/api/receipts?slot=web-tap", token)
        assert [(r["slot"], r["outcome"]) for r in got.doc["receipts"]] == [
            ("web-tap", "sent")], got.body
        again = w.request("POST", "/api/dispatch", body=dict(frame, host=None,
                                                             pane=f"box:{rec.pane}"),
                          cookie=token)
        assert again.status == 200 and again.doc["cached"] is True, again.body
        assert rec.settle() == sent  # one keystroke reached the host's agent
        # the host's pane left blocked: an edge named by its host reaches the stream
        while True:
            _eid, name, doc = s.event(timeout=20)
            if name == "edge" and doc["pane"] == rec.pane and doc.get("host") == "box":
                assert doc["from"] == "blocked"
                break
        s.close()
    finally:
        w.close()


def test_an_offline_hosts_rows_stay_stale_and_a_dispatch_to_one_is_refused(
        srv, sshd, fleet_local, fleet_daemon, tmp_path):
    """The host's sshd dies: the daemon's link keeps its last rows (stale), and the page
    gets them marked `stale: true` (snapshot and stream) rather than losing them; a tap on
    one is refused (4xx, nothing fired), as `tma act --menu` offers nothing on one."""
    local = fleet_local
    rec = KeyRecorder.start(srv, "claude", _capture("blocked"), after=_capture("idle"),
                            redraw_ms=100)
    sshd.set_command(sshd.serve_command(srv, "--interval", "500", "--scope",
                                        "read,act:answer"))
    res = local.tma("host", "add", "box", "tma-test", "--via", sshd.via(), "--act", "answer")
    assert res.returncode == 0, res.stderr
    srv.wait_for(lambda: (srv.row(rec.pane, manifests=False) or {}).get("state") == "blocked",
                 timeout=15)
    fleet_daemon.start()
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    w = Web(local, tmp_path, "--interval", "500")
    try:
        token = w.paired("--scope", "act:answer")

        def remote():
            return [r for r in w.get("/api/snapshot", token).doc["agents"]
                    if r["host"] == "box"]

        local.wait_for(lambda: [(r["pane"], r["state"]) for r in remote()] == [
            (rec.pane, "blocked")], timeout=20, interval=0.3)
        row = remote()[0]
        assert "stale" not in row  # a live row carries no `stale` (written as before)
        s = w.stream(token)
        sshd.kill()
        local.wait_for(lambda: [(r["pane"], r["state"], r.get("stale")) for r in remote()] == [
            (rec.pane, "blocked", True)], timeout=30, interval=0.3)
        # the stream says so too: the state did not move (no edge), the row did: a snapshot
        while True:
            _eid, name, doc = s.event(timeout=30)
            mine = [r for r in doc.get("agents", ()) if r["host"] == "box"]
            if name == "snapshot" and mine:
                if mine[0].get("stale"):
                    assert (mine[0]["pane"], mine[0]["state"]) == (rec.pane, "blocked")
                    break
        s.close()
        frame = {"schema": 1, "id": "1", "t": "dispatch", "slot": "web-stale", "host": "box",
                 "pane": rec.pane, "action": "approve",
                 "binder": {"expect_episode_ms": row["episode_ms"]}}
        refused = w.request("POST", "/api/dispatch", body=frame, cookie=token)
        assert refused.status == 409, refused.body
        assert (refused.doc["t"], refused.doc["code"]) == ("error", "host-offline"), refused.body
        assert "box is offline" in refused.doc["message"], refused.body
        assert rec.settle() == b""  # nothing reached the host's agent
    finally:
        w.close()

"""The daemon's fleet: one long-lived link per host, over a REAL OpenSSH server.

This machine: a private tmux server of its own (a shell pane: the daemon needs a server
to watch), its own HOME and config, and a real `tma daemon` whose hosts.toml names the
remote. The remote: the test's tmux server `srv` (another -L name, another HOME) with a
fake Claude pane drawing a blocked screen, behind sshd's forced command `tma serve
--stdio`.

The link is cut two ways: a second host's sshd runs in a network namespace the test
creates, and this end of its veth pair is taken down and brought back (needs root and
`ip netns`; skipped otherwise); the loopback host's sshd and every session it forked
are stopped (SIGSTOP: no FIN, no exit, packets unanswered, as a hung machine looks to
the client) and continued. sshd killed outright is the third way a host goes.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.helpers import netns as netns_helper, sshd as sshd_helper
from tests.helpers.fleet import KEEPALIVE_S, Here, config_text
from tests.helpers.http_sink import Sink
from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.notify_log import _lines
from tests.helpers.schemas import _schema
from tma.core import fixture

jsonschema = pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
LS_SCHEMA = _schema("ls.schema.json")


@pytest.fixture
def local(fleet_local):
    return fleet_local


@pytest.fixture
def daemon(fleet_daemon):
    return fleet_daemon


def _blocked(srv) -> KeyRecorder:
    cap = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    return KeyRecorder.start(srv, "claude", cap, after=idle, redraw_ms=100)


def _host(doc: dict, name: str = "box") -> dict:
    return next(h for h in doc["hosts"] if h["name"] == name)


def _remote(doc: dict, name: str = "box") -> list[dict]:
    return [r for r in doc["agents"] if r.get("host") == name]


def _rings(local: Here, pane: str) -> list[dict]:
    return [r for r in _lines(local.log) if r["pane"] == f"box:{pane}"]


def _until_state(local: Here, want: str, timeout: float, name: str = "box",
                 also=None) -> tuple[dict, float]:
    start = time.monotonic()
    found: list[dict] = []

    def check() -> bool:
        doc, _err, _took = local.ls_hosts()
        found[:] = [doc]
        if also is not None:
            also(doc)
        return _host(doc, name)["state"] == want

    local.wait_for(check, timeout=timeout, interval=0.25)
    return found[0], time.monotonic() - start


def _setup(srv, sshd, local) -> KeyRecorder:
    rec = _blocked(srv)
    # every login leaves a line: how many sessions this machine opened
    sshd.set_command(f"echo login >> {sshd.root / 'logins'}; "
                     + sshd.serve_command(srv, "--interval", "500"))
    res = local.tma("host", "add", "box", "tma-test", "--via", sshd.via())
    assert res.returncode == 0, res.stderr
    return rec


def _logins(sshd) -> int:
    path = sshd.root / "logins"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_remote_rows_come_from_the_daemon_and_a_cut_link_leaves_stale_rows(
        srv, sshd, local, daemon):
    rec = _setup(srv, sshd, local)
    doc, _err, oneshot = local.ls_hosts()  # no daemon yet: one snapshot over ssh
    assert _host(doc)["state"] == "ok" and "source" not in _host(doc)
    assert _logins(sshd) == 1
    daemon.start()
    doc, _ = _until_state(local, "online", 20)
    rows = _remote(doc)
    assert [(r["pane"], r["agent"], r["state"], r["stale"]) for r in rows] == [
        (rec.pane, "claude", "blocked", False)]
    assert rows[0]["age_ms"] is not None and rows[0]["age_ms"] < 3 * KEEPALIVE_S * 1000
    box = _host(doc)
    assert box["source"] == "daemon" and box["link"] == "ok" and box["stale"] is False

    # the daemon's cache answers: no new ssh session for an ls, however many
    before = _logins(sshd)
    assert before == 2  # the one-shot's, then the daemon's one link
    took = []
    for _ in range(3):
        doc, _err, t = local.ls_hosts()
        assert _host(doc)["state"] == "online"
        took.append(t)
    st = local.tma("status", "--format", "json")
    assert _logins(sshd) == before, "ls --hosts opened an ssh session with a daemon running"
    print(f"\nfleet: ls --hosts {oneshot:.2f}s without a daemon, {min(took):.2f}s from it")

    # status counts the host's blocked pane beside this machine's (none here)
    st = local.tma("status", "--format", "json")
    assert st.returncode == 0, st.stderr
    fleet = json.loads(st.stdout)["fleet"]
    assert fleet["counts"]["blocked"] == 1 and fleet["hosts"]["online"] == 1
    plain = local.tma("status", "--format", "plain")
    assert plain.stdout.startswith("@"), plain.stdout
    # the status line (tmux format, no terminal) gets them from the daemon's segment
    local.wait_for(lambda: local.tma("status").stdout.startswith(
        "@#[range=user|tma:blocked]"), timeout=10, interval=0.3)

    # cut: sshd and its sessions stop answering (no FIN, no exit)
    cut = time.monotonic()
    sshd.signal(signal.SIGSTOP)
    doc, _ = _until_state(local, "offline", 25)
    offline_after = time.monotonic() - cut
    assert offline_after < 20, f"offline after {offline_after:.1f}s"
    rows = _remote(doc)
    assert [(r["pane"], r["state"], r["stale"]) for r in rows] == [(rec.pane, "blocked",
                                                                     True)]
    assert rows[0]["age_ms"] >= 3 * KEEPALIVE_S * 1000 - 500
    box = _host(doc)
    assert box["stale"] is True and box["link"] == "timeout" and box["age_ms"] > 0
    res = local.tma("ls", "--hosts")
    assert f"box:{rec.pane}" in res.stdout and "tma: host box: offline (timeout" in res.stderr
    table = local.on_a_terminal("ls", "--hosts")
    assert f"box:{rec.pane}" in table and "stale: offline " in table, table

    # restored: the next link's first snapshot resyncs
    back = time.monotonic()
    sshd.signal(signal.SIGCONT)
    doc, _ = _until_state(local, "online", 15)
    online_after = time.monotonic() - back
    assert online_after < 10, f"online again after {online_after:.1f}s"
    assert [(r["pane"], r["stale"]) for r in _remote(doc)] == [(rec.pane, False)]
    print(f"\nfleet: offline {offline_after:.1f}s after the cut, online "
          f"{online_after:.1f}s after the restore")


def test_sshd_killed_goes_offline_then_resyncs_after_a_restart(srv, sshd, local, daemon):
    local.config.write_text(local.config.read_text().replace(
        "[fleet]\n", "[fleet]\nstatus = false\n"))
    rec = _setup(srv, sshd, local)
    daemon.start()
    _until_state(local, "online", 20)
    # [fleet] status = false: the status line keeps to this machine
    st = local.tma("status", "--format", "json")
    assert st.returncode == 0 and "fleet" not in json.loads(st.stdout), st.stdout
    assert local.tma("status", "--format", "plain").stdout == "\n"
    gone = time.monotonic()
    sshd.kill()
    doc, _ = _until_state(local, "offline", 25)
    assert time.monotonic() - gone < 20
    assert [(r["pane"], r["stale"]) for r in _remote(doc)] == [(rec.pane, True)]
    assert _host(doc)["link"] in ("unreachable", "closed", "timeout"), _host(doc)
    sshd.start()
    back = time.monotonic()
    doc, _ = _until_state(local, "online", 75)  # the backoff may be anywhere below a minute
    assert [(r["pane"], r["stale"]) for r in _remote(doc)] == [(rec.pane, False)]
    print(f"\nfleet: online {time.monotonic() - back:.1f}s after sshd came back")


@pytest.fixture
def netns():
    ns = netns_helper.NetNs()
    try:
        yield ns
    finally:
        ns.close()


def test_a_cut_network_takes_its_host_offline_and_delays_no_other(
        srv, sshd, local, daemon, netns, tmp_path):
    """A second host behind a network namespace: its veth taken down and brought back.
    The loopback host keeps answering (and showing a change) while the other is cut."""
    far = sshd_helper.Sshd(tmp_path / "sshd-far", address=netns.far, wrap=netns.wrap())
    try:
        far.start()
        rec = _setup(srv, sshd, local)
        far.set_command(far.serve_command(srv, "--interval", "500"))
        res = local.tma("host", "add", "far", "tma-test", "--via", far.via())
        assert res.returncode == 0, res.stderr
        daemon.start()
        _until_state(local, "online", 20)
        doc, _ = _until_state(local, "online", 20, name="far")
        assert [(r["pane"], r["state"]) for r in _remote(doc, "far")] == [(rec.pane,
                                                                           "blocked")]

        def box_online(doc: dict) -> None:
            assert _host(doc, "box")["state"] == "online", _host(doc, "box")

        cut = time.monotonic()
        netns.cut()
        doc, _ = _until_state(local, "offline", 25, name="far", also=box_online)
        offline_after = time.monotonic() - cut
        assert offline_after < 20, f"offline after {offline_after:.1f}s"
        assert [(r["pane"], r["stale"]) for r in _remote(doc, "far")] == [(rec.pane, True)]

        # the pane answers: the loopback host shows it now, the cut one cannot
        srv.tmux("send-keys", "-t", rec.pane, "Escape")  # the recorder draws idle

        def box_idle() -> bool:
            doc, _err, _took = local.ls_hosts()
            box_online(doc)
            return [r["state"] for r in _remote(doc)] == ["idle"]

        local.wait_for(box_idle, timeout=8, interval=0.25)
        doc, _err, _took = local.ls_hosts()
        assert [(r["state"], r["stale"]) for r in _remote(doc, "far")] == [("blocked", True)]

        back = time.monotonic()
        netns.restore()
        doc, _ = _until_state(local, "online", 20, name="far")
        online_after = time.monotonic() - back
        assert online_after < 10, f"online again after {online_after:.1f}s"
        # the first snapshot of the new link resyncs: the change made while cut
        assert [(r["state"], r["stale"]) for r in _remote(doc, "far")] == [("idle", False)]
        print(f"\nfleet (netns): offline {offline_after:.1f}s after the cut, online "
              f"{online_after:.1f}s after the restore")
    finally:
        far.signal(signal.SIGCONT)
        far.close()


def test_a_remote_blocked_episode_rings_once_across_reconnects_and_restarts(
        srv, sshd, local, daemon):
    rec = _setup(srv, sshd, local)
    daemon.start()
    _until_state(local, "online", 20)
    local.wait_for(lambda: _rings(local, rec.pane), timeout=10)
    first = _rings(local, rec.pane)
    assert len(first) == 1, first
    assert first[0]["state"] == "blocked" and first[0]["agent"] == "claude"

    # a reconnect sends the same episode again: no second ring
    sshd.signal(signal.SIGSTOP)
    _until_state(local, "offline", 25)
    sshd.signal(signal.SIGCONT)
    _until_state(local, "online", 15)
    time.sleep(1.0)
    assert len(_rings(local, rec.pane)) == 1

    # nor after the daemon restarts (what was rung is kept in the state dir)
    daemon.stop()
    daemon.start()
    _until_state(local, "online", 20)
    time.sleep(1.5)
    assert len(_rings(local, rec.pane)) == 1, _rings(local, rec.pane)
    rung = json.loads((Path(local.env["XDG_STATE_HOME"]) / "tma" / "fleet"
                       / "rung.json").read_text())
    assert [k.split("\t")[:2] for k in rung["rung"]] == [["box", rec.pane]]


def test_a_remote_ring_names_its_host_and_says_what_the_pane_asks(srv, sshd, local,
                                                                   daemon):
    # what the card says a remote blocked pane asks (read off its dialog on the host),
    # and the host by the name this machine gave it: never this machine's own name, as
    # if the agent ran here
    sink = Sink([200])
    try:
        local.config.write_text(config_text(local.root, KEEPALIVE_S)
                                + f'[notify.ntfy]\nurl = "{sink.url("/t")}"\n')
        rec = _setup(srv, sshd, local)
        # the host's own ls --json (its bundled manifests, as serve reads them): the card
        asks = srv.row(rec.pane, manifests=False)["pending_summary"]
        assert asks, "the captured dialog names no call"
        daemon.start()
        _until_state(local, "online", 20)
        local.wait_for(lambda: _rings(local, rec.pane), timeout=10)
        ring = _rings(local, rec.pane)[0]
        assert (ring["summary"], ring["pane"]) == (asks, f"box:{rec.pane}"), ring
        body = sink.wait(1)[0].body.decode("utf-8")
        assert asks in body and body.endswith(" on box"), body
        assert f" on {os.uname().nodename}" not in body, body
    finally:
        sink.close()

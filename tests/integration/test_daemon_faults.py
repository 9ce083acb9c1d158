"""Daemon faults on private servers (issue 18): a restart mid-transition, a server
replaced under `--ensure`, malformed frames.

The agents are fakes (processes named like the agent, really `sleep`) drawing real
captured screens; stamps are read with show-options, never through a tma command
(which would poll and so hide whether the daemon did the work).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tests.helpers.notify_log import _lines


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        d.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        yield d


def _ensure(daemon) -> None:
    res = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                         text=True, timeout=20)
    assert res.returncode == 0, res.stderr


@pytest.mark.tmux_contract
def test_a_daemon_killed_as_a_prompt_appears_is_replaced_by_one_that_looks_at_once(
        srv, daemon, tmp_path):
    """kill -9 within half a second of a permission prompt appearing, `--ensure` a new
    daemon: it looks at every agent pane at start, whatever its stamp's age, so the
    pane reads blocked within seconds (not at the 45 s sweep) and rings exactly once."""
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[notify]\nlog = "{log}"\n')  # the default 45 s sweep
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "working")
    _until(srv, pane, "@agent_state", "working", timeout=10)
    _draw(srv, pane, "blocked")
    os.kill(daemon.status()["pid"], signal.SIGKILL)  # before its quiet edge (600 ms)
    daemon.proc.wait(timeout=5)
    assert srv.option(pane, "@agent_state") == "working"
    t0 = time.monotonic()
    _ensure(daemon)
    _until(srv, pane, "@agent_state", "blocked", timeout=8)
    print(f"\nMEASURED restart-to-blocked {time.monotonic() - t0:.3f}s")
    srv.wait_for(lambda: len(_lines(log)) >= 1, timeout=5)
    time.sleep(1.5)
    # another restart: the episode was rung, the marker in the pane says so
    os.kill(daemon.status()["pid"], signal.SIGKILL)
    _ensure(daemon)
    time.sleep(1.5)
    got = [(x["state"], x["pane"]) for x in _lines(log)]
    assert got == [("blocked", pane)]


def _frame(srv, env, pane: str, kind: str, at: str) -> bytes:
    from tests.helpers.daemon_socket import _field
    from tma.core.paths import Paths
    from tma.runtime import handoff

    scope = handoff.scope({"manifest-dir": str(srv.manifests)}, Paths(env))
    fields = (pane, "fake", kind, '{"session_id":"s1"}', at, scope)
    return b"TMA1" + b"".join(_field(f.encode()) for f in fields)


@pytest.mark.parametrize("at", ["²", "9" * 4000, "١٢٣"])
def test_a_frame_with_a_malformed_time_is_refused_before_the_ack(srv, tmp_path, at):
    """`at=²` or 4000 digits used to be ACKed (str.isdigit) and then dropped, so
    nothing stamped the event: such a frame is NAKed, and the hook stamps it itself."""
    from tests.helpers.daemon_socket import SockDaemon, _raw

    with watched(srv, tmp_path, SockDaemon) as d:
        pane = srv.agent_pane()
        d.start()
        answer = _raw(str(d.sock()), _frame(srv, d.env, pane, "Work", at))
        assert answer == b"\x15"
        assert d.counts()["handoffs"] == 0
        assert srv.option(pane, "@agent_state") != "working"  # nobody took the claim


def test_a_frame_dated_in_the_future_is_stamped_at_the_daemons_now(srv, tmp_path):
    """A hook whose clock runs a minute ahead: its claim is written at the daemon's
    clock (clamped), so it never holds a later event."""
    from tests.helpers.daemon_socket import SockDaemon, _raw, hook

    with watched(srv, tmp_path, SockDaemon) as d:
        pane = srv.agent_pane()
        d.start()
        ahead = time.time_ns() // 1_000_000 + 60_000
        t0 = time.time_ns() // 1_000_000
        assert _raw(str(d.sock()), _frame(srv, d.env, pane, "Work", str(ahead))) == b"\x06"
        srv.wait_for(lambda: srv.option(pane, "@agent_state") == "working", timeout=5)
        assert int(srv.option(pane, "@agent_evidence_at")) <= time.time_ns() // 1_000_000
        assert int(srv.option(pane, "@agent_evidence_at")) >= t0
        assert hook(srv, d.env, "Stop", pane).returncode == 0
        srv.wait_for(lambda: srv.option(pane, "@agent_state") == "idle", timeout=5)


def test_an_event_stamped_late_loses_to_a_newer_claim_written_meanwhile(srv, tmp_path):
    """An event that waited in the daemon's queue (a storm) is stamped seconds after
    its time. A claim written meanwhile is newer evidence: the late event must not
    overwrite it, however long it waited (the guards bound a claim's future skew by
    the writer's clock, not by the late event's time)."""
    from tests.helpers.daemon_socket import SockDaemon, _raw

    with watched(srv, tmp_path, SockDaemon) as d:
        pane = srv.agent_pane()
        other = srv.agent_pane()
        d.start()
        now = time.time_ns() // 1_000_000
        assert _raw(str(d.sock()), _frame(srv, d.env, pane, "Work", str(now - 1000))) == b"\x06"
        srv.wait_for(lambda: srv.option(pane, "@agent_state") == "working", timeout=5)
        # an Ask from 8 s ago, stamped now: older than the stored claim by 7 s
        assert _raw(str(d.sock()), _frame(srv, d.env, pane, "Ask", str(now - 8000))) == b"\x06"
        # a later event on another pane, queued after it: once that one is stamped, the
        # Ask was too (the queue is stamped in order, a round in one write)
        assert _raw(str(d.sock()), _frame(srv, d.env, other, "Work", str(now))) == b"\x06"
        srv.wait_for(lambda: srv.option(other, "@agent_state") == "working", timeout=5)
        assert srv.option(pane, "@agent_state") == "working"
        assert srv.option(pane, "@agent_evidence_at") == str(now - 1000)


def _gone(srv) -> bool:
    res = subprocess.run([srv.tmux_bin, "-L", srv.name, "list-sessions"],
                         capture_output=True, env=srv.env, timeout=10)
    return res.returncode != 0


@pytest.mark.tmux_contract
def test_ensure_right_after_the_server_was_replaced_starts_a_daemon_for_the_new_one(
        srv, tmp_path):
    """The last session killed, a new server started at the same socket, `--ensure` at
    once: the old daemon (about to exit with its server) used to satisfy `--ensure`,
    which then left no daemon at all. Every round, a daemon serving the new server
    stamps its new fake agent within the deadline."""
    from tests.helpers.daemon_socket import SockDaemon

    with watched(srv, tmp_path, SockDaemon) as d:
        pane = srv.agent_pane()
        srv.draw(pane, "FAKE-IDLE\n")
        _ensure(d)
        _until(srv, pane, "@agent_state", "idle", timeout=10)
        for rnd in range(10):
            old = d.status()["pid"]
            srv.tmux("kill-session", "-t", "s")  # the last one: the server exits
            # (a client connecting before it is gone would revive the same server)
            srv.wait_for(lambda: _gone(srv), interval=0.005)
            srv.started = False
            pane = srv.agent_pane()
            srv.draw(pane, "FAKE-IDLE\n")
            _ensure(d)
            t0 = time.monotonic()
            _until(srv, pane, "@agent_state", "idle", timeout=6)
            status = d.status()
            assert status is not None and status["pid"] != old, f"round {rnd}"
            print(f"\nMEASURED replaced-server-stamped round {rnd} "
                  f"{time.monotonic() - t0:.3f}s")
            srv.wait_for(lambda old=old: old not in d.pids(), timeout=5)
            assert len(d.pids()) == 1

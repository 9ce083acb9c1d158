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
from test_daemon import _claude, _draw, _until, watched
from test_daemon_notify import _lines


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

"""`[daemon] autostart = true`: the one-shot surfaces start the daemon; `event` never."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers.daemon import watched


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


def _tma(srv, daemon, *args, **kw):
    return srv.tma(*args, env={"XDG_RUNTIME_DIR": str(daemon.runtime)}, **kw)


@pytest.mark.parametrize("surface", [("status",), ("ls", "--json")])
def test_a_surface_starts_the_daemon_once(srv, daemon, surface):
    srv.shell_pane()
    srv.config.write_text("[daemon]\nautostart = true\n")
    assert _tma(srv, daemon, *surface).returncode == 0
    srv.wait_for(lambda: daemon.status() is not None, timeout=10)
    pid = daemon.status()["pid"]
    t0 = time.monotonic()
    assert _tma(srv, daemon, *surface).returncode == 0
    print(f"\nMEASURED {surface[0]} with a running daemon {time.monotonic() - t0:.3f}s")
    assert [p for p in daemon.pids()] == [pid]  # the second run found it: no new one


def test_without_autostart_nothing_starts(srv, daemon):
    srv.shell_pane()
    assert _tma(srv, daemon, "status").returncode == 0
    time.sleep(0.5)
    assert daemon.pids() == [] and daemon.status() is None


def test_event_never_autostarts(srv, daemon):
    pane = srv.shell_pane()
    srv.config.write_text("[daemon]\nautostart = true\n")
    res = _tma(srv, daemon, "event", "--agent", "claude", "--pane", pane,
               input=json.dumps({"hook_event_name": "Stop"}))
    assert res.returncode == 0
    time.sleep(1.0)
    assert daemon.pids() == [] and daemon.status() is None


def test_a_bad_autostart_value_names_the_key(srv, daemon):
    srv.shell_pane()
    srv.config.write_text('[daemon]\nautostart = "yes"\n')
    res = _tma(srv, daemon, "ls")
    assert res.returncode == 1 and "daemon.autostart" in res.stderr
    assert daemon.pids() == []


def test_the_cheap_probe_finds_the_socket_tmux_uses(srv, monkeypatch):
    """The lock probe is only cheap if its socket path is the one the daemon keys on."""
    from tma.runtime.session import Globals, Session

    srv.shell_pane()
    real = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    # TMUX_TMPDIR stays as the user has it: srv's socket is where tmux put it under it,
    # and the probe must find the same place
    monkeypatch.delenv("TMA_SOCKET_PATH", raising=False)
    assert Session(Globals(socket_name=srv.name)).known_socket() == real
    monkeypatch.setenv("TMUX", f"{real},123,0")
    assert Session(Globals()).known_socket() == real
    # outside tmux with no name: the default server's socket, where tmux puts it (so an
    # autostart that failed there backs off too)
    monkeypatch.delenv("TMUX")
    assert Session(Globals()).known_socket() == os.path.join(
        os.path.dirname(real), "default")

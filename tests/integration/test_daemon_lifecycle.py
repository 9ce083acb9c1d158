"""`tma daemon --stop` / `--restart`, and a daemon of another tma (an older version, a
venv pipx has since replaced) replaced by `--ensure` and by autostart, never trusted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tma
from tests.helpers.daemon import watched


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


def _tma(srv, daemon, *args, env=None, **kw):
    return srv.tma(*args, env=dict({"XDG_RUNTIME_DIR": str(daemon.runtime)}, **(env or {})),
                   **kw)


def test_stop_and_restart(srv, daemon):
    srv.shell_pane()
    r = _tma(srv, daemon, "daemon", "--ensure")
    assert r.returncode == 0, r.stderr
    first = daemon.pids()
    assert len(first) == 1 and daemon.status()["pid"] == first[0]
    r = _tma(srv, daemon, "daemon", "--restart")
    assert r.returncode == 0, r.stderr
    assert f"tma daemon: stopped daemon pid {first[0]} (tma {tma.__version__} at " in r.stderr
    second = daemon.pids()
    assert len(second) == 1 and second != first and daemon.status()["pid"] == second[0]
    assert f"tma daemon: started daemon pid {second[0]} (tma {tma.__version__} at " \
        in r.stderr  # says that one came back, not only that one went
    r = _tma(srv, daemon, "daemon", "--stop")
    assert r.returncode == 0 and f"stopped daemon pid {second[0]}" in r.stderr
    assert daemon.pids() == [] and daemon.status() is None  # gone when --stop returns
    assert daemon.files() == []  # its lock and socket went with it
    r = _tma(srv, daemon, "daemon", "--stop")
    assert r.returncode == 0 and "tma daemon: no daemon running for " in r.stderr
    r = _tma(srv, daemon, "daemon", "--restart")  # nothing to stop: starts one
    assert r.returncode == 0 and len(daemon.pids()) == 1
    r = _tma(srv, daemon, "daemon", "--stop", "--restart")
    assert r.returncode == 2


def _other_tma(tmp_path: Path) -> Path:
    """Another install of tma, one version older: a copy of the package elsewhere."""
    root = tmp_path / "old-venv"
    shutil.copytree(Path(tma.__file__).parent, root / "tma",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = root / "tma" / "__init__.py"
    init.write_text(init.read_text().replace(f'"{tma.__version__}"', '"0.0.1"'))
    return root


def _start_other(srv, daemon, root: Path) -> int:
    env = dict(daemon.env, PYTHONPATH=str(root))
    proc = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", srv.name, "daemon"],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    srv.wait_for(lambda: daemon.status() is not None, timeout=10)
    status = daemon.status()
    assert status["pid"] == proc.pid and status["version"] == "0.0.1"
    assert status["package"] == str(root / "tma") and status["executable"] == sys.executable
    daemon.other = proc  # reaped below
    return proc.pid


@pytest.mark.parametrize("how", ["ensure", "autostart"])
def test_a_daemon_of_another_tma_is_replaced_not_trusted(srv, daemon, tmp_path, how):
    srv.shell_pane()
    old = _start_other(srv, daemon, _other_tma(tmp_path))
    d = _tma(srv, daemon, "doctor", "--json")
    doc = __import__("json").loads(d.stdout)["daemon"]
    assert doc["version_skew"] is True and doc["package"].endswith("old-venv/tma")
    if how == "ensure":
        r = _tma(srv, daemon, "daemon", "--ensure")
        assert r.returncode == 0, r.stderr
    else:
        srv.config.write_text("[daemon]\nautostart = true\n")
        assert _tma(srv, daemon, "status").returncode == 0
        srv.wait_for(lambda: (daemon.status() or {}).get("version") == tma.__version__,
                     timeout=10)
    daemon.other.wait(timeout=10)  # the old one was stopped
    pids = daemon.pids()
    assert old not in pids and len(pids) == 1
    status = daemon.status()
    assert status["pid"] == pids[0] and status["version"] == tma.__version__
    assert status["package"] == os.path.dirname(os.path.realpath(tma.__file__))
    # and this tma's daemon is trusted: the next ensure keeps it
    assert _tma(srv, daemon, "daemon", "--ensure").returncode == 0
    assert daemon.pids() == pids

"""tests/conftest.py fails a run that leaves a socket file of a tmux server it started.

A child pytest, with copies of the guard and tmux_sockets, starts a private server the
way the fixtures do and kills it. Left alone, tmux keeps the socket file: the run must
fail naming it, and the guard removes it. Removed by the test, the same run passes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import tmux_sockets
from tests.helpers.tmux_sockets import require_tmux

TESTS = Path(__file__).resolve().parents[1]

PROBE = '''
import subprocess
from tests.helpers import tmux_sockets

def test_a_server(tmp_path):
    name = tmux_sockets.server_name("test")
    (tmp_path.parent.parent / "probe-name").write_text(name)
    tmux = ["tmux", "-u", "-L", name, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "sleep 30"], check=True, timeout=10)
    subprocess.run(tmux + ["kill-server"], check=True, timeout=10)
    if REMOVE:
        tmux_sockets.remove(name)
'''


def _run(tmp_path: Path, remove: bool) -> tuple[subprocess.CompletedProcess, str]:
    probe = tmp_path / ("removes" if remove else "leaves")
    (probe / "tests" / "helpers").mkdir(parents=True)
    (probe / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    for name in ("conftest.py", "helpers/__init__.py", "helpers/tmux_sockets.py"):
        (probe / "tests" / name).write_text((TESTS / name).read_text())
    (probe / "tests" / "test_probe.py").write_text(f"REMOVE = {remove}\n" + PROBE)
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p",
                          "no:cacheprovider", "--basetemp", str(probe / "tmp"), "tests"],
                         cwd=probe, capture_output=True, text=True, timeout=120)
    return res, (probe / "probe-name").read_text()


def test_a_left_socket_fails_the_run_and_is_removed(tmp_path):
    require_tmux()
    res, name = _run(tmp_path, remove=False)
    assert res.returncode != 0, res.stdout
    assert "1 tmux socket file(s) left in" in res.stdout and name in res.stdout, res.stdout
    assert not os.path.exists(tmux_sockets.socket_path(name))


def test_a_removed_socket_passes(tmp_path):
    require_tmux()
    res, name = _run(tmp_path, remove=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not os.path.exists(tmux_sockets.socket_path(name))

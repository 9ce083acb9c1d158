"""The README's test command runs in the environment a person really has: inside tmux
($TMUX and $TMUX_PANE naming their own server and pane) and with TMUX_TMPDIR set. A
test must neither fail there nor touch that server nor leave a socket behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_honours_tmux_tmpdir_and_ignores_the_persons_tmux(short_tmp):
    sockets = short_tmp
    env = dict(os.environ, TMUX_TMPDIR=str(sockets), TMUX="/nonexistent/person,1,0",
               TMUX_PANE="%99")
    env.pop("PYTEST_XDIST_WORKER", None)
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/integration/test_daemon_autostart.py::test_the_cheap_probe_finds_the_socket_tmux_uses",
         # a jump reads $TMUX to find its client: inside the person's tmux, it must still
         # move the test's own client on the test's own server
         "tests/integration/test_jump.py::test_no_client_no_server_and_usage",
         "tests/integration/test_jump.py::test_the_acting_client_follows_tmux_pane_and_keeps_its_own_trail",
         "-x"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    left = [p.name for p in (sockets / f"tmux-{os.getuid()}").glob("*")] \
        if (sockets / f"tmux-{os.getuid()}").exists() else []
    assert left == [], f"sockets left behind under TMUX_TMPDIR: {left}"

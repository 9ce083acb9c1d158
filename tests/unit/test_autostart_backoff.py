"""Autostart that cannot start a daemon backs off and stays quiet: a status line runs it
every few seconds, and a doomed daemon must not be spawned (and reported) on each run."""

import os

from tma.runtime import session as session_mod
from tma.runtime.session import Globals, Session


class FailingStart(Session):
    """A Session whose daemon never starts (a test builds its own, as every surface
    receives one)."""

    def __init__(self, g, env, calls):
        super().__init__(g, env)
        self.calls = calls

    def ensure_daemon(self) -> int:
        self.calls.append(self.g.socket_path)
        import sys

        sys.stderr.write("tma daemon: the daemon did not start\n")
        return 1


def test_a_failed_start_is_not_retried_within_the_backoff_and_prints_nothing(
        tmp_path, monkeypatch, capsys):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    calls: list = []
    g = Globals(socket_path=str(tmp_path / "tmux-sock"))
    FailingStart(g, os.environ, calls).autostart()
    FailingStart(g, os.environ, calls).autostart()
    assert calls == [g.socket_path]
    assert capsys.readouterr().err == ""
    # past the back-off it tries again
    marker = next(p for p in (runtime / "tma").iterdir() if p.suffix == ".failed")
    old = os.stat(marker).st_mtime - session_mod.AUTOSTART_BACKOFF_S - 1
    os.utime(marker, (old, old))
    FailingStart(g, os.environ, calls).autostart()
    assert len(calls) == 2

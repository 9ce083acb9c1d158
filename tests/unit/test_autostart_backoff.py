"""Autostart that cannot start a daemon backs off and stays quiet: a status line runs it
every few seconds, and a doomed daemon must not be spawned (and reported) on each run."""

import os

from tma.cli import common


def test_a_failed_start_is_not_retried_within_the_backoff_and_prints_nothing(
        tmp_path, monkeypatch, capsys):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    calls = []

    def failing_ensure(g, cfg):
        calls.append(g.socket_path)
        import sys

        sys.stderr.write("tma daemon: the daemon did not start\n")
        return 1

    from tma.cli import daemon

    monkeypatch.setattr(daemon, "ensure", failing_ensure)
    g = common.Globals(socket_path=str(tmp_path / "tmux-sock"))
    common.autostart(g, None)
    common.autostart(g, None)
    assert calls == [g.socket_path]
    assert capsys.readouterr().err == ""
    # past the back-off it tries again
    marker = next(p for p in (runtime / "tma").iterdir() if p.suffix == ".failed")
    old = os.stat(marker).st_mtime - common.AUTOSTART_BACKOFF_S - 1
    os.utime(marker, (old, old))
    common.autostart(g, None)
    assert len(calls) == 2

"""The cyclic collector is off for the commands that run and exit (tma.cli.main.ONE_SHOT)
and on for the long-running ones, whose garbage it must keep freeing."""

from __future__ import annotations

import gc
import sys

import pytest

from tma.cli import main as cli_main


def _enabled_during(monkeypatch, argv: list[str]) -> bool:
    seen: list[bool] = []

    def fake_main() -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(cli_main, "main", fake_main)
    monkeypatch.setattr(cli_main, "_leave", lambda rc: None)  # the hot path's os._exit
    monkeypatch.setattr(sys, "argv", ["tma", *argv])
    try:
        with pytest.raises(SystemExit):
            cli_main.entry()
    finally:
        gc.enable()
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("argv", [
    ["ls", "--json"], ["--socket-name", "x", "ls"], ["status"], ["event", "claude", "Stop"],
    ["clear-attention", "--pane", "%1"], ["jump", "--attention"], ["card", "--pane", "%1"],
])
def test_a_command_that_runs_and_exits_has_no_collector(monkeypatch, argv):
    assert gc.isenabled()
    assert not _enabled_during(monkeypatch, argv)
    assert gc.isenabled()  # (the test gives it back)


@pytest.mark.parametrize("argv", [
    ["daemon"], ["watch"], ["wait", "--until", "idle"], ["web"], ["serve"], ["subscribe"],
    [], ["--socket-name", "ls"],  # the picker; a socket named "ls" is not the command
])
def test_a_long_running_command_keeps_the_collector(monkeypatch, argv):
    assert _enabled_during(monkeypatch, argv)

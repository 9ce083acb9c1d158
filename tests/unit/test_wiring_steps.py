"""init's and uninstall's steps in tma.install.wiring: detection on a real $PATH, the
sweep's report, the watches, the status-line advice (no tmux server: tmux is a binary that fails)."""

from __future__ import annotations

import io

import pytest

from tma.core import bundled
from tma.install import wiring


class Mset:
    def __init__(self, *names: str) -> None:
        self.ms = [bundled.load(n) for n in names]

    def ordered(self):
        return self.ms


def _exe(d, name: str) -> str:
    p = d / name
    p.write_text("#!/bin/sh\nexit 0\n")
    p.chmod(0o755)
    return str(p)


def _io() -> wiring.Output:
    return wiring.Output(io.StringIO(), io.StringIO())


def test_an_agent_is_found_by_its_name_or_a_process_name_not_by_a_runtime(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    codex = _exe(tmp_path, "codex-aarch64-a")
    _exe(tmp_path, "node")  # gemini's process is node: a runtime, never evidence
    assert wiring.detect(Mset("claude", "codex", "gemini")) == [("codex", codex)]
    claude = _exe(tmp_path, "claude")
    assert wiring.detect(Mset("claude", "codex")) == [("claude", claude), ("codex", codex)]


@pytest.fixture
def dead_server(tmp_path):
    """A server whose tmux binary is not there: every call raises TmuxError."""
    from tma.tmux.adapter import Server

    return Server(str(tmp_path / "no-tmux"), socket_name="tma-unit-none")


def test_the_status_line_advice_without_a_server_names_the_line_and_the_file(
        dead_server, tmp_path, monkeypatch):
    from tma.core.paths import here

    monkeypatch.setenv("HOME", str(tmp_path))
    out = _io()
    wiring.status_line_advice(dead_server, here({"HOME": str(tmp_path)}), None, out)
    said = out.out.getvalue().splitlines()
    assert said[0] == ("tma: init: no tmux server to ask whether status-right runs "
                       "`tma status`; if it does not, add this line to ~/.tmux.conf:")
    # appended to the status-right there is (no server: no length to judge)
    assert said[1].startswith("    set -ga status-right ' #(") and " status)'" in said[1]
    assert said[2:] == ["    set -g status-interval 2",
                        "  then reload it: tmux source-file ~/.tmux.conf"]
    assert wiring.status_right_runs_tma(dead_server) is False


def test_no_watch_to_stop_without_a_server(dead_server):
    out = _io()
    wiring.stop_watches(dead_server, out)
    assert out.out.getvalue() == ""


def test_the_sweep_says_why_it_did_nothing(dead_server):
    out = _io()
    assert wiring.sweep_all(dead_server, out) is None  # no tmux at all: a failure
    assert out.err.getvalue().endswith("; the pane options were not removed\n")
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("no tmux binary")
    from tma.tmux.adapter import Server

    out = _io()  # tmux, but no server on this socket: nothing to remove, not a failure
    assert wiring.sweep_all(Server("tmux", socket_name="tma-unit-no-such-server"), out) == {}
    assert out.out.getvalue() == "tmux: no server running; no pane options to remove\n"

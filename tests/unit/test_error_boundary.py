"""cli/main.py's error boundary: one table from each typed error to its exit status."""

from __future__ import annotations

import importlib

import pytest

from tma.cli import common, main
from tma.core import bundled
from tma.runtime import config, manifests
from tma.tmux import adapter


def test_every_row_names_a_class_that_exists():
    for module, name, *_ in main.EXIT_TABLE:
        cls = getattr(importlib.import_module(module), name, None)
        assert isinstance(cls, type) and issubclass(cls, BaseException), (module, name)


def _raising(monkeypatch, exc):
    def dispatch(argv):
        raise exc

    monkeypatch.setattr(main, "dispatch", dispatch)


@pytest.mark.parametrize("exc,code,message", [
    (adapter.NoServer("no server on /tmp/x"), 1, "tma: no tmux server running\n"),
    (config.ConfigError("tma: config c.toml: fold.bogus: unknown key"), 1,
     "tma: config c.toml: fold.bogus: unknown key\n"),
    (manifests.BundledManifestError("tma: manifest load failed: claude.toml: x"), 1,
     "tma: manifest load failed: claude.toml: x\n"),
    (bundled.BundledManifestError("tma: manifest load failed: pi.toml: y"), 1,
     "tma: manifest load failed: pi.toml: y\n"),
    (adapter.TmuxError("can't find session"), 1, "tma: can't find session\n"),
    (common.UsageError("--json is not a state"), 2, "tma ls: --json is not a state\n"),
    (common.NoPane("%9"), 3, "tma: no pane %9\n"),
])
def test_each_typed_error_has_one_status_and_one_message(monkeypatch, capsys, exc, code,
                                                         message):
    _raising(monkeypatch, exc)
    assert main.main(["--socket-name", "x", "ls"]) == code
    out, err = capsys.readouterr()
    assert (out, err) == ("", message)


def test_no_command_exits_past_the_boundary():
    """Commands raise typed errors or return a status; only the boundary (and `--help`,
    exit 0) ends the process, so every failure gets the table's status and message."""
    from pathlib import Path

    cli = Path(main.__file__).parent
    exits = {p.name for p in cli.glob("*.py")
             if p.name not in ("main.py", "spec.py") and "SystemExit" in p.read_text()}
    assert not exits, exits


def test_interrupt_and_closed_pipe(monkeypatch, capsys):
    _raising(monkeypatch, KeyboardInterrupt())
    assert main.main(["wait"]) == 130
    assert "Traceback" not in capsys.readouterr().err
    _raising(monkeypatch, BrokenPipeError())
    assert main.main(["ls"]) == 0


def test_a_bug_is_not_swallowed(monkeypatch):
    _raising(monkeypatch, ZeroDivisionError())
    with pytest.raises(ZeroDivisionError):
        main.main(["ls"])


@pytest.mark.parametrize("argv,marker", [
    (["status"], "tma:config!"), (["status", "--format", "plain"], "tma:config!\n"),
    (["status", "--format", "json"], ""), (["status", "--format=prom"], ""),
    (["ls"], ""),
])
def test_status_shows_a_marker_where_tmux_shows_it(monkeypatch, capsys, argv, marker):
    _raising(monkeypatch, config.ConfigError("tma: config c.toml: fold.bogus: unknown key"))
    assert main.main(argv) == 1
    out, err = capsys.readouterr()
    assert out == marker and "fold.bogus" in err


def test_usage_messages_name_only_real_commands(capsys):
    assert main.main(["--bogus"]) == 2
    assert main.main(["frobnicate"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["tma: unknown option --bogus (see tma --help)",
                   "tma: unknown command 'frobnicate' (see tma --help)"]

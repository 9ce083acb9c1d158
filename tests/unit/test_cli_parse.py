"""Parsing from the one declaration: dispatch, --version, help, usage errors."""

from __future__ import annotations

import pytest

from tma import __version__
from tma.cli import common, spec
from tma.cli.main import find_command, main


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["version"],
                                  ["--socket-name", "x", "-V"], ["--config=c", "--version"]])
def test_version_wherever_the_globals_stand(argv, capsys):
    assert main(argv) == 0
    assert capsys.readouterr().out == f"tma {__version__}\n"


def test_bare_tma_is_help_on_stderr(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == spec.top_help()


@pytest.mark.parametrize("argv,name,sub", [(["help", "ls"], "ls", None),
                                           (["ls", "--help"], "ls", None),
                                           (["--socket-name", "x", "ls", "-h"], "ls", None),
                                           (["help", "debug", "explain"], "debug", "explain"),
                                           (["debug", "explain", "--help"], "debug", "explain")])
def test_help_for_one_command(argv, name, sub, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # `CMD --help` exits from the parser, as argparse does
        code = exc.code
    assert code == 0
    assert capsys.readouterr().out == spec.help_text(name, sub)


def test_find_command_skips_globals_and_their_values():
    assert find_command(["--socket-name", "ls", "status"]) == ("status", 2)
    assert find_command(["-c", "x", "--debug-timing", "jump"]) == ("jump", 3)
    assert find_command(["--config=x"]) == (None, 1)


def test_a_global_without_its_value(capsys):
    assert main(["--config"]) == 2
    assert main(["ls", "--config"]) == 2
    assert "--config needs a value" in capsys.readouterr().err


def test_parse_builds_the_declared_parser():
    g, rest = common.split_globals(["--socket-name", "s", "--session", "a", "--blocked"])
    sel, args = spec.parse("jump", rest)
    assert (g.socket_name, sel.session, args.direction, args.pane) == ("s", "a", "blocked", None)
    _, args = spec.parse("install-hooks", ["-y", "claude"])
    assert (args.yes, args.agent, args.statusline) == (True, "claude", "keep")
    _, args = spec.parse("debug", ["stamp", "%1", "--count", "3"])
    assert (args.sub, args.pane, args.count, args.mode) == ("stamp", "%1", 3, "publish")


@pytest.mark.parametrize("cmd,argv,needle", [
    ("jump", ["--next", "--back"], "not allowed with argument"),
    ("wait", ["--any"], "required: --until"),
    ("ls", ["--pane", "3"], "expected a pane id like %3, got '3'"),
    ("ls", ["--js"], "unknown option --js"),  # no abbreviations: a typo is an error
    ("act", ["--text"], "expected one argument"),  # NAME is open: user actions
    ("ls", ["extra"], "unexpected argument 'extra'"),
])
def test_usage_errors_are_typed(cmd, argv, needle):
    with pytest.raises(common.UsageError, match=needle):
        spec.parse(cmd, argv)

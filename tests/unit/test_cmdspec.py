"""The command declarations as data (tma.core.cmdspec), the parsers built from them
(tma.core.cmdparse) and the texts rendered from them (tma.ui.help, .completions,
.manpage), on a small table of their own: none of them needs tma.cli."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tma.core import cmdparse
from tma.core.cmdspec import Arg, Command, Flag, Table, did_you_mean
from tma.core.errors import UsageError
from tma.ui import completions, help, manpage

SEL = (Flag("--state", metavar="LIST", values=("idle", "done"), help="Only these states."),
       Flag("--repo", metavar="NAME", help="Only this repo."))
GLOBALS = (Flag("--socket-name", metavar="NAME", help="The tmux server."),
           Flag("--config", metavar="PATH", help="The config file."))
TOP = (Flag("-h", "--help", help="Show help."),)
COMMANDS = {c.name: c for c in (
    Command("look", "Look at the panes.", selectors=SEL,
            flags=(Flag("--json", help="Print JSON."),
                   Flag("--repo", metavar="LABEL", help="Its own --repo wins the name."),
                   Flag("--up", dest="way", const="up", group="way", help="Up."),
                   Flag("--down", dest="way", const="down", group="way", help="Down."),
                   Flag("--count", metavar="N", type="int", default=1, help="How many.")),
            exits=((0, "success"), (2, "usage"))),
    Command("pick", "Pick one.", args=(Arg("WHAT", "What to pick.", choices=("a", "b")),),
            exits=((0, "success"),)),
    Command("tool", "Tools.", subcommands=(
        Command("one", "The first tool.", flags=(Flag("--file", metavar="FILE",
                                                      help="A file."),)),
        Command("secret", "Hidden.", internal=True))),
    Command("hook", "Internal.", internal=True),
)}
TABLE = Table(COMMANDS, GLOBALS, TOP, SEL, "docs/x.md")


def test_declarations_answer_for_themselves():
    look = COMMANDS["look"]
    assert [f.long for f in look.all_flags()] == ["--json", "--repo", "--up", "--down",
                                                 "--count", "--state"]
    assert [c.name for c in TABLE.public()] == ["look", "pick", "tool"]
    assert TABLE.flag_names(COMMANDS["pick"]) == ["--socket-name", "--config", "--help"]
    assert COMMANDS["tool"].sub("one") is not None and COMMANDS["tool"].sub("x") is None
    assert COMMANDS["tool"].module == "tool" and Command("daemon", "d").module.startswith("tma.")
    assert [f.completion for f in look.flags[:2]] == [None, ""]
    assert SEL[0].completion == ("idle", "done")
    assert COMMANDS["tool"].subcommands[0].flags[0].completion == "FILE"
    assert did_you_mean("lok", ["look", "pick"]) == "; did you mean 'look'?"
    assert did_you_mean("zzz", ["look"]) == ""


def test_parsers_built_from_the_table():
    p = cmdparse.build(TABLE, "look", {"int": int})
    args = p.parse_args(["--json", "--down", "--count", "3"])
    assert (args.json, args.way, args.count, args.repo) == (True, "down", 3, None)
    assert p.parse_args([]).count == 1
    with pytest.raises(UsageError, match="not allowed with argument"):
        p.parse_args(["--up", "--down"])
    with pytest.raises(UsageError, match=r"unknown option --jsno; did you mean --json\?"):
        p.parse_args(["--jsno"])
    with pytest.raises(UsageError, match="unexpected argument 'x'"):
        p.parse_args(["x"])
    with pytest.raises(UsageError, match="invalid choice"):
        cmdparse.build(TABLE, "pick", {}).parse_args(["c"])
    assert cmdparse.build(TABLE, "tool", {}).parse_args(["one", "--file", "f"]).file == "f"
    assert cmdparse.help_request(COMMANDS["tool"], ["one", "-h"]) == (True, "one")
    assert cmdparse.help_request(COMMANDS["look"], ["--", "--help"]) == (False, None)


def test_help_renders_the_table():
    text = help.help_text(TABLE, "look")
    assert text.startswith("usage: tma look [options] [selectors]\n\nLook at the panes.\n")
    assert "\n  --count N     How many.\n" in text  # the column: the widest left + 2
    assert "selectors (AND together" in text and "  --state LIST" in text
    assert "exit status:\n  0  success\n  2  usage\n" in text and text.endswith("docs: docs/x.md\n")
    assert help.help_text(TABLE, "tool", "one").startswith("usage: tma tool one [options]\n")
    assert help.usage(COMMANDS["tool"]) == "usage: tma tool {one}"
    top = help.top_help(TABLE)
    assert "  look" in top and "hook" not in top and "  -h, --help" in top
    # a long left column goes on a line of its own; the right one wraps at 79
    rows = help.rows([("x" * 30, "word " * 30)])
    assert rows[0] == "  " + "x" * 30 and all(len(r) <= 79 for r in rows)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_render_the_table(shell, tmp_path):
    script = completions.GENERATORS[shell](TABLE)
    for word in ("look", "pick", "tool", "count", "idle"):
        assert word in script, word
    assert "hook" not in script and "secret" not in script
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} is not installed")
    path = tmp_path / f"tma.{shell}"
    path.write_text(script)
    res = subprocess.run([exe, "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr


def test_man_page_renders_the_table():
    page = manpage.render(TABLE)
    assert page.startswith('.\\" Generated by tools/gen_man.py')
    assert ".SS tma look\n" in page and ".SS tma tool one\n" in page
    assert "\\fB\\-\\-count\\fR \\fIN\\fR\nHow many." in page
    assert "hook" not in page and "secret" not in page
    assert manpage._esc(".x-y") == "\\&.x\\-y"

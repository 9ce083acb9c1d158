"""argparse parsers built from the declarations (tma.core.cmdspec).

The mechanics of tma.cli.spec's parse step, which owns the table and the value types
(a pane id is checked by the runtime's selectors): every argparse error becomes one
UsageError (exit 2 at the boundary), an unknown option with a did-you-mean.
argparse is imported only when a parser is built, and an argv of switches alone
(`tma ls --json`, the everyday call) needs none: `switches` reads it from the
declarations, as argparse would (tests/unit/test_cmdparse_switches.py holds the two
equal over every command's switches).
"""

from __future__ import annotations

from tma.core.cmdspec import Command, Flag, Table, did_you_mean
from tma.core.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn

    Types = dict[str, Callable[[str], Any]]


def usage_error(message: str, table: Table, cmd: Command | None = None) -> UsageError:
    """argparse's message, in tma's words."""
    prefix = "unrecognized arguments: "
    if message.startswith(prefix):
        words = message[len(prefix):].split()
        opts = [w for w in words if w.startswith("-")]
        if opts:
            hint = (did_you_mean(opts[0].partition("=")[0], table.flag_names(cmd), "")
                    if cmd else "")
            return UsageError(f"unknown option {opts[0]}{hint} (see its --help)")
        return UsageError(f"unexpected argument {words[0]!r}")
    return UsageError(message)


def _add(target: argparse._ActionsContainer, flag: Flag, types: Types) -> None:
    kw: dict[str, Any] = {"help": flag.help}
    if flag.const is not None:
        kw.update(action="store_const", const=flag.const, dest=flag.dest)
    elif not flag.takes_value:
        kw.update(action="store_true")
    else:
        kw.update(metavar=flag.metavar, action="append" if flag.repeat else "store")
        if flag.choices:
            kw["choices"] = flag.choices
        if flag.type:
            kw["type"] = types[flag.type]
        if flag.required:
            kw["required"] = True
    if flag.default is not None:
        kw["default"] = flag.default
    target.add_argument(*flag.names, **kw)


def _fill(parser: argparse.ArgumentParser, cmd: Command, types: Types,
          formatter: Any) -> None:
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for flag in cmd.flags:
        target: argparse._ActionsContainer = parser
        if flag.group:
            if flag.group not in groups:
                groups[flag.group] = parser.add_mutually_exclusive_group()
            target = groups[flag.group]
        _add(target, flag, types)
    for arg in cmd.args:
        kw: dict[str, Any] = {"metavar": arg.name, "help": arg.help}
        if arg.optional:
            kw["nargs"] = "?"
        if arg.choices:
            kw["choices"] = arg.choices
        if arg.type:
            kw["type"] = types[arg.type]
        parser.add_argument(arg.name.lower(), **kw)
    if cmd.subcommands:
        subs = parser.add_subparsers(dest="sub", required=True, metavar="SUBCOMMAND",
                                     parser_class=type(parser))
        for s in cmd.subcommands:
            _fill(subs.add_parser(s.name, prog=f"tma {cmd.name} {s.name}", add_help=False,
                                  formatter_class=formatter), s, types, formatter)


def build(table: Table, name: str, types: Types) -> argparse.ArgumentParser:
    """The argparse parser for one command (its flags only: no globals, no selectors)."""
    import argparse

    class _Formatter(argparse.HelpFormatter):
        """argparse formats each argument once as it is added (a check of its metavar),
        and a formatter left to itself asks the terminal's width, importing shutil (with
        bz2 and lzma: ~2.5 ms a command). No argparse text is ever shown (tma.ui.help
        writes the help, every error is a UsageError), so a fixed width does."""

        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=100)

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise usage_error(message, table, cmd)  # one usage-error path, for cli/main.py

    cmd = table.commands[name]
    p = Parser(prog=f"tma {name}", add_help=False, allow_abbrev=False,
               formatter_class=_Formatter)
    _fill(p, cmd, types, _Formatter)
    return p


def _dest(flag: Flag) -> str:
    """The attribute argparse stores a flag under: its dest, else its first long name."""
    if flag.dest:
        return flag.dest
    name = next((n for n in flag.names if n.startswith("--")), flag.names[0])
    return name.lstrip("-").replace("-", "_")


def switches(cmd: Command, argv: list[str]) -> Any | None:
    """The parsed arguments of an argv made of the command's plain switches only (no
    values, no positionals, no two of one exclusive group), as argparse would return
    them; None for anything else, which argparse then parses (and reports)."""
    if cmd.subcommands or any(f.required for f in cmd.flags) or any(
            not a.optional for a in cmd.args):
        return None
    by_name = {n: f for f in cmd.flags for n in f.names
               if not f.takes_value and f.const is None}
    given: set[str] = set()
    groups: set[str] = set()
    for word in argv:
        flag = by_name.get(word)
        if flag is None:
            return None
        if flag.group:
            if flag.group in groups and _dest(flag) not in given:
                return None  # argparse's "not allowed with": its message
            groups.add(flag.group)
        given.add(_dest(flag))
    from types import SimpleNamespace

    values: dict[str, Any] = {}
    for flag in cmd.flags:
        dest = _dest(flag)
        if dest in values and flag.const is not None:
            continue  # one of a set of store_const switches: the first one's default
        if not flag.takes_value and flag.const is None:
            values[dest] = True if dest in given else (
                flag.default if flag.default is not None else False)
        else:
            values[dest] = flag.default
    for arg in cmd.args:
        values[arg.name.lower()] = None
    return SimpleNamespace(**values)


def help_request(cmd: Command, argv: list[str]) -> tuple[bool, str | None]:
    """(whether argv asks for help, the subcommand it names): -h/--help before any `--`."""
    head = argv[:argv.index("--")] if "--" in argv else argv
    if not any(a in ("-h", "--help") for a in head):
        return False, None
    sub = next((a for a in head if cmd.sub(a) is not None), None)
    return True, sub

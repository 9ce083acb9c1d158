"""`tma --help` and every `tma COMMAND --help`, rendered from the command table.

The table (a tma.core.cmdspec.Table) is tma.cli.spec's, passed in: this module
renders data and knows nothing of parsing.
"""

from __future__ import annotations

import textwrap

from tma.core.cmdspec import Command, Table

WIDTH = 79


def wrap(text: str, indent: int = 0) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=" " * indent,
                         subsequent_indent=" " * indent, break_on_hyphens=False) or [""]


def rows(items: list[tuple[str, str]], indent: int = 2) -> list[str]:
    """Two columns: the left one at most 24 wide, a longer left item on a line of its own."""
    width = min(24, max((len(a) for a, _ in items), default=0) + 2)
    out = []
    for left, right in items:
        body = wrap(right, indent + width)
        pad = " " * indent + left
        if len(left) + 2 > width:
            out.append(pad)
            out += body
        else:
            out.append(pad.ljust(indent + width) + body[0].lstrip())
            out += body[1:]
    return out


def usage(cmd: Command, parent: str = "") -> str:
    words = ["tma", parent, cmd.name] if parent else ["tma", cmd.name]
    words = [w for w in words if w]
    if cmd.subcommands:
        words.append("{" + ",".join(s.name for s in cmd.subcommands if not s.internal) + "}")
    if cmd.flags:
        words.append("[options]")
    if cmd.selectors:
        words.append("[selectors]")
    words += [a.synopsis() for a in cmd.args]
    return "usage: " + " ".join(words)


def help_text(table: Table, name: str, sub: str | None = None) -> str:
    cmd = table.commands[name]
    parent = ""
    inner = cmd.sub(sub) if sub is not None else None
    if inner is not None:
        parent, cmd = cmd.name, inner
    lines = [usage(cmd, parent), "", cmd.summary]
    if cmd.notes:
        lines += [""] + wrap(cmd.notes)
    if cmd.args:
        lines += ["", "arguments:"] + rows([(a.name, a.help) for a in cmd.args])
    if cmd.subcommands:
        lines += ["", "subcommands:"] + rows([(s.name, s.summary) for s in cmd.subcommands
                                               if not s.internal])
    if cmd.flags:
        lines += ["", "options:"] + rows([(f.synopsis(), f.help) for f in cmd.flags])
    if cmd.selectors:
        lines += ["", "selectors (AND together; they choose what is shown, after a full "
                      "cycle):"] + rows([(f.synopsis(), f.help) for f in cmd.selectors])
    lines += [""] + wrap("global options: --socket-name, --socket-path, --config, "
                         "--manifest-dir, -c/--client, --debug-timing (see tma --help)")
    if cmd.exits:
        lines += ["", "exit status:"] + rows([(str(c), m) for c, m in cmd.exits])
    lines += ["", f"docs: {table.docs}"]
    return "\n".join(lines) + "\n"


def top_help(table: Table) -> str:
    lines = ["usage: tma [global options] <command> [options]", "",
             "Whose move is it? The state of every AI coding agent in your tmux panes:",
             "working (the agent's), blocked (yours), idle (nobody's) or unknown.", "",
             "commands:"]
    lines += rows([(c.name, c.summary) for c in table.public()], indent=2)
    lines += ["", "global options (before or after the command):"]
    lines += rows([(f.synopsis(), f.help) for f in table.globals + table.top_flags])
    lines += [""] + wrap("Run `tma help COMMAND` (or `tma COMMAND --help`) for a "
                         "command's flags and exit statuses.") + [f"docs: {table.docs}"]
    return "\n".join(lines) + "\n"

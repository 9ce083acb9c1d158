"""The shapes a command declaration takes: Flag, Arg, Command and the whole Table.

Pure data. tma.cli.spec fills them in (the one table of commands and flags) and
builds its argparse parsers from them; tma.ui renders the help, the shell
completions and the man page from a Table without importing tma.cli.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable

FILE_METAVARS = frozenset({"PATH", "DIR", "FILE"})


class Flag:
    """One option. `metavar` None means a switch; `dest`+`const` make one choice of a
    group of switches (`--next` of jump's directions); `group` names a set of flags
    that exclude each other; `values` is what completion offers (the choices, or a
    vocabulary for a comma list)."""

    __slots__ = ("names", "help", "metavar", "choices", "default", "dest", "const", "group",
                 "type", "required", "repeat", "values")

    def __init__(self, *names: str, help: str, metavar: str | None = None,
                 choices: tuple[str, ...] | None = None, default: object = None, dest: str | None = None,
                 const: str | None = None, group: str | None = None, type: str | None = None,
                 required: bool = False, repeat: bool = False,
                 values: tuple[str, ...] | None = None) -> None:
        self.names = names
        self.help = help
        self.metavar = metavar
        self.choices = choices
        self.default = default
        self.dest = dest
        self.const = const
        self.group = group
        self.type = type
        self.required = required
        self.repeat = repeat
        self.values = values if values is not None else choices

    @property
    def long(self) -> str:
        return next(n for n in self.names if n.startswith("--"))

    @property
    def takes_value(self) -> bool:
        return self.metavar is not None

    @property
    def completion(self) -> tuple[str, ...] | str | None:
        """A value set, "FILE" for a path, "" for a free value, None for a switch."""
        if not self.takes_value:
            return None
        if self.values:
            return self.values
        return "FILE" if self.metavar in FILE_METAVARS else ""

    def synopsis(self) -> str:
        names = ", ".join(self.names)
        return f"{names} {self.metavar}" if self.takes_value else names


class Arg:
    """One positional argument."""

    __slots__ = ("name", "help", "choices", "optional", "type", "values")

    def __init__(self, name: str, help: str, choices: tuple[str, ...] | None = None,
                 optional: bool = False, type: str | None = None,
                 values: tuple[str, ...] | None = None) -> None:
        self.name = name
        self.help = help
        self.choices = choices  # enforced by the parser
        self.optional = optional
        self.type = type
        self.values = values if values is not None else choices  # offered by completion

    def synopsis(self) -> str:
        return f"[{self.name}]" if self.optional else self.name


class Command:
    """One command. `selectors` holds the selector flags it takes (the flags
    themselves, so a renderer needs no table to list them), empty when it takes none."""

    __slots__ = ("name", "summary", "flags", "args", "exits", "selectors", "internal",
                 "subcommands", "notes")

    def __init__(self, name: str, summary: str, *, flags: tuple[Flag, ...] = (),
                 args: tuple[Arg, ...] = (), exits: tuple[tuple[int, str], ...] = (),
                 selectors: tuple[Flag, ...] = (), internal: bool = False,
                 subcommands: tuple[Command, ...] = (), notes: str = "") -> None:
        self.name = name
        self.summary = summary
        self.flags = flags
        self.args = args
        self.exits = exits
        self.selectors = selectors
        self.internal = internal
        self.subcommands = subcommands
        self.notes = notes

    @property
    def module(self) -> str:
        """The module that runs it: tma.cli's, but `tma daemon` is tma.daemon's own
        (cli/main.py parses its flags for it: the daemon may not import tma.cli)."""
        if self.name == "daemon":
            return "tma.daemon.command"
        return self.name.replace("-", "_")

    def sub(self, name: str) -> Command | None:
        return next((s for s in self.subcommands if s.name == name), None)

    def all_flags(self) -> tuple[Flag, ...]:
        """Its own flags, then the selector flags it takes (own flags win a name)."""
        own = {n for f in self.flags for n in f.names}
        return self.flags + tuple(f for f in self.selectors if f.long not in own)


class Table:
    """The whole command line: what tma.ui renders help, completions and man page from."""

    __slots__ = ("commands", "globals", "top_flags", "selector", "docs")

    def __init__(self, commands: dict[str, Command], globals: tuple[Flag, ...],
                 top_flags: tuple[Flag, ...], selector: tuple[Flag, ...], docs: str) -> None:
        self.commands = commands
        self.globals = globals  # the global options
        self.top_flags = top_flags  # -h and -V, the options of bare `tma`
        self.selector = selector
        self.docs = docs  # where the docs are, the last line of every help

    def public(self) -> list[Command]:
        return [c for c in self.commands.values() if not c.internal]

    def flag_names(self, cmd: Command) -> list[str]:
        """Every option a command takes: its own (and its subcommands'), the selectors
        when it has them, the globals, --help."""
        names = [n for f in cmd.flags for n in f.names]
        for s in cmd.subcommands:
            names += self.flag_names(s)
        names += [n for f in cmd.selectors for n in f.names]
        return names + [n for f in self.globals for n in f.names] + ["--help"]


def did_you_mean(word: str, names: Iterable[str], quote: str = "'") -> str:
    """`; did you mean 'ls'?` for the closest name (difflib), or ''."""
    import difflib  # ~1 ms (and heapq): only once a word is wrong

    close = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return f"; did you mean {quote}{close[0]}{quote}?" if close else ""

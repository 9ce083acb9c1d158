"""`tma`: find the command, run it, and turn every error into one exit status.

The run's one Session (tma.runtime.session) is built here from the global options
and handed to the command with the rest of its command line.

The error boundary is here and only here: commands raise typed errors (UsageError,
NoPane, NoServer, ConfigError, BundledManifestError, TmuxError) and `EXIT_TABLE`
says what each one prints and returns. The hot commands (`status`, `event`,
`clear-attention`) are dispatched without importing the command table in
tma.cli.spec; every other command goes through it.
"""

from __future__ import annotations

import sys

from tma.core.errors import FAIL, INTERRUPTED, NO_PANE, OK, USAGE  # the one exit table

# Dispatched without tma.cli.spec (tests/unit/test_cli_docs.py holds them to it).
HOT = {"status": "status", "event": "event", "clear-attention": "clear_attention"}
#: Commands whose first act is a full pane read (a producing cycle).
EARLY_READ = frozenset({"ls"})
_VALUED = ("--socket-name", "--socket-path", "--config", "--manifest-dir", "-c", "--client")


# (module, exception class, exit status, message or None for str(exc), prefix with the
# command?) — the first row whose class matches wins. Classes are looked up only in
# modules already imported: an exception from a module that was never loaded cannot
# be raised, and the status line pays for no import.
EXIT_TABLE = (
    ("tma.core.errors", "UsageError", USAGE, None, True),
    ("tma.core.errors", "NoPane", NO_PANE, None, False),
    ("tma.tmux.adapter", "NoServer", FAIL, "no tmux server running", False),
    ("tma.runtime.config", "ConfigError", FAIL, None, False),
    ("tma.runtime.manifests", "BundledManifestError", FAIL, None, False),
    ("tma.core.bundled", "BundledManifestError", FAIL, None, False),
    ("tma.tmux.adapter", "TmuxError", FAIL, None, False),
)
# what `tma status` prints on stdout under #() (no TTY), where tmux hides stderr
STATUS_MARKERS = {"ConfigError": "tma:config!", "BundledManifestError": "tma:manifest!"}


def _classify(exc: BaseException):
    for module, name, code, message, prefixed in EXIT_TABLE:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return name, code, message, prefixed
    return None


def _say(msg: str) -> None:
    sys.stderr.write(msg if msg.endswith("\n") else msg + "\n")


def _message(text: str, cmd: str | None, prefixed: bool) -> str:
    if prefixed:
        return f"tma {cmd}: {text}" if cmd else f"tma: {text}"
    return text if text.startswith("tma") else f"tma: {text}"


def _status_marker(name: str, argv: list[str]) -> None:
    marker = STATUS_MARKERS.get(name)
    machine = any(a in ("json", "prom", "--format=json", "--format=prom") for a in argv)
    try:
        tty = sys.stdout.isatty()
    except (ValueError, OSError):
        tty = False
    if marker and not tty and not machine:
        # plain ends its line in a pipe as its counts do; the tmux format never does
        plain = any(a in ("plain", "--format=plain") for a in argv)
        sys.stdout.write(marker + ("\n" if plain else ""))


def find_command(argv: list[str]) -> tuple[str | None, int]:
    """The first argument that is not a global option (or its value), and its index."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, _ = arg.partition("=")
        if name in _VALUED:
            i += 1 if eq else 2
        elif arg == "--debug-timing":
            i += 1
        else:
            return arg, i
    return None, len(argv)


def _help(argv: list[str], at: int) -> int:
    from tma.cli import spec

    rest = [a for a in argv[at + 1:] if not a.startswith("-")]
    if not rest:
        sys.stdout.write(spec.top_help())
        return OK
    name = rest[0]
    if name not in spec.COMMANDS:
        raise _unknown(name)
    sys.stdout.write(spec.help_text(name, rest[1] if len(rest) > 1 else None))
    return OK


def _unknown(word: str):
    from tma.cli import spec
    from tma.core.errors import UsageError

    if word.startswith("-"):
        names = [n for f in spec.GLOBALS for n in f.names]
        return UsageError(f"unknown option {word}{spec.did_you_mean(word, names, '')} "
                          "(see tma --help)")
    names = [c.name for c in spec.public()]
    return UsageError(f"unknown command {word!r}{spec.did_you_mean(word, names)} "
                      "(see tma --help)")


def dispatch(argv: list[str]) -> int:
    cmd, at = find_command(argv)
    if cmd is None:
        if any(a.partition("=")[0] in _VALUED for a in argv[-1:]):
            from tma.cli.common import split_globals

            split_globals(argv)  # raises "--config needs a value"
        from tma.cli import common

        if common.on_terminal(0) and common.on_terminal(1):  # bare `tma`: the picker
            from tma.cli import picker

            return picker.main(_session(argv)[0], [])
        from tma.cli import spec

        sys.stderr.write(spec.top_help())  # in a script: the usage, not a screen
        return USAGE
    if cmd in ("-h", "--help", "help"):
        return _help(argv, at)
    if cmd in ("-V", "--version"):
        cmd = "version"
    module = HOT.get(cmd)
    early = None
    if module is None:
        if cmd in EARLY_READ and not {"-h", "--help"} & set(argv[at + 1:]):
            # its pane read starts now: tmux answers while the command's modules load
            early = _session(argv[:at] + argv[at + 1:])
            early[0].begin_cycle_read()
        from tma.cli import spec

        if cmd not in spec.COMMANDS or cmd == "help":
            raise _unknown(cmd)
        module = spec.COMMANDS[cmd].module
    if cmd == "event":
        from tma.cli import event  # the hook parses its own flags and never fails

        return event.main(argv[:at] + argv[at + 1:])
    session, rest = early or _session(argv[:at] + argv[at + 1:])
    # the one lazy loader: each command's module is imported only when it runs
    if "." not in module:
        name = f"tma.cli.{module}"
        __import__(name)  # not importlib: it costs the status line an import
        return sys.modules[name].main(session, rest)
    # a module outside tma.cli (`tma daemon`: tma.daemon, which nothing imports and
    # which may not import the parser) is handed its parsed flags
    from tma.cli import spec

    _sel, args = spec.parse(cmd, rest, session)
    __import__(module)
    return sys.modules[module].run(session, args)


def _session(argv: list[str]):
    """The run's one Session, from the global options wherever they stand, and the rest
    of the command line."""
    from tma.cli.common import split_globals
    from tma.runtime.session import Session

    g, rest = split_globals(argv)
    return Session(g), rest


def _utf8(stream) -> bool:
    enc = getattr(stream, "encoding", None) or "utf-8"  # no encoding: a StringIO, fine
    return enc.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["event"]:
        # the hook path: straight through (it parses its own flags and never fails)
        from tma.cli import event

        return event.main(argv[1:])
    if not (_utf8(sys.stdout) and _utf8(sys.stderr)):
        from tma.ui import text  # a non-UTF-8 locale: every write degrades, none raises

        text.degrade(sys.stdout, sys.stderr)
    cmd = None
    try:
        cmd = find_command(argv)[0]
        return dispatch(argv)
    except BrokenPipeError:
        from tma.cli.common import quiet_stdout

        quiet_stdout()
        return OK
    except KeyboardInterrupt:
        _say("tma: interrupted")
        return INTERRUPTED
    except Exception as exc:
        found = _classify(exc)
        if found is None:
            raise
        name, code, message, prefixed = found
        if cmd == "status":
            _status_marker(name, argv)
        _say(_message(message or str(exc), _known(cmd), prefixed))
        return code


def _known(cmd: str | None) -> str | None:
    """The command to name in a usage message: only a real one (not `--bogus`)."""
    if cmd is None or cmd in HOT:
        return cmd
    from tma.cli import spec  # only on the error path

    return cmd if cmd in spec.COMMANDS else None


#: Run and exit: no cyclic collector (its passes cost more than a second's garbage;
#: bench/RESULTS.md). The daemon, picker, watch, wait, web, serve, subscribe keep it.
ONE_SHOT = frozenset({*HOT, "ls", "jump", "card", "last"})


def entry() -> None:
    if (cmd := find_command(sys.argv[1:])[0]) in ONE_SHOT:
        __import__("gc").disable()
    rc = main()
    if cmd in HOT:
        _leave(rc)
    sys.exit(rc)


def _leave(rc: int) -> None:
    """The hot commands leave without the interpreter's teardown: freeing every module
    and object costs ~2 ms, a tenth of a status line's run. Nothing on these paths
    registers exit handlers or starts threads (children they start are already
    detached), and every file they write is closed: only the standard streams are
    flushed here, as the interpreter would."""
    import os

    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue  # started with that fd closed (a hook run as `>&-`): nothing to flush
        try:
            stream.flush()
        except BrokenPipeError:
            pass  # the reader left (status under a closed pipe): as main() treats it
        except (OSError, ValueError):
            rc = rc or FAIL
    os._exit(rc if isinstance(rc, int) else FAIL)

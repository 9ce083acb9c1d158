"""`tma`: dispatch to one module per command, importing nothing the command doesn't need."""

from __future__ import annotations

import sys

# command -> module under tma.cli
COMMANDS = {
    "version": "version",
    "ls": "ls",
    "status": "status",
    "wait": "wait",
    "jump": "jump",
    "doctor": "doctor",
    "debug": "debug",
    "demo": "demo",
    "completions": "completions",
    "install-hooks": "install_hooks",
    "clear-attention": "clear_attention",
    "event": "event",
    "act": "act",
    "uninstall": "uninstall",
    "init": "init",
}

HELP = """usage: tma [global options] <command> [options]

Whose move is it? The state of every AI coding agent in your tmux panes:
working (the agent's), blocked (yours), idle (nobody's) or unknown.

commands:
  status        counts for the status line (what #(tma status) runs)
  ls            list agent panes (--json for scripts)
  wait          block until a pane reaches a state
  jump          move to the pane that needs you
  act           answer a pending permission prompt (approve, deny)
  init          first run: detect agents, wire their hooks, check the status line
  install-hooks wire an agent's own hooks to tma (--check, --uninstall)
  uninstall     remove every hook wiring and every tma option
  doctor        diagnose detection tiers and silent disablers
  debug         explain / capture / stamp (manifest authoring and tests)
  demo          a self-contained demo on a private tmux server
  completions   shell completion script (bash, zsh, fish)
  version       print the version

global options (before or after the command):
  --socket-name NAME   tmux -L NAME
  --socket-path PATH   tmux -S PATH (env TMA_SOCKET_PATH)
  --config PATH        config file (env TMA_CONFIG)
  --manifest-dir DIR   load agent manifests only from DIR
  -c, --client NAME    acting tmux client (jump)
  --debug-timing       one timing line per poll cycle on stderr (ls, status, jump)
"""


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
    # The command is the first argument that is not a global option (or its value).
    from tma.cli.common import UsageError, split_globals

    try:
        _, rest = split_globals(argv)
    except UsageError as exc:
        sys.stderr.write(f"tma: {exc}\n")
        return 2
    if not rest or rest[0] in ("-h", "--help", "help"):
        sys.stdout.write(HELP)
        return 0 if rest else 2
    if rest[0] in ("-V", "--version"):
        rest[0] = "version"
    cmd = rest[0]
    module = COMMANDS.get(cmd)
    if module is None:
        sys.stderr.write(f"tma: unknown command {cmd!r} (see tma --help)\n")
        return 2
    idx = argv.index(cmd)
    sub_argv = argv[:idx] + argv[idx + 1:]
    __import__(f"tma.cli.{module}")  # not importlib: it costs the status line an import
    mod = sys.modules[f"tma.cli.{module}"]
    try:
        return mod.main(sub_argv)
    except UsageError as exc:
        sys.stderr.write(f"tma {cmd}: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0


def entry() -> None:
    sys.exit(main())

"""What every command shares: global options, terminal facts, selectors, errors.

The config, the server, the manifests and the daemon are the Session's
(tma.runtime.session), built once in cli/main.py.

Kept import-light: `tma status` and `tma event` run through here on every status
line and every agent hook.
"""

from __future__ import annotations

import os
import sys

from tma.core.errors import FAIL, USAGE, NoPane, UsageError
from tma.runtime.session import Globals, Session

__all__ = ["FAIL", "USAGE", "Globals", "NoPane", "Session", "UsageError"]



_VALUED = {"--socket-name": "socket_name", "--socket-path": "socket_path", "--config": "config",
           "--manifest-dir": "manifest_dir", "-c": "client", "--client": "client"}


def split_globals(argv: list[str]) -> tuple[Globals, list[str]]:
    """Take the global options out of argv, wherever they stand."""
    g = Globals()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name, eq, value = arg.partition("=")
        if name in _VALUED and (eq or i + 1 < len(argv)):
            if not eq:
                value = argv[i + 1]
                i += 1
            setattr(g, _VALUED[name], value)
        elif name in _VALUED:
            raise UsageError(f"{name} needs a value")
        elif arg == "--debug-timing":
            g.debug_timing = True
        else:
            rest.append(arg)
        i += 1
    if g.socket_name and g.socket_path:
        raise UsageError("--socket-name and --socket-path are mutually exclusive")
    if g.client is not None and (g.client == "" or "#{" in g.client):
        g.client = None  # an unexpanded #{client_name}: treat as absent
    return g, rest


def err(msg: str) -> None:
    sys.stderr.write(msg if msg.endswith("\n") else msg + "\n")


def quiet_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def check_agent(session: Session, name: str) -> None:
    """An --agent selector must name a loaded manifest; the error lists the known ones."""
    known = session.agent_names()
    if name not in known:
        raise UsageError(f"unknown agent {name!r} (expected one of: {', '.join(known)})")


def now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def on_terminal(fd: int = 1) -> bool:
    """Is a person reading (a TTY), or a script / `#()` (anything else)?"""
    try:
        return os.isatty(fd)
    except OSError:
        return False


def terminal_width(fd: int = 1, default: int = 100) -> int:
    try:
        return os.get_terminal_size(fd).columns or default
    except OSError:
        return default


def env_pane() -> str | None:
    return os.environ.get("TMUX_PANE") or None


def take_selectors(rest: list[str]):
    """Pull the selector flags out of argv; a bad one is a usage error (exit 2)."""
    from tma.runtime import selectors

    try:
        return selectors.take(rest)
    except selectors.SelectorError as exc:
        raise UsageError(str(exc)) from None

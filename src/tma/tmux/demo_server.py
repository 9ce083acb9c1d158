"""The tmux side of `tma demo`: a private server, its panes, and tearing it down.

Everything here addresses a server `tma demo` started itself (`tmux -L tma-demo-<pid>
-f /dev/null`); nothing touches the user's own server.
"""

from __future__ import annotations

import os
import stat
import time

from tma.tmux import frame
from tma.tmux.adapter import NoServer, Server, TmuxError, quote

NO_CONFIG = ("-f", "/dev/null")
_PANE_FMT = "#{pane_id} #{pane_pid}"  # an id and a number: printed alike by every release


def _pane(out: str) -> tuple[str, int]:
    pane_id, _, pid = out.strip().partition(" ")
    return pane_id, int(pid or 0)


def start(server: Server, session: str, argv: list[str], *, cwd: str, width: int,
          height: int, window: str = "") -> tuple[str, int]:
    """Start the server with one detached session whose first pane runs argv.

    argv is executed directly (no shell). Returns (pane_id, pane_pid)."""
    args = [*NO_CONFIG, "new-session", "-d", "-s", session, "-x", str(width), "-y", str(height),
            "-c", cwd, "-P", "-F", _PANE_FMT]
    if window:
        args += ["-n", window]
    return _pane(server.run(*args, *argv))


def split(server: Server, target: str, argv: list[str], *, cwd: str) -> tuple[str, int]:
    """One more pane in target's window running argv; the window is re-tiled."""
    out = server.run("split-window", "-d", "-t", target, "-c", cwd, "-P", "-F", _PANE_FMT, *argv)
    server.run("select-layout", "-t", target, "tiled")
    return _pane(out)


def set_global(server: Server, options: dict[str, str]) -> None:
    """Global session/window options (status line, names), one spawn; failures ignored."""
    lines = [f"set-option -g {key} {quote(value)}" for key, value in options.items()]
    server.source(lines)


def pane_pids(server: Server) -> list[int]:
    """The root pid of every pane on the server ([] when the server is gone)."""
    try:
        out = server.run("list-panes", "-a", "-F", "#{pane_pid}")
    except TmuxError:
        return []
    return [int(x) for x in out.split() if x.isdigit()]


def alive(server: Server) -> bool:
    try:
        server.run("list-sessions", "-F", "#{session_name}")
    except NoServer:
        return False
    except TmuxError:
        return True
    return True


def socket_path(server: Server) -> str:
    """The server's socket file ("" when it does not answer)."""
    try:
        return frame.untext(server.run("display-message", "-p",
                                       frame.text("socket_path")).rstrip("\n"))
    except TmuxError:
        return ""


def kill(server: Server, wait: float = 3.0) -> None:
    """Kill the server and remove its socket file (tmux leaves it behind).

    A server that is already gone is fine."""
    path = socket_path(server)
    try:
        server.run("kill-server")
    except TmuxError:
        pass
    deadline = time.monotonic() + wait
    while alive(server):
        if time.monotonic() > deadline:
            return  # still answering: leave its socket alone
        time.sleep(0.05)
    if path:
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        except OSError:
            pass


def attach_command(server: Server) -> str:
    """What a user types to look at the demo."""
    return f"tmux -L {server.socket_name} attach" if server.socket_name else "tmux attach"


def stop_command(server: Server) -> str:
    """The shell line that stops the server and removes the socket file it leaves behind."""
    line = f"tmux -L {server.socket_name} kill-server"
    path = socket_path(server)
    if path:
        import shlex

        line += f"; rm -f {shlex.quote(path)}"
    return line

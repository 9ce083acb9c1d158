"""tmux control-mode clients: the daemon's event sources (one client per session).

A client is `tmux -u -C attach-session -f read-only,ignore-size -t <session id>` with
its stdin held open (EOF detaches it) and its stdout read non-blocking. It sends no
commands: everything it reports is a notification line. What it must not do to the
user, and how it avoids it:

- sizing: `ignore-size` keeps it out of every window-size calculation, so a window
  held by a user's client keeps that client's size;
- input: `read-only`, so it can never type into a pane or run a command;
- attention: tma's seen clear reads only non-control clients (#{client_control_mode}).

What it cannot avoid (tmux has no flag for it) is being an attached, focused viewer
of its session: the session counts as attached (`destroy-unattached` never fires
while it is there) and alert flags on the session's current window are suppressed.

Only the notifications the daemon acts on are parsed; `%output` payloads are never
decoded (the pane id is all the activity gauge needs), and a line longer than the cap
is cut to its head so a flood of output cannot grow memory.
"""

from __future__ import annotations

import os
import time

from tma.tmux import read, spawn
from tma.tmux.adapter import Server

LINE_CAP = 256 * 1024
CHUNK = 16 * 1024
CHUNKS_PER_WAKE = 64
_HEAD = 128  # bytes of an over-long line kept: enough for "%output %123 "

OUTPUT = "output"  # (OUTPUT, pane id)
SESSIONS_CHANGED = "sessions-changed"
SESSION_CHANGED = "session-changed"  # (kind, session id)
WINDOW_ADD = "window-add"  # (kind, window id)
WINDOW_CLOSE = "window-close"
PANE_MODE = "pane-mode-changed"  # (kind, pane id)
LAYOUT = "layout-change"  # panes may have come or gone in the window
EXIT = "exit"  # (EXIT, reason): the client is going away
EOF = "eof"  # its stdout closed (the client or the server died)

_WINDOWISH = {
    "%window-add": WINDOW_ADD, "%unlinked-window-add": WINDOW_ADD,
    "%window-close": WINDOW_CLOSE, "%unlinked-window-close": WINDOW_CLOSE,
    "%layout-change": LAYOUT, "%window-pane-changed": LAYOUT,
}


def parse_line(line: bytes) -> tuple[object, ...] | None:
    """One notification line (without its newline) as an event tuple, or None."""
    if not line.startswith(b"%"):
        return None
    head, _, rest = line.partition(b" ")
    word = head.decode("ascii", "replace")
    if word in ("%output", "%extended-output"):
        pane = rest.split(b" ", 1)[0].decode("ascii", "replace")
        return (OUTPUT, pane) if pane.startswith("%") else None
    if word == "%sessions-changed":
        return (SESSIONS_CHANGED,)
    if word == "%session-changed":
        return (SESSION_CHANGED, rest.split(b" ", 1)[0].decode("ascii", "replace"))
    if word in _WINDOWISH:
        return (_WINDOWISH[word], rest.split(b" ", 1)[0].decode("ascii", "replace"))
    if word == "%pane-mode-changed":
        return (PANE_MODE, rest.strip().decode("ascii", "replace"))
    if word == "%exit":
        return (EXIT, rest.decode("utf-8", "replace").strip())
    return None


class LineReader:
    """Bytes in, notification lines out. Lines inside a %begin ... %end/%error block
    (the reply to a command: the attach itself) are command output, not events."""

    def __init__(self) -> None:
        self._buf = b""
        self._cut = False  # inside an over-long line: drop until its newline
        self._in_block = False

    def feed(self, data: bytes) -> list[bytes]:
        lines = []
        parts = (self._buf + data).split(b"\n")
        self._buf = parts.pop()
        for part in parts:
            if self._cut:
                self._cut = False
                continue
            line = self._block(part.rstrip(b"\r"))
            if line is not None:
                lines.append(line)
        if len(self._buf) > LINE_CAP:
            head = self._block(self._buf[:_HEAD])
            if head is not None:
                lines.append(head)
            self._buf = b""
            self._cut = True
        return lines

    def _block(self, line: bytes) -> bytes | None:
        if self._in_block:
            if line.startswith((b"%end ", b"%error ")):
                self._in_block = False
            return None
        if line.startswith(b"%begin "):
            self._in_block = True
            return None
        return line


class ControlClient:
    """One attached control-mode client on one session."""

    def __init__(self, server: Server, session_id: str) -> None:
        self.session_id = session_id
        argv = server.argv("-C", "attach-session", "-f", "read-only,ignore-size",
                           "-t", session_id)
        out_r, out_w = os.pipe()
        try:
            self.pid, self._stdin = spawn.start(argv, stdin_pipe=True, stdout_fd=out_w)
        except BaseException:
            os.close(out_r)
            raise
        finally:
            os.close(out_w)
        server.spawns += 1
        self._out = out_r
        os.set_blocking(out_r, False)
        self._reader = LineReader()
        self.alive = True
        self.started = 0  # the owner's clock at attach (it sets it)

    def fileno(self) -> int:
        return self._out

    def read_events(self) -> list[tuple[object, ...]]:
        """Everything readable now, as events; (EOF,) once the stream has ended."""
        events: list[tuple[object, ...]] = []
        for _ in range(CHUNKS_PER_WAKE):
            try:
                data = os.read(self._out, CHUNK)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.alive = False
                events.append((EOF,))
                break
            for line in self._reader.feed(data):
                event = parse_line(line)
                if event is not None:
                    events.append(event)
        return events

    def close(self, wait: float = 0.5) -> None:
        """Detach (EOF on stdin), then make sure the process is gone and reaped."""
        for fd in (self._stdin, self._out):
            if fd is None or fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self._stdin = self._out = -1
        deadline = time.monotonic() + wait
        while True:
            try:
                pid, _status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid:
                return
            if time.monotonic() > deadline:
                try:
                    os.kill(self.pid, 9)
                except ProcessLookupError:
                    pass
                try:
                    os.waitpid(self.pid, 0)
                except ChildProcessError:
                    pass
                return
            time.sleep(0.01)


def session_ids(server: Server) -> tuple[str, list[str]]:
    """(server pid, every session id) in one spawn. Raises NoServer when it is gone."""
    out = server.run("list-sessions", "-F", "#{pid} #{session_id}")
    pid, ids = "", []
    for line in out.splitlines():
        spid, _, sid = line.partition(" ")
        if sid.startswith("$"):
            pid = spid
            ids.append(sid)
    return pid, ids


def server_facts(server: Server) -> tuple[str, str]:
    """(socket path, server pid): what keys a daemon to its server. Raises NoServer."""
    path, pid = read.server_values(server, ("socket_path", "pid"))
    return path, pid

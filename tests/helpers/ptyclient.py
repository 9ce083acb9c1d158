"""Real tmux clients for integration tests.

`PtyClient`: `tmux attach` on a pseudo-terminal, so the server sees a genuine
terminal client (#{client_activity} moves when keys are typed into the master,
prefix bindings work). `ControlClient`: `tmux -CC attach`, the way iTerm2
attaches (its activity clock never moves after attach); -CC insists on a
terminal (`tcgetattr failed` on a pipe), so it gets a pty too.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import termios
import threading


def client_names(srv) -> list[str]:
    return srv.tmux("list-clients", "-F", "#{client_name}").split()


def client_field(srv, name: str, fmt: str) -> str:
    out = srv.tmux("list-clients", "-F", "#{client_name}\t" + fmt)
    for line in out.splitlines():
        cname, _, value = line.partition("\t")
        if cname == name:
            return value
    raise AssertionError(f"client {name} is gone")


class PtyClient:
    """`tmux attach` on a pty: output drained in a thread, keys typed into the master."""

    CONTROL = False

    def __init__(self, srv, session: str = "s", cols: int = 120, rows: int = 40,
                 argv: list[str] | None = None) -> None:
        """`argv`: another command that becomes a client of `srv` (`tma attach`)."""
        env = dict(srv.env, TERM="xterm-256color")
        argv = argv or [srv.tmux_bin, "-u", "-L", srv.name, "-f", "/dev/null",
                        *(["-CC"] if self.CONTROL else []), "attach", "-t", session]
        before = set(client_names(srv))
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.srv = srv
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()
        self.name = srv.wait_for(lambda: next(iter(set(client_names(srv)) - before), None))

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._buf += data

    def output(self) -> str:
        with self._lock:
            return self._buf.decode("utf-8", "replace")

    def clear_output(self) -> None:
        with self._lock:
            self._buf.clear()

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def pane(self) -> str:
        """The pane this client shows."""
        return client_field(self.srv, self.name, "#{pane_id}")

    def activity(self) -> int:
        """#{client_activity}: epoch seconds of the last real input."""
        return int(client_field(self.srv, self.name, "#{client_activity}"))

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass


class ControlClient(PtyClient):
    """`tmux -CC attach` (iTerm2's control mode) on a pty: -CC wants a terminal."""

    CONTROL = True



def run_on_pty(argv: list[str], env: dict, cols: int = 120, rows: int = 40,
               timeout: float = 30.0) -> tuple[int, str]:
    """Run a command with a pseudo-terminal as stdin/stdout/stderr (what a person's shell
    gives it); returns (exit status, everything it printed with CR-LF turned into LF)."""
    status, out = _on_pty(argv, env, cols, rows, timeout, None)
    return status, out.decode("utf-8", "replace").replace("\r\n", "\n")


def type_on_pty(argv: list[str], env: dict, at: bytes, keys: bytes | list[bytes], *,
                timeout: float = 60.0) -> tuple[int, str, int]:
    """Run a command on a pseudo-terminal (its controlling terminal: a typed \\x03 is the
    SIGINT the line discipline makes of Ctrl-C) and type `keys` the first time `at`
    appears in its output (a list: its n-th item the n-th time). Returns (exit status,
    output with CR-LF as LF, how many times `at` appeared in all)."""
    answers = [keys] if isinstance(keys, bytes) else list(keys)
    typed = [0]

    def answer(fd: int, out: bytearray) -> None:
        import time

        if typed[0] < len(answers) and out.count(at) > typed[0]:
            time.sleep(0.1)  # the prompt is written before the read starts
            os.write(fd, answers[typed[0]])
            typed[0] += 1

    status, out = _on_pty(argv, env, 120, 40, timeout, answer)
    return status, out.decode("utf-8", "replace").replace("\r\n", "\n"), out.count(at)


def _on_pty(argv: list[str], env: dict, cols: int, rows: int, timeout: float,
            on_output) -> tuple[int, bytearray]:
    """The command run on a fresh pty until it closes it: (exit status, all it printed);
    `on_output(fd, out)` after each read."""
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise AssertionError(f"{argv} did not finish in {timeout}s: {bytes(out)!r}")
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child has closed the terminal (it exited)
                break
            if not chunk:
                break
            out += chunk
            if on_output is not None:
                on_output(fd, out)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status), out

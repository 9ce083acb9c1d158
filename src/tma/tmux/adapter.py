"""The tmux adapter: binary and socket resolution, one spawn helper, typed errors.

Every tmux process tma starts goes through `Server.run` or `Server.source`, always
with `-u` (without a UTF-8 locale tmux rewrites non-ASCII in format output to `_`) and
a 3 s deadline. What a format prints differs between releases; tma.tmux.frame reads it
back alike on all of them.

Every spawn but a pure read (`run(..., writes=False)`) touches the server's generation
file afterwards: the status line's last answer (tma.runtime.status_memo) stands only
while no tma process has written to tmux since it was made.
"""

from __future__ import annotations

import os

from tma.tmux import spawn

TIMEOUT = 3.0


class TmuxError(Exception):
    """tmux refused a command (the message is tmux's own)."""


class NoServer(TmuxError):
    def __init__(self, detail: str = ""):
        super().__init__("no tmux server running")
        self.detail = detail


class NotInstalled(TmuxError):
    pass


class ProtocolMismatch(TmuxError):
    pass


class Timeout(TmuxError):
    pass


class PaneGone(TmuxError):
    pass


_NO_SERVER = ("no server running", "error connecting to", "server exited unexpectedly")
_PANE_GONE = ("can't find pane", "no such pane", "can't find window", "can't find session")


def classify(stderr: str) -> TmuxError:
    low = stderr.lower()
    if any(s in low for s in _NO_SERVER):
        return NoServer(stderr.strip())
    if "protocol version mismatch" in low:
        return ProtocolMismatch(
            "tmux client and server speak different protocols (tmate or a mismatched binary?); "
            "point [tmux] bin or TMA_TMUX_BIN at the server's tmux"
        )
    if any(s in low for s in _PANE_GONE):
        return PaneGone(stderr.strip())
    return TmuxError(stderr.strip() or "tmux failed")


def resolve_bin(config_bin: str | None = None) -> str:
    env = os.environ.get("TMA_TMUX_BIN")
    if env:
        return env
    if config_bin:
        return config_bin
    return "tmux"


class Server:
    """One tmux server, addressed by socket name, socket path or the default."""

    def __init__(self, bin: str = "tmux", socket_name: str | None = None,
                 socket_path: str | None = None, timeout: float = TIMEOUT):
        if socket_name is None and socket_path is None:
            socket_path = os.environ.get("TMA_SOCKET_PATH") or None
        self.bin = bin
        self.socket_name = socket_name
        self.socket_path = socket_path
        self.timeout = timeout
        self.spawns = 0
        self._gen: str | None = None  # the generation file's path, once asked
        #: answers this process learned by trying a form on this server (a release that
        #: refuses it), so it asks once: form -> works
        self.behaves: dict[str, bool] = {}

    def argv(self, *args: str) -> list[str]:
        base = [self.bin, "-u"]
        if self.socket_name:
            base += ["-L", self.socket_name]
        elif self.socket_path:
            base += ["-S", self.socket_path]
        return base + list(args)

    def flags(self) -> list[str]:
        """The socket flags a spawned `tma` child needs to reach the same server."""
        if self.socket_name:
            return ["--socket-name", self.socket_name]
        if self.socket_path:
            return ["--socket-path", self.socket_path]
        return []

    def _spawn(self, argv: list[str], stdin: bytes | None,
               writes: bool = True) -> tuple[int, str, str]:
        return self._finish(self._begin(argv, stdin), writes)

    def _begin(self, argv: list[str], stdin: bytes | None) -> spawn.Begun:
        self.spawns += 1
        try:
            return spawn.begin(argv, stdin)
        except FileNotFoundError:
            raise NotInstalled(
                f"tmux binary {self.bin!r} not found: install tmux (3.2 or newer) "
                "or point TMA_TMUX_BIN / [tmux] bin at it"
            ) from None

    def _finish(self, begun: spawn.Begun, writes: bool) -> tuple[int, str, str]:
        try:
            rc, out, err = spawn.finish(begun, self.timeout)
        except spawn.SpawnTimeout:
            raise Timeout(f"tmux did not answer within {self.timeout:g}s") from None
        finally:
            if writes:  # after the write (a failed or timed-out one may still have landed)
                self.touch_generation()
        return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def begin(self, *args: str, writes: bool = True) -> Pending:
        """`run` in two halves: the command starts now and `Pending.result()` reads its
        answer (what `run` would return or raise), so tmux answers while this process
        does other work."""
        return Pending(self, self._begin(self.argv(*args), None), writes)

    def socket_file(self) -> str:
        """This server's socket path as `tma status` spells it (tma.core.paths)."""
        from tma.core.paths import socket_file

        return socket_file(self.socket_name, self.socket_path, os.environ, os.path.realpath)

    def touch_generation(self) -> None:
        """Mark that tma may have written to this server: the generation file gets a new
        mtime, which ends any status-line answer made before it. No file, no answer to
        end: nothing is created here (`tma status` creates it when it keeps one)."""
        if self._gen is None:
            from tma.core.paths import here

            self._gen = here().status_gen(self.socket_file())
        import time

        t = time.time_ns()
        try:
            os.utime(self._gen, ns=(t, t), follow_symlinks=False)
        except OSError:
            pass

    def run(self, *args: str, writes: bool = True) -> str:
        """Run one command line (may contain `;` separators). Raise on failure.
        `writes=False`: a pure read, which leaves the generation file alone."""
        rc, out, err = self._spawn(self.argv(*args), None, writes)
        if rc != 0:
            raise classify(err)
        return out

    def source(self, lines: list[str]) -> tuple[str, str]:
        """Run many command lines in one spawn via `source-file -`.

        A line that fails when it runs (a pane gone) does not stop later lines (within
        one line, `;` still stops at the first failure). A line that does not parse
        (a usage error) stops the whole file on 3.2a, so none may be sent. Returns
        (stdout, stderr); raises only when the server itself is unreachable.
        """
        return self.begin_source(lines).result()

    def begin_source(self, lines: list[str]) -> PendingSource:
        """`source` in two halves: the lines go to tmux now, `result()` reads the answer."""
        data = ("\n".join(lines) + "\n").encode()
        return PendingSource(self, self._begin(self.argv("source-file", "-"), data)
                             if lines else None)


class Pending:
    """A command `Server.begin` started; `result()` once."""

    def __init__(self, server: Server, begun: spawn.Begun, writes: bool) -> None:
        self.server, self.begun, self.writes = server, begun, writes

    def result(self) -> str:
        rc, out, err = self.server._finish(self.begun, self.writes)
        if rc != 0:
            raise classify(err)
        return out


class PendingSource:
    """A command file `Server.begin_source` sent; `result()` once: (stdout, stderr), or
    NoServer / ProtocolMismatch."""

    def __init__(self, server: Server, begun: spawn.Begun | None) -> None:
        self.server, self.begun = server, begun

    def result(self) -> tuple[str, str]:
        if self.begun is None:
            return "", ""
        rc, out, err = self.server._finish(self.begun, True)
        if rc != 0:
            exc = classify(err)
            if isinstance(exc, (NoServer, ProtocolMismatch)):
                raise exc
        return out, err


def quote(value: str) -> str:
    """Quote one argument for a tmux command line read by `source-file`.

    Double quotes with `\\`, `"` and `$` escaped; line breaks and NUL (which would end
    or cut the command line) are dropped.
    """
    clean = value.replace("\n", "").replace("\r", "").replace("\0", "")
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'

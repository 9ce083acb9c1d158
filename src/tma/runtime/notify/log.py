"""What notifications leave on disk: the `[notify] log` lines and the one failure record.

A command that cannot start, exits non-zero, dies of a signal or outlives its timeout
leaves one record per tmux server, `<runtime dir>/<key>.notify-error` (newest wins;
the key is the server's, as its daemon's files are named: tma.runtime.daemon_files);
its next clean exit removes it, and that server's `tma doctor` shows a standing one.
The runtime dir is shared by all of the user's tmux servers, so a record names its
server by where it lies: a process says once which server it rings for (`scope_to`:
the daemon, the hook path, notify-test), and one that cannot tell writes the unkeyed
`notify-error`, which no server's doctor reports as its own. Every write here is
silent on failure: the hook path must never fail and never print.
"""

from __future__ import annotations

import os

from tma.core.paths import socket_key as server_key
from tma.runtime.notify.note import Note, dumps, log_record, to_bytes

FAILURE_FILE = "notify-error"
#: the socket path of the tmux server this process rings for (None: it cannot tell)
_scope: str | None = None


def scope_to(socket_path: str | None) -> None:
    """Name the tmux server this process rings for: its failure records are that
    server's (one process rings for one server: the daemon, a hook, notify-test)."""
    global _scope
    _scope = socket_path or None


def scope() -> str | None:
    return _scope


def now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


def runtime_dir() -> str:
    """tma's runtime directory (tma.core.paths: $XDG_RUNTIME_DIR/tma, else a per-user
    tma-<uid> under the temp dir), created 0700 on write."""
    from tma.core.paths import here

    return here().runtime_dir


def _private_dir() -> str | None:
    """The runtime directory, created 0700; None when it is not the user's alone
    (a symlink, or a shared temp dir where someone else made tma-<uid> first):
    tma.runtime.rundir."""
    from tma.runtime import rundir

    try:
        return rundir.make(runtime_dir())
    except rundir.RuntimeDirError:
        return None


def failure_name(socket_path: str | None = None) -> str:
    """`<key>.notify-error` of the server (this process's scope when not given), or the
    unkeyed `notify-error` when there is none."""
    sock = socket_path if socket_path is not None else _scope
    if not sock:
        return FAILURE_FILE
    return f"{server_key(sock)}.{FAILURE_FILE}"


def failure_path(socket_path: str | None = None) -> str:
    return os.path.join(runtime_dir(), failure_name(socket_path))


def record_failure(command: str, reason: str, at: int | None = None,
                   socket_path: str | None = None) -> None:
    """Write the server's failure record (newest wins; socket_path: this process's scope
    when not given). Silent on any error."""
    try:
        d = _private_dir()
        if d is None:
            return
        path = os.path.join(d, failure_name(socket_path))
        tmp = f"{path}.{os.getpid()}.tmp"
        doc = {"at": int(now_ms() if at is None else at), "reason": reason, "command": command}
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, to_bytes(dumps(doc) + "\n"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except Exception:
        pass


def clear_failure(socket_path: str | None = None) -> None:
    try:
        os.unlink(failure_path(socket_path))
    except Exception:
        pass


def outcome(command: str, ok: bool, reason: str, at: int | None = None) -> None:
    """A finished command's mark: a clean exit clears the record, anything else sets it."""
    if ok:
        clear_failure()
    else:
        record_failure(command, reason, at)


def last_failure(socket_path: str | None = None) -> dict | None:
    """The standing failure record {at, reason, command} of the server at socket_path
    (this process's scope when not given), or None (for tma doctor); never one from a
    runtime dir that is not the user's alone (its text would be anybody's)."""
    from tma.runtime import rundir

    if rundir.problem(runtime_dir()) is not None:
        return None
    try:
        with open(failure_path(socket_path), encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return None
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    at = doc.get("at")
    return {
        "at": at if isinstance(at, int) and not isinstance(at, bool) else 0,
        "reason": str(doc.get("reason", "")),
        "command": str(doc.get("command", "")),
    }


def append_log(path: str, note: Note, at: int) -> None:
    append_log_checked(path, note, at)


def append_log_checked(path: str, note: Note, at: int) -> tuple[str, str]:
    """Append the note's line: (the expanded path, "" or why it failed). Never raises."""
    try:
        from tma.core.paths import here

        path = here().expand(path)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of blocking the
        # daemon's loop or an agent's hook; a regular file is unaffected
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
        try:
            os.write(fd, to_bytes(dumps(log_record(note, at)) + "\n"))
        finally:
            os.close(fd)
    except Exception as exc:
        return path, getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return path, ""

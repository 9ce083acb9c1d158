"""What notifications leave on disk: the `[notify] log` lines and the one failure record.

A command that cannot start, exits non-zero, dies of a signal or outlives its timeout
leaves one record, `<runtime dir>/notify-error` (newest wins); its next clean exit
removes it, and `tma doctor` shows a standing one. Every write here is silent on
failure: the hook path must never fail and never print.
"""

from __future__ import annotations

import os

from tma.runtime.notify.note import Note, dumps, log_record, to_bytes

FAILURE_FILE = "notify-error"


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


def failure_path() -> str:
    return os.path.join(runtime_dir(), FAILURE_FILE)


def record_failure(command: str, reason: str, at: int | None = None) -> None:
    """Write the one failure record (newest wins). Silent on any error."""
    try:
        d = _private_dir()
        if d is None:
            return
        path = os.path.join(d, FAILURE_FILE)
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


def clear_failure() -> None:
    try:
        os.unlink(failure_path())
    except Exception:
        pass


def outcome(command: str, ok: bool, reason: str, at: int | None = None) -> None:
    """A finished command's mark: a clean exit clears the record, anything else sets it."""
    if ok:
        clear_failure()
    else:
        record_failure(command, reason, at)


def last_failure() -> dict | None:
    """The standing failure record {at, reason, command}, or None (for tma doctor); never
    one from a runtime dir that is not the user's alone (its text would be anybody's)."""
    from tma.runtime import rundir

    if rundir.problem(runtime_dir()) is not None:
        return None
    try:
        with open(failure_path(), encoding="utf-8") as fh:
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

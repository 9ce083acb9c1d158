"""Where a tmux server's daemon keeps its files, and what they say (read side).

The daemon (tma.daemon, which nothing imports) creates and holds these; doctor and
`tma reload` only look. Both files live in the runtime dir (tma.core.paths) under a
key of the server's socket path: 16 hex digits of FNV-1a-64.

    <key>.lock   flock held for the daemon's life; body "<pid>\\nversion=<v>\\n"
    <key>.sock   unix socket: a connection gets one JSON status line, then EOF
    <key>.log    what a daemon started by `tma daemon --ensure` writes
"""

from __future__ import annotations

import fcntl
import os

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def key(socket_path: str) -> str:
    h = _FNV_OFFSET
    for byte in socket_path.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def runtime_dir() -> str:
    from tma.core.paths import Paths as Places

    return Places(os.environ).runtime_dir


class Files:
    def __init__(self, socket_path: str, directory: str | None = None) -> None:
        self.dir = directory or runtime_dir()
        self.key = key(socket_path)
        self.lock = os.path.join(self.dir, f"{self.key}.lock")
        self.sock = os.path.join(self.dir, f"{self.key}.sock")
        self.log = os.path.join(self.dir, f"{self.key}.log")


def held(path: str) -> bool:
    """Whether a live process holds the lock (a shared probe: it never blocks one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def read_record(path: str) -> tuple[int, str]:
    """(pid, version) from a lock file; (0, "") when absent or unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0, ""
    pid = int(lines[0]) if lines and lines[0].isdigit() else 0
    version = next((ln[8:] for ln in lines[1:] if ln.startswith("version=")), "")
    return pid, version


def read_status(path: str, timeout: float = 2.0) -> dict | None:
    """The running daemon's status document from its socket, or None."""
    import json
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            data = b""
            while not data.endswith(b"\n") and len(data) < 1 << 20:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        doc = json.loads(data)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def describe(socket_path: str, now_ms: int) -> dict:
    """What doctor reports: running (pid, version, uptime, counters) or not, and a
    lock or socket a dead daemon left (harmless: the next daemon takes them)."""
    from tma import __version__

    files = Files(socket_path)
    running = held(files.lock)
    pid, version = read_record(files.lock)
    status = read_status(files.sock) if running else None
    stale = [p for p in (files.lock, files.sock) if not running and os.path.exists(p)]
    started = status.get("started_at") if status else None
    return {
        "running": running,
        "pid": pid if running else None,
        "version": version if running else None,
        "version_skew": bool(running and version and version != __version__),
        "uptime_ms": max(0, now_ms - started) if isinstance(started, int) else None,
        "socket": files.sock,
        "answers": status is not None,
        "sessions": len(status.get("sessions", [])) if status else None,
        "watched_sessions": list(status.get("sessions", [])) if status else None,
        "last_error": (status.get("last_error") or None) if status else None,
        "stale": stale,
        "log": files.log,
    }

"""Where a tmux server's daemon keeps its files, and what they say (read side).

The daemon (tma.daemon, which nothing imports) creates and holds these; doctor and
`tma reload` only look. Both files live in the runtime dir (tma.core.paths) under a
key of the server's socket path: 16 hex digits of FNV-1a-64.

    <key>.lock   flock held for the daemon's life; body
                 "<pid>\\nversion=<v>\\npackage=<the tma package dir it runs>\\n"
    <key>.sock   unix socket: request/response (tma.daemon.server; TMAQ is the status
                 line, TMAH the transitions document, TMA1 a hook event, TMAS subscribe,
                 TMAF the fleet: the hosts' states and rows)
    <key>.log    what a daemon started by `tma daemon --ensure` writes
    <key>.failed an autostart whose `--ensure` failed (no retry for a minute)
    <key>.notify-error  the server's last failed notification (tma.runtime.notify.log)

Nothing here talks to a socket in a runtime dir that is not the user's alone, or to a
listener that is not the user's (tma.runtime.rundir).
"""

from __future__ import annotations

import fcntl
import os


def key(socket_path: str) -> str:
    from tma.core.paths import socket_key as fnv

    return fnv(socket_path)


def runtime_dir() -> str:
    from tma.core.paths import here

    return here().runtime_dir


class Files:
    def __init__(self, socket_path: str, directory: str | None = None) -> None:
        self.dir = directory or runtime_dir()
        self.key = key(socket_path)
        self.lock = os.path.join(self.dir, f"{self.key}.lock")
        self.sock = os.path.join(self.dir, f"{self.key}.sock")
        self.log = os.path.join(self.dir, f"{self.key}.log")
        self.failed = os.path.join(self.dir, f"{self.key}.failed")


def held(path: str) -> bool:
    """Whether a live process holds the lock (a shared probe: it never blocks one, and
    a FIFO or symlink planted in its place neither blocks nor is followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
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
    pid, version, _package = read_identity(path)
    return pid, version


def read_identity(path: str) -> tuple[int, str, str]:
    """(pid, version, package dir) from a lock file; empty values when absent or
    unreadable (a daemon older than the package line records no package)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
        with open(fd, encoding="utf-8", errors="replace") as fh:
            lines = fh.read(4096).splitlines()
    except OSError:
        return 0, "", ""
    pid = int(lines[0]) if lines and lines[0].isdigit() else 0
    version = next((ln[8:] for ln in lines[1:] if ln.startswith("version=")), "")
    package = next((ln[8:] for ln in lines[1:] if ln.startswith("package=")), "")
    return pid, version, package


def this_tma() -> str:
    """Which installed tma this process runs: the real path of its tma package
    directory (a pipx venv, a checkout's src/). With the version, what a daemon must
    share with the tma that finds it, or be replaced (`daemon --ensure`)."""
    import tma

    return os.path.dirname(os.path.realpath(tma.__file__))


def is_current(version: str | None, package: str | None) -> bool:
    """Does a daemon that reports this version and package run this very tma? A
    daemon that does not report its package is older than the report: not current."""
    from tma import __version__

    if not version or not package:
        return False
    return version == __version__ and os.path.realpath(package) == this_tma()


def _ask(path: str, request: bytes, timeout: float):
    """A connected socket that has sent `request`, or None (no daemon answers, or the
    dir, the socket or its listener is not the user's)."""
    import socket

    from tma.runtime import rundir

    if not rundir.socket_ok(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        if not rundir.peer_ok(s):
            s.close()
            return None
        s.sendall(request)
    except OSError:
        s.close()
        return None
    return s


def _read_all(s, cap: int) -> bytes:
    data = b""
    with s:
        while len(data) <= cap:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


def read_status(path: str, timeout: float = 2.0) -> dict | None:
    """The running daemon's status document from its socket, or None."""
    import json

    s = _ask(path, b"TMAQ", timeout)
    if s is None:
        return None
    try:
        doc = json.loads(_read_all(s, 1 << 20))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_fleet(path: str, timeout: float = 2.0) -> dict | None:
    """The hosts' states and rows the daemon's long-lived links keep (TMAF), or None (no
    daemon answers, or one from before the fleet)."""
    import json

    s = _ask(path, b"TMAF", timeout)
    if s is None:
        return None
    try:
        doc = json.loads(_read_all(s, 64 << 20))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("hosts"), list) else None


def read_history(path: str, timeout: float = 2.0) -> dict | None:
    """The daemon's ring of recent transitions (`tma debug transitions`), or None."""
    import json

    s = _ask(path, b"TMAH", timeout)
    if s is None:
        return None
    try:
        data = _read_all(s, (1 << 20) + 5)
        size = int.from_bytes(data[1:5], "little")
        if data[:1] != b"\x13" or len(data) != 5 + size:
            return None
        doc = json.loads(data[5:])
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def forget(socket_path: str | None, directory: str | None = None) -> tuple[list[str], int]:
    """`tma uninstall`: remove what this tmux server's stopped daemon left in the runtime
    dir (its log, failure mark, last failed notification, stale lock and socket; a live
    daemon's files stay) and its status line's last answer and generation file, then
    the dir when it is empty. Only in a runtime dir of the user's alone. Other servers'
    daemons (the same user's other tmux servers share the dir) keep their files: (what
    was removed, how many files of other servers' daemons stay)."""
    from tma.runtime import rundir

    directory = directory or runtime_dir()
    if rundir.refused(directory):
        return [], 0
    try:
        names = os.listdir(directory)
    except OSError:
        return [], 0
    live = {n[:-5] for n in names if n.endswith(".lock")
            and held(os.path.join(directory, n))}
    mine = key(socket_path) if socket_path else None

    def daemon_file(name: str) -> bool:
        stem, dot, ext = name.partition(".")
        return bool(dot) and ext in ("log", "failed", "lock", "sock", "notify-error")

    def status_file(name: str) -> bool:  # the status line's last answer and generation
        return name.partition(".")[2] in ("status", "gen")

    ours = [n for n in names if n.partition(".")[0] == mine and (
        daemon_file(n) and mine not in live or status_file(n))]
    others = sum(1 for n in names if daemon_file(n) and n.partition(".")[0] != mine)
    return remove(directory, ours), others


def remove(directory: str, names: list[str]) -> list[str]:
    """Unlink each of `names` in `directory` (one that will not go stays), then the
    directory when that left it empty (tma's cache folder too). The names removed."""
    removed = []
    for name in names:
        try:
            os.unlink(os.path.join(directory, name))
            removed.append(name)
        except OSError:
            pass
    try:
        os.rmdir(directory)
    except OSError:
        pass
    return removed


def describe(socket_path: str, now_ms: int) -> dict:
    """What doctor reports: running (pid, version, uptime, counters) or not, and a
    lock or socket a dead daemon left (harmless: the next daemon takes them)."""
    from tma import __version__
    from tma.runtime import rundir

    files = Files(socket_path)
    refused = rundir.refused(files.dir)
    running = not refused and held(files.lock)  # nothing read from a dir not ours alone
    pid, version, package = read_identity(files.lock) if not refused else (0, "", "")
    status = read_status(files.sock) if running else None
    stale = [p for p in (files.lock, files.sock)
             if not running and not refused and os.path.exists(p)]
    started = status.get("started_at") if status else None
    return {
        "running": running,
        "pid": pid if running else None,
        "version": version if running else None,
        # another version, or the same one from another install (a deleted venv's)
        "version_skew": bool(running and version
                             and (version != __version__ or not is_current(version, package))),
        "package": (package or None) if running else None,
        "uptime_ms": max(0, now_ms - started) if isinstance(started, int) else None,
        "socket": files.sock,
        "answers": status is not None,
        "sessions": len(status.get("sessions", [])) if status else None,
        "watched_sessions": list(status.get("sessions", [])) if status else None,
        "last_error": (status.get("last_error") or None) if status else None,
        "config_loaded_at": status.get("config_loaded_at") if status else None,
        "stale": stale,
        "log": files.log,
        "refused": refused,
    }

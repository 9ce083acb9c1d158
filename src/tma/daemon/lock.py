"""One daemon per tmux server: the runtime dir, the lock and the socket path.

Both files live in the private runtime dir (mode 0700) under a key derived from the
server's socket path (16 hex digits of FNV-1a-64), so two servers never share a
daemon and one server never gets two. The lock is an `flock` held for the daemon's
whole life, so it dies with the process: a lock file left by a `kill -9`ed daemon
is just a file, and the next daemon takes it. Its body records the pid and version.
"""

from __future__ import annotations

import fcntl
import os

from tma import __version__

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


class RuntimeDirError(Exception):
    """The runtime dir exists but is not private to this user."""


def key(socket_path: str) -> str:
    h = _FNV_OFFSET
    for byte in socket_path.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def runtime_dir() -> str:
    """$XDG_RUNTIME_DIR/tma, else tma-<uid> under the temp dir (tma.core.paths)."""
    from tma.core.paths import Paths as Places

    return Places(os.environ).runtime_dir


def private_dir() -> str:
    """The runtime dir, created 0700; refused when another user owns it or it is open
    to others (a socket there would accept their connections)."""
    from tma.core.paths import private_dir_ok

    d = runtime_dir()
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.stat(d)
    if st.st_uid != os.getuid():
        raise RuntimeDirError(f"tma: runtime dir {d} belongs to another user")
    if not private_dir_ok(st.st_mode, st.st_uid, os.getuid()):
        os.chmod(d, 0o700)
    return d


class Paths:
    def __init__(self, socket_path: str, directory: str | None = None) -> None:
        self.dir = directory or runtime_dir()
        self.key = key(socket_path)
        self.lock = os.path.join(self.dir, f"{self.key}.lock")
        self.sock = os.path.join(self.dir, f"{self.key}.sock")
        self.log = os.path.join(self.dir, f"{self.key}.log")


def try_lock(path: str, patience: float = 0.0) -> int | None:
    """The lock file's fd with the lock held, or None when a live daemon holds it.

    A daemon removes its lock file on the way out, so the file locked here may have
    been unlinked in between; a lock on a file no longer at the path guards nothing,
    so it is dropped and the path opened again. `patience`: keep trying that long,
    because a `held()` probe holds the lock for an instant."""
    import time

    deadline = time.monotonic() + patience
    for _ in range(8):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                time.sleep(0.01)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    return None


def held(path: str) -> bool:
    """Whether a live process holds the lock (a missing file: nobody)."""
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


def record(fd: int) -> None:
    """Write `<pid>\\nversion=<version>\\n` into the held lock file."""
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"{os.getpid()}\nversion={__version__}\n".encode())


def read_record(path: str) -> tuple[int, str]:
    """(pid, version) from a lock file; (0, "") when unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0, ""
    pid = int(lines[0]) if lines and lines[0].isdigit() else 0
    version = next((ln[8:] for ln in lines[1:] if ln.startswith("version=")), "")
    return pid, version

"""One daemon per tmux server: the private runtime dir and the lock (write side).

Where the files are and how to read them is tma.runtime.daemon_files (doctor and
`tma reload` read them too): keyed by the server's socket path, so two servers never
share a daemon and one server never gets two. The lock is an `flock` held for the daemon's
whole life, so it dies with the process: a lock file left by a `kill -9`ed daemon
is just a file, and the next daemon takes it. Its body records the pid and version.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time

from tma import __version__
from tma.runtime import daemon_files, rundir
from tma.runtime.rundir import RuntimeDirError  # noqa: F401 - raised by private_dir


def runtime_dir() -> str:
    return daemon_files.runtime_dir()


def private_dir() -> str:
    """The runtime dir, created 0700; RuntimeDirError when it is a symlink, another
    user's, or open to others (a socket there would accept their connections, and the
    lock, log and socket would land where they point): tma.runtime.rundir.make."""
    return rundir.make(runtime_dir())


def try_lock(path: str, patience: float = 0.0) -> int | None:
    """The lock file's fd with the lock held, or None when a live daemon holds it.

    A daemon removes its lock file on the way out, so the file locked here may have
    been unlinked in between; a lock on a file no longer at the path guards nothing,
    so it is dropped and the path opened again. `patience`: keep trying that long,
    because a `held()` probe holds the lock for an instant."""
    deadline = time.monotonic() + patience
    for _ in range(8):
        # never through a symlink, never onto a FIFO or device planted at the path
        # (the runtime dir is checked to be the user's own, so only the user could)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                     | os.O_NONBLOCK, 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"the daemon's lock {path} is not a regular file")
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


def record(fd: int) -> None:
    """Write `<pid>\\nversion=<version>\\npackage=<tma package dir>\\n` into the held
    lock file: which tma this daemon runs, for `ensure` to replace one that is not the
    installed tma any more (tma.runtime.daemon_files.is_current)."""
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"{os.getpid()}\nversion={__version__}\n"
                 f"package={daemon_files.this_tma()}\n".encode())

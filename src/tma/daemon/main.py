"""`tma daemon`: the foreground daemon (the lifecycle from outside, --ensure, --stop,
--restart and `tma reload`, is tma.runtime.daemon_control).

`run` takes the lock (held by a live daemon: say so, exit 0), records pid and version
in it, serves until the server exits or a signal arrives, removes the socket. A daemon
waits for a predecessor of another server instance to let go of the lock.
"""

from __future__ import annotations

import os
import time

from tma.daemon import lock
from tma.daemon.loop import Daemon
from tma.runtime import daemon_files
from tma.runtime.daemon_control import ENSURE_WAIT, log, private, server_instance, serves
from tma.runtime.notify import log as notify_log
from tma.tmux.adapter import NoServer


def run(server, cfg, manifest_dir: str | None, config_path: str | None = None) -> int:
    """The foreground daemon. Exit 0 also when another daemon already runs or there
    is no server (nothing to watch is not a failure of the daemon)."""
    try:
        socket_path, server_pid, instance = server_instance(server)
    except NoServer:
        log("tma daemon: no tmux server running; nothing to watch")
        return 0
    if not private():
        return 1
    paths = daemon_files.Files(socket_path)
    notify_log.scope_to(socket_path)  # what this daemon's rings fail is this server's
    fd = lock.try_lock(paths.lock, patience=0.2)
    deadline = time.monotonic() + ENSURE_WAIT
    while fd is None and not serves(paths, instance, 0.2) \
            and time.monotonic() < deadline:
        # the holder does not serve this server: the daemon of the server this one
        # replaced, on its way out (or one starting, which answers soon): wait
        fd = lock.try_lock(paths.lock, patience=0.2)
    if fd is None:
        pid, _version = daemon_files.read_record(paths.lock)
        log(f"tma daemon: already running for {socket_path} (pid {pid or '?'})")
        return 0
    try:
        lock.record(fd)
        log(f"tma daemon: pid {os.getpid()} watching {socket_path}")
        return Daemon(server, cfg, manifest_dir, paths, server_pid, log,
                      config_path=config_path, instance=instance).serve()
    finally:
        try:
            os.unlink(paths.lock)  # still ours: nobody else can hold it while we do
        except FileNotFoundError:
            pass
        os.close(fd)

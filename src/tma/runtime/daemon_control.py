"""The daemon's lifecycle, from the outside: ensure, stop, restart, reload, running.

`ensure` starts one detached (a new session, null stdin, output to the log file in
the runtime dir) unless the lock is held, then waits until some daemon holds it. Two
`ensure`s racing both spawn; the flock lets one daemon through and the other exits at
once, so one daemon runs.

A daemon serves one server instance (`#{pid}:#{start_time}`, in its status document
as `server`): a server replaced at the same socket (its last session killed, a new
one started) still has the old daemon holding the lock for a moment, on its way out.
`ensure` starts a new daemon unless the one that answers serves this instance.

A daemon records which tma it runs (version and package directory, in its lock and
its status document). `ensure` trusts only a daemon of this very tma: one left from
an older version or another install (a venv pipx has since replaced or removed) is
stopped and replaced. `stop` (SIGTERM, SIGKILL after 5 s) waits until the lock is
free; `restart` is stop then ensure.

Here, under the runtime, so that the surfaces reach it through the Session: the
daemon itself (tma.daemon) is a leaf nothing imports, and only `tma daemon` in the
foreground runs it.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from tma import __version__
from tma.runtime import daemon_files, procs, rundir
from tma.tmux import control, read, spawn
from tma.tmux.adapter import NoServer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.runtime.daemon_files import Files
    from tma.tmux.adapter import Server

ENSURE_WAIT = 5.0


def server_instance(server: Server) -> tuple[str, str, str]:
    """(socket path, server pid, instance): the instance is `<pid>:<start_time>`, which
    tells a server apart from the one it replaced at the same socket. NoServer raises."""
    path, pid, start = read.server_values(server, ("socket_path", "pid", "start_time"))
    if not pid:
        raise NoServer("no server facts")
    return path, pid, f"{pid}:{start}"


def serves(paths: Files, instance: str, timeout: float = 0.5) -> bool | None:
    """Whether the daemon answering on the socket serves this server instance; None
    when none answers (starting, or on its way out). A daemon that does not say (an
    older version) is taken at its word, as before."""
    status = daemon_files.read_status(paths.sock, timeout)
    if status is None:
        return None
    return bool(status.get("server", instance) == instance)


def _current(paths: Files) -> bool:
    """Does the daemon holding the lock run this very tma (version and package dir)?"""
    _pid, version, package = daemon_files.read_identity(paths.lock)
    return daemon_files.is_current(version, package)


def log(line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        sys.stderr.write(f"{stamp} {line.rstrip()}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # the terminal a foreground daemon logged to has gone: keep watching


def private() -> bool:
    """The runtime dir, created 0700 (tma.runtime.rundir.make): False after one line
    when it is a symlink, another user's, or open to others."""
    try:
        rundir.make(daemon_files.runtime_dir())
    except (rundir.RuntimeDirError, OSError) as exc:
        sys.stderr.write(f"tma daemon: {exc}\n")  # one line; the log when --ensure started it
        return False
    return True


def ensure(server: Server, child_argv: list[str]) -> int:
    """Start a detached daemon unless one runs for this server; exit 0 either way."""
    try:
        socket_path, _pid, instance = server_instance(server)
    except NoServer:
        return 0
    if not private():
        return 1
    paths = daemon_files.Files(socket_path)
    deadline = time.monotonic() + ENSURE_WAIT
    while daemon_files.held(paths.lock):
        if serves(paths, instance):
            if _current(paths):
                return 0
            # another tma's daemon (an older version, a deleted venv's): replaced, not
            # trusted; the new one takes the lock once the old one has let go
            log(f"tma daemon: replacing {_describe(paths)}: it is not this tma "
                 f"({__version__} at {daemon_files.this_tma()})")
            if not _terminate(paths):
                sys.stderr.write(f"tma daemon: the old daemon for {socket_path} did not "
                                 "stop\n")
                return 1
            break
        if time.monotonic() >= deadline:
            break  # spawn anyway: the new daemon waits for the lock itself
        # starting (no socket yet), or the replaced server's daemon on its way out
        time.sleep(0.05)
    log_fd = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
    try:
        child, _ = spawn.start(child_argv, stdout_fd=log_fd, stderr_fd=log_fd,
                               new_session=True)
    finally:
        os.close(log_fd)
    deadline = time.monotonic() + ENSURE_WAIT
    exited = False
    while time.monotonic() < deadline:
        if daemon_files.held(paths.lock) and serves(paths, instance) and _current(paths):
            return 0  # answering (a killed daemon's socket file may still be there)
        if not exited:
            exited = os.waitpid(child, os.WNOHANG)[0] != 0
        if exited and not daemon_files.held(paths.lock):
            break  # it failed, and no other daemon is starting either
        time.sleep(0.02)
    if daemon_files.held(paths.lock):
        return 0
    sys.stderr.write(f"tma daemon: the daemon did not start (see {paths.log})\n")
    return 1


def running(server: Server) -> str | None:
    """This server's daemon when one runs or is starting (a live process holds the
    lock), described; None when none does."""
    found = _holder(server)
    return _describe(found[1]) if found is not None and found[1] is not None else None


def _holder(server: Server) -> tuple[str, Files | None] | None:
    """(socket path, this server's daemon files when a live process holds the lock,
    else None); None when no server runs."""
    try:
        socket_path, _pid = control.server_facts(server)
    except NoServer:
        return None
    paths = daemon_files.Files(socket_path)
    held = not rundir.refused(paths.dir) and daemon_files.held(paths.lock)
    return socket_path, paths if held else None


def _describe(paths: Files) -> str:
    pid, version, package = daemon_files.read_identity(paths.lock)
    return (f"daemon pid {pid or '?'} (tma {version or '?'}"
            + (f" at {package})" if package else ", which does not say where it runs from)"))


STOP_WAIT = 5.0


def _terminate(paths: Files) -> bool:
    """SIGTERM the daemon holding the lock, wait until the lock is free (SIGKILL after
    STOP_WAIT s); True when it is. The pid is the one the lock's holder recorded, and
    is signalled only while the lock is held (a live daemon holds it for its whole
    life and its record names itself); a daemon that answers on its socket must
    report the same pid."""
    for sig, wait in ((signal.SIGTERM, STOP_WAIT), (signal.SIGKILL, 2.0)):
        if not daemon_files.held(paths.lock):
            return True
        pid = daemon_files.read_record(paths.lock)[0]
        status = daemon_files.read_status(paths.sock, 0.5)
        if not pid or pid == os.getpid() or (status is not None
                                             and status.get("pid") not in (None, pid)):
            return False  # cannot tell which process holds it: signal nobody
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            return False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            # the daemon unlinks its lock file on the way out, before the interpreter
            # has finished exiting: stopped means the lock is free AND the process gone
            if not daemon_files.held(paths.lock) and not procs.running(pid):
                return True
            time.sleep(0.02)
    return not daemon_files.held(paths.lock)


def stop(server: Server) -> int:
    """`tma daemon --stop`: stop this server's daemon (SIGTERM, then SIGKILL after 5 s)
    and wait until it has let go of its lock. Nothing running is not a failure."""
    found = _holder(server)
    if found is None:
        sys.stderr.write("tma daemon: no tmux server running; no daemon to stop\n")
        return 0
    socket_path, paths = found
    if paths is None:
        sys.stderr.write(f"tma daemon: no daemon running for {socket_path}\n")
        return 0
    what = _describe(paths)
    if not _terminate(paths):
        sys.stderr.write(f"tma daemon: could not stop {what} (see {paths.log})\n")
        return 1
    sys.stderr.write(f"tma daemon: stopped {what}\n")
    return 0


def restart(server: Server, child_argv: list[str]) -> int:
    """`tma daemon --restart`: stop this server's daemon (if one runs), start a new one."""
    rc = stop(server)
    if rc != 0:
        return rc
    rc = ensure(server, child_argv)
    who = running(server) if rc == 0 else None
    if who:
        sys.stderr.write(f"tma daemon: started {who}\n")
    return rc


def reload(server: Server) -> int:
    """SIGHUP the daemon of this server and report what it did. No daemon: a no-op."""
    try:
        socket_path, _pid = control.server_facts(server)
    except NoServer:
        sys.stderr.write("tma reload: no tmux server running; no daemon to reload\n")
        return 0
    paths = daemon_files.Files(socket_path)
    before = daemon_files.read_status(paths.sock) if daemon_files.held(paths.lock) else None
    pid = daemon_files.read_record(paths.lock)[0]
    if before is None or not pid or before.get("pid") != pid:
        sys.stderr.write("tma reload: no daemon running for this server\n")
        return 0
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        now = daemon_files.read_status(paths.sock)
        if now is None:
            break
        if now["reloads"] > before["reloads"]:
            sys.stderr.write(f"tma: daemon {pid} reloaded its config and manifests\n")
            return 0
        if now["reload_errors"] > before["reload_errors"]:
            sys.stderr.write(f"tma reload: {now['last_error']}\n")
            return 1
        time.sleep(0.02)
    sys.stderr.write(f"tma reload: daemon {pid} did not answer (see {paths.log})\n")
    return 1

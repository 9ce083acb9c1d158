"""Run one child process with a deadline, without importing subprocess.

`subprocess` costs ~10 ms of import on the hot paths (`tma status` from every
status line, `tma event` from every hook); posix_spawn plus a poll loop is enough.
"""

from __future__ import annotations

import os
import select
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class SpawnTimeout(Exception):
    """The child outlived its deadline and was killed; what it wrote until then."""

    stdout = b""
    stderr = b""


# A long-lived caller (the daemon) keeps answering its own clients while a child runs:
# a function naming the fds to watch and a callback, polled with the child's pipes by
# spawns made on the thread that set them (the daemon answers hooks during its tmux
# spawns instead of after them).
_SideT = tuple["Callable[[], list[int]]", "Callable[[int], None]", int]
_side: _SideT | None = None


def set_side(fds: Callable[[], list[int]] | None,
             callback: Callable[[int], None] | None = None) -> None:
    """Poll the fds FDS() names during this thread's spawns and call CALLBACK(fd) when
    one is readable (FDS is asked again after each call); None clears it. The callback
    must not spawn (it is not polled inside itself)."""
    global _side
    if fds is None:
        _side = None
        return
    import _thread

    assert callback is not None
    _side = (fds, callback, _thread.get_ident())


class _Side:
    """The side channel inside one spawn: which of its fds are registered."""

    def __init__(self, side: _SideT, poller: select.poll) -> None:
        self.side, self.poller = side, poller
        self.fds: set[int] = set()
        self.sync()

    def sync(self) -> None:
        try:
            want = set(self.side[0]())
        except Exception:  # noqa: BLE001 - the caller's own failure must not fail this spawn
            want = set()
        for fd in self.fds - want:
            self.poller.unregister(fd)
        for fd in want - self.fds:
            self.poller.register(fd, select.POLLIN)
        self.fds = want

    def ready(self, fd: int, event: int) -> None:
        global _side
        if event & (select.POLLNVAL | select.POLLERR):
            self.poller.unregister(fd)  # closed under us: not polled again here
            self.fds.discard(fd)
            return
        _side = None  # not polled inside itself
        try:
            self.side[1](fd)
        except Exception:  # noqa: BLE001 - the caller's own failure must not fail this spawn
            pass
        finally:
            _side = self.side
        self.sync()


def _own_side(poller: select.poll) -> _Side | None:
    """The side channel, registered with POLLER, when this thread set it."""
    side = _side
    if side is None:
        return None
    import _thread

    if side[2] != _thread.get_ident():
        return None
    return _Side(side, poller)


def run(argv: list[str], stdin: bytes | None = None, timeout: float = 3.0,
        env: dict[str, str] | None = None, new_group: bool = False) -> tuple[int, bytes, bytes]:
    """Run argv; return (returncode, stdout, stderr). Raises FileNotFoundError, SpawnTimeout.
    `new_group`: as start()'s; a timeout then ends the whole group (kill_group)."""
    return finish(begin(argv, stdin, env, new_group), timeout)


#: A child begun and not yet read: (pid, stdin, its stdin's write end, stdout, stderr,
#: new_group).
Begun = tuple[int, "bytes | None", "int | None", int, int, bool]


def begin(argv: list[str], stdin: bytes | None = None, env: dict[str, str] | None = None,
          new_group: bool = False) -> Begun:
    """run()'s first half: the child started with its pipes (raises FileNotFoundError),
    and as much of `stdin` written as the pipe takes without waiting (all of a tmux
    command file: the child can work before finish()). Its output waits in the pipes
    (and the child, once they are full) until finish()."""
    in_r, in_w = os.pipe() if stdin is not None else (None, None)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions: list[tuple[int | str, ...]] = [
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    if in_r is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
        if fd is not None and fd > 2:
            actions.append((os.POSIX_SPAWN_CLOSE, fd))
    try:
        pid = os.posix_spawnp(argv[0], argv, env if env is not None else os.environ,
                              file_actions=actions, **_group(new_group))
    except BaseException:
        for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
            if fd is not None:
                os.close(fd)
        raise
    os.close(out_w)
    os.close(err_w)
    if in_r is not None:
        os.close(in_r)
    if in_w is not None and stdin:
        os.set_blocking(in_w, False)
        try:
            stdin = stdin[os.write(in_w, stdin):]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            stdin = b""  # the child is gone: finish() reads what it said
        if not stdin:
            os.close(in_w)
            in_w = None
    return pid, stdin, in_w, out_r, err_r, new_group


def finish(begun: Begun, timeout: float = 3.0) -> tuple[int, bytes, bytes]:
    """run()'s second half: (returncode, stdout, stderr) within `timeout` from now.
    Raises SpawnTimeout."""
    pid, stdin, in_w, out_r, err_r, new_group = begun
    return _communicate(pid, stdin, in_w, out_r, err_r, timeout, new_group)


def _group(new_group: bool) -> dict[str, Any]:
    """posix_spawn's keywords for a child leading its own process group, with SIGPIPE
    and SIGXFSZ back at their defaults (Python ignores them, a shell command expects
    them); {} otherwise."""
    if not new_group:
        return {}
    import signal  # only a group leader pays for it (the hot paths never start one)

    return {"setpgroup": 0, "setsigdef": [s for s in (getattr(signal, "SIGPIPE", None),
                                                      getattr(signal, "SIGXFSZ", None))
                                          if s is not None]}


def _communicate(pid: int, stdin: bytes | None, in_w: int | None, out_r: int, err_r: int,
                 timeout: float, new_group: bool = False) -> tuple[int, bytes, bytes]:
    deadline = time.monotonic() + timeout
    poller = select.poll()
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    open_fds = {out_r, err_r}
    poller.register(out_r, select.POLLIN)
    poller.register(err_r, select.POLLIN)
    side = _own_side(poller)
    pending = memoryview(stdin or b"")  # empty (falsy) when there is nothing to send
    if in_w is not None:
        if pending:
            os.set_blocking(in_w, False)
            poller.register(in_w, select.POLLOUT)
            open_fds.add(in_w)
        else:
            os.close(in_w)
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SpawnTimeout()
            for fd, _event in poller.poll(left * 1000):
                if side is not None and fd in side.fds:
                    side.ready(fd, _event)
                    continue
                if fd == in_w:
                    try:
                        n = os.write(fd, pending[:65536])
                    except (BrokenPipeError, BlockingIOError) as exc:
                        n = 0 if isinstance(exc, BlockingIOError) else len(pending)
                    pending = pending[n:]
                    if not pending:
                        poller.unregister(fd)
                        os.close(fd)
                        open_fds.discard(fd)
                    continue
                data = os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    open_fds.discard(fd)
    except SpawnTimeout as exc:
        if new_group:
            kill_group(pid)
        else:
            try:
                os.kill(pid, SIGKILL)  # a tmux client: nothing of its own to end
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        for fd in open_fds:
            os.close(fd)
        exc.stdout, exc.stderr = b"".join(chunks[out_r]), b"".join(chunks[err_r])
        raise
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks[out_r]), b"".join(chunks[err_r])


def start(argv: list[str], *, stdin_pipe: bool = False, stdout_fd: int | None = None,
          stderr_fd: int | None = None, new_session: bool = False, new_group: bool = False,
          env: dict[str, str] | None = None) -> tuple[int, int | None]:
    """Start a child that outlives this call: (pid, write end of its stdin pipe or None).

    stdin is a pipe held by the caller (`stdin_pipe`) or /dev/null; stdout and stderr
    go to the given fds, else /dev/null. `new_session`: the child leads its own
    session (setsid), so it survives the caller's terminal and process group.
    `new_group`: the child leads its own process group (kill_group ends it and all it
    started) and gets SIGPIPE and SIGXFSZ back at their defaults (Python ignores them,
    a shell command expects them). Raises OSError when it cannot start.
    """

    in_r, in_w = os.pipe() if stdin_pipe else (None, None)
    actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = []
    if in_r is not None:
        actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    for target, fd in ((1, stdout_fd), (2, stderr_fd)):
        if fd is None:
            actions.append((os.POSIX_SPAWN_OPEN, target, os.devnull, os.O_WRONLY, 0))
        else:
            actions.append((os.POSIX_SPAWN_DUP2, fd, target))
    for fd in (in_r, in_w):
        if fd is not None:
            actions.append((os.POSIX_SPAWN_CLOSE, fd))
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ if env is None else env,
                              file_actions=actions, setsid=new_session, **_group(new_group))
    except BaseException:
        for fd in (in_r, in_w):
            if fd is not None:
                os.close(fd)
        raise
    if in_r is not None and in_w is not None:
        os.close(in_r)
        os.set_inheritable(in_w, False)
    return pid, in_w


# ------------------------------------------------------------------ the one kill policy
#
# Every child tma gives a deadline (a notify command, an action, its supervisor's child)
# leads its own group (start(new_group=True)) and ends the same way: SIGTERM to the group,
# up to KILL_GRACE_S to go, then SIGKILL to the group, then reaped.

KILL_GRACE_S = 1.0
SIGTERM, SIGKILL = 15, 9  # POSIX numbers; the signal module costs an enum import


def kill_group(pid: int, grace: float = KILL_GRACE_S) -> None:
    """End PID's process group (else PID alone): SIGTERM, up to GRACE seconds, SIGKILL;
    then reap it. A loop that must not sleep passes grace=0."""
    for sig, wait_s in ((SIGTERM, grace), (SIGKILL, 0.0)):
        try:
            os.killpg(pid, sig)
        except OSError:
            try:
                os.kill(pid, sig)
            except OSError:
                break  # gone already: reap below
        deadline = time.monotonic() + wait_s
        pause = 0.005
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    return
            except ChildProcessError:
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def wait_or_kill(pid: int, timeout: float, tend: Callable[[], None] | None = None,
                 grace: float = KILL_GRACE_S) -> int | None:
    """PID's wait status; None when it outlived TIMEOUT seconds and kill_group ended it.
    TEND (feeding its stdin, say) is called between polls."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        if tend is not None:
            tend()
        if time.monotonic() >= deadline:
            kill_group(pid, grace)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def become(argv: list[str]) -> None:
    """Replace this process with argv (the terminal, the pid and the exit status go with
    it): how `tma attach` hands a person's terminal to a tmux client. Never returns;
    raises FileNotFoundError when argv[0] is not there."""
    os.execvp(argv[0], argv)

"""Whether tma may use its runtime dir and a daemon socket in it (docs/explanation/security.md).

The runtime dir (tma.core.paths: `$XDG_RUNTIME_DIR/tma`, else `$TMPDIR/tma-<uid>`) is
where a server's daemon listens and where hooks hand it every payload (the prompt
text); in a shared temp dir anybody may create `tma-<uid>` first, or plant a symlink
by that name. So every user of it checks, before anything goes in or comes out:

- the dir: a real directory (lstat: a symlink is refused, never followed), ours
  (owner == our uid), no group/other access. One lstat.
- a socket in it: a socket, ours. One lstat. On Linux the connected peer's uid
  (SO_PEERCRED) must be ours too: whoever listens is one of our own processes.

Only the daemon creates the dir: `make` mkdirs it 0700 and then checks it like
any other, and never chmods an existing path. A hook or the status line that finds a
dir or socket it does not trust says nothing and does the work itself (`tma event`
stamps, `tma status` reads); the daemon refuses to start with one line.

`problem`, `socket_ok` and `peer_ok` are defined in tma.runtime.handoff (lean: `os` and
`sys` only), which the hot paths of `tma event` and `tma status` load anyway.
"""

from __future__ import annotations

import os

# the checks every client makes live in handoff, which the hot paths load anyway (one
# more module costs `tma event` and `tma status` a few hundred microseconds)
from tma.runtime.handoff import peer_ok, problem, socket_ok

__all__ = ["RuntimeDirError", "make", "peer_ok", "problem", "refused", "socket_ok"]


class RuntimeDirError(Exception):
    """The runtime dir is not the user's alone (or cannot be made): the one-line reason,
    without a `tma ...:` prefix (the caller knows which command it is)."""


def make(path: str) -> str:
    """The runtime dir, created 0700 when missing, then checked like any other: a dir
    someone else made, a symlink or one open to others raises RuntimeDirError (its
    message is one line for the user). An existing path is never chmodded; only a dir
    this call just made is fixed up, through an fd checked to be that dir."""
    created = False
    try:
        os.mkdir(path, 0o700)
        created = True
    except FileExistsError:
        pass
    except FileNotFoundError:  # the parent ($TMPDIR, $XDG_RUNTIME_DIR) is missing
        try:
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            os.mkdir(path, 0o700)
            created = True
        except FileExistsError:
            pass
        except OSError as exc:
            raise RuntimeDirError(f"cannot create the runtime dir {path}: "
                                  f"{exc.strerror or exc}") from None
    except OSError as exc:
        raise RuntimeDirError(f"cannot create the runtime dir {path}: "
                              f"{exc.strerror or exc}") from None
    if created:
        _owner_bits(path)  # a umask may have taken the owner's own bits away
    why = problem(path)
    if why is not None:
        raise RuntimeDirError(f"refusing the runtime dir {path}: {why} "
                              "(remove it, or set XDG_RUNTIME_DIR to a directory of yours)")
    return path


def _owner_bits(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # not ours to fix: problem() says why
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and st.st_mode & 0o7777 != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def refused(path: str) -> str | None:
    """For a reader that only looks (doctor): the one-line reason the runtime dir at
    `path` would be refused, None when it is fine or does not exist yet."""
    if not os.path.lexists(path):
        return None
    why = problem(path)
    return None if why is None else f"refusing the runtime dir {path}: {why}"

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

Lean on purpose: `os` and `sys` only (the hot paths of `tma event` and `tma status`).
"""

from __future__ import annotations

import os
import sys

S_IFMT = 0o170000
S_IFDIR = 0o040000
S_IFLNK = 0o120000
S_IFSOCK = 0o140000


class RuntimeDirError(Exception):
    """The runtime dir is not the user's alone (or cannot be made): the one-line reason,
    without a `tma ...:` prefix (the caller knows which command it is)."""


def problem(path: str) -> str | None:
    """Why `path` is not a runtime dir to use; None when it is ours alone. One lstat."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return exc.strerror or str(exc)
    kind = st.st_mode & S_IFMT
    if kind == S_IFLNK:
        return "it is a symlink"
    if kind != S_IFDIR:
        return "it is not a directory"
    uid = os.getuid()
    if st.st_uid != uid:
        return f"it belongs to uid {st.st_uid}, not to you (uid {uid})"
    if st.st_mode & 0o077:
        return f"it is open to other users (mode {st.st_mode & 0o7777:04o}, want 0700)"
    return None


def socket_ok(path: str) -> bool:
    """A daemon socket to connect to: in a runtime dir we trust, a socket, ours. Two
    lstats (the dir, the socket); False when either is absent."""
    if problem(os.path.dirname(path)) is not None:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return st.st_mode & S_IFMT == S_IFSOCK and st.st_uid == os.getuid()


def peer_ok(sock) -> bool:
    """The process at the other end of a connected unix socket runs as us (Linux's
    SO_PEERCRED: struct ucred {pid, uid, gid}). Where the kernel does not say, True:
    the lstat checks of `socket_ok` stand alone."""
    import _socket

    opt = getattr(_socket, "SO_PEERCRED", None)
    if opt is None:
        return True
    try:
        cred = sock.getsockopt(_socket.SOL_SOCKET, opt, 12)
    except OSError:
        return False
    return len(cred) >= 8 and int.from_bytes(cred[4:8], sys.byteorder) == os.getuid()


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

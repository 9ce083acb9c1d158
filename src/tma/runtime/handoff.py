"""`tma event`'s handoff: give the event to this server's daemon, if one answers.

The hot path of every agent hook, so it is lean on purpose: `os`, `sys` and `_socket` only
(no `socket`, whose enum import costs more than the whole exchange), no json, no
tmux spawn. The daemon's socket is found from the tmux socket path the hook would
talk to (tma.runtime.daemon_files keys it the same way), the event goes over as one
frame (tma.daemon.server), and the answer is one byte. Anything but an ACK within
the deadline (no daemon, a stale socket, a refusal, a hung or stopped daemon, a NAK)
returns False, and the hook stamps the event itself: the daemon is never required.
Nothing is sent unless the runtime dir and the socket are ours and the process that
accepted the connection runs as us (tma.runtime.rundir): a payload is the user's prompt.
"""

from __future__ import annotations

import os
import sys

from tma.core.paths import socket_key  # the daemon's file names (daemon_files)

DEADLINE_S = 0.5  # connect + send + the daemon's answer; then the hook stamps itself
PAYLOAD_CAP = 1 << 20
SMALL_CAP = 4096
ACK = b"\x06"
WAKE_DEADLINE_S = 0.1
_found: str | None = None  # what offer() learnt: None never asked, "" no daemon to wake


# ---------------------------------------------------------------- trust (tma.runtime.rundir)
_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFLNK = 0o120000
_S_IFSOCK = 0o140000


def problem(path: str) -> str | None:
    """Why `path` is not a runtime dir to use; None when it is ours alone. One lstat."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return exc.strerror or str(exc)
    kind = st.st_mode & _S_IFMT
    if kind == _S_IFLNK:
        return "it is a symlink"
    if kind != _S_IFDIR:
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
    return st.st_mode & _S_IFMT == _S_IFSOCK and st.st_uid == os.getuid()


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


def socket_choice(a: dict[str, str], env=os.environ) -> tuple[str, str]:
    """The tmux server a hook talks to, in its one order: --socket-name, --socket-path,
    TMA_HOOK_SOCKET (a name), $TMUX's socket path. ("name", N), ("path", P), or ("", "")
    for the adapter's default (TMA_SOCKET_PATH, else tmux's own default). `tma event`
    builds its Server from it and tmux_socket keys the daemon by it."""
    if a.get("socket-name"):
        return "name", a["socket-name"]
    if a.get("socket-path"):
        return "path", a["socket-path"]
    if env.get("TMA_HOOK_SOCKET"):
        return "name", env["TMA_HOOK_SOCKET"]
    tmux = env.get("TMUX", "")
    if tmux:
        return "path", tmux.split(",", 1)[0]
    return "", ""


def tmux_socket(a: dict[str, str], env=os.environ) -> str:
    """The socket path of the server `tma event` would talk to (socket_choice's, then
    TMA_SOCKET_PATH, then the default), spelled as tmux's #{socket_path} spells it."""
    kind, name = socket_choice(a, env)
    if kind == "path":
        return name
    if not kind:
        if env.get("TMA_SOCKET_PATH"):
            return env["TMA_SOCKET_PATH"]
        name = "default"
    base = (env.get("TMUX_TMPDIR") or "/tmp").split(":", 1)[0]
    return os.path.join(os.path.realpath(f"{base}/tmux-{os.getuid()}"), name)


def daemon_socket(socket_path: str, places=None) -> str:
    """<runtime dir>/<key>.sock, as tma.runtime.daemon_files.Files names it."""
    if places is None:
        from tma.core.paths import here

        places = here()
    return os.path.join(places.runtime_dir, socket_key(socket_path) + ".sock")


def scope(a: dict[str, str], places=None) -> str:
    """The config file and manifest set this caller would read, and the tma version
    (the daemon NAKs a frame whose scope is not its own). An explicit --manifest-dir is
    that directory alone; without one it is the bundled set plus the user's directory,
    so the two are spelled apart even when they name the same directory."""
    if places is None:
        from tma.core.paths import here

        places = here()
    from tma import __version__

    manifests = ("dir:" + os.path.abspath(a["manifest-dir"])) if a.get("manifest-dir") \
        else ("bundled+" + os.path.abspath(places.manifest_dir))
    return (os.path.abspath(places.config_file(a.get("config") or None)) + "\n"
            + manifests + "\n" + __version__)


def frame(fields: tuple[str, ...]) -> bytes:
    out = [b"TMA1"]
    for value in fields:
        raw = value.encode("utf-8", "replace")
        out.append(len(raw).to_bytes(4, "little"))
        out.append(raw)
    return b"".join(out)


def offer(a: dict[str, str], agent: str, kind: str, pane: str, payload: str,
          now_ms: int) -> bool:
    """True when the daemon acknowledged the event (and so stamps it)."""
    if "TMA_NOTIFY_CMD" in os.environ or "TMA_NOTIFY_FROM_EVENT" in os.environ:
        return False  # notification settings of this hook's own: the daemon's env differs
    if len(agent) > SMALL_CAP or len(kind) > SMALL_CAP or len(pane) > SMALL_CAP \
            or len(payload) > PAYLOAD_CAP // 4 and len(payload.encode()) > PAYLOAD_CAP:
        return False
    from tma.core.paths import here

    places = here()
    global _found
    path = daemon_socket(tmux_socket(a), places)
    if not socket_ok(path):
        _found = ""
        return False
    answer = _exchange(path, frame((pane, agent, kind, payload, str(now_ms), scope(a, places))),
                       DEADLINE_S)
    _found = path if answer else ""  # no answer: a stopped daemon is not tried twice
    return answer == ACK


def _exchange(path: str, data: bytes, limit: float) -> bytes:
    """One request, the first byte of the answer (an ACK or a NAK); b"" on any failure."""
    return _ask(path, data, limit)[:1]


def woken(a: dict[str, str]) -> None:
    """This hook stamped a pane itself: wake the subscribers of the daemon that NAKed the
    event or, for an event never offered (the reply lane), of the one there is."""
    if _found == "":
        return
    path = _found or daemon_socket(tmux_socket(a))
    if socket_ok(path):
        _exchange(path, b"TMAW", WAKE_DEADLINE_S)


SEGMENT_DEADLINE_S = 0.3


def ask_segment(g_args: dict[str, str], socket_path: str) -> str | None:
    """`tma status`'s shortcut: the status segment the daemon keeps for this server,
    rendered with the same config (the daemon NAKs another scope, a stale segment or a
    config file edited since it loaded). None on any doubt: the caller runs its cycle."""
    from tma.core.paths import here

    places = here()
    path = daemon_socket(socket_path, places)
    if not socket_ok(path):
        return None
    raw = scope(g_args, places).encode("utf-8", "replace")
    answer = _ask(path, b"TMAT" + len(raw).to_bytes(4, "little") + raw, SEGMENT_DEADLINE_S)
    if len(answer) < 5 or answer[:1] != ACK:
        return None
    n = int.from_bytes(answer[1:5], "little")
    body = answer[5:]
    if len(body) != n:
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _ask(path: str, data: bytes, limit: float) -> bytes:
    """One request, the answer (the daemon closes after it); nothing is sent to a
    listener that is not us (peer_ok). At the deadline, or on an error once sending is
    done, what was read so far: the callers judge it (an ACK read before a late close is
    still the daemon's word that it took the event)."""
    import _socket
    import time

    deadline = time.monotonic() + limit
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    chunks: list[bytes] = []
    try:
        s.settimeout(limit)
        s.connect(path)
        if not peer_ok(s):
            return b""
        s.sendall(data)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(chunks)
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return b"".join(chunks)
    finally:
        s.close()

"""The runtime dir and the daemon socket against another local user (issue 18, 1 and 2).

Without $XDG_RUNTIME_DIR the runtime dir is $TMPDIR/tma-<uid>, in a directory every
user can write to. Here TMPDIR is a fresh sticky world-writable dir (like /tmp) and
$XDG_RUNTIME_DIR is unset; the attacker is a second real user this module creates
(useradd), running as a forked child that drops to that user (setgroups/setgid/setuid).
Each attack is checked on `tma event` (a hook: the payload, which holds the prompt
text, must never reach a listener that is not the user's, and the hook still stamps
the pane itself, silently), on `tma status` (never the listener's text: the local
read) and on `tma daemon --ensure` (refuses with one line; touches nothing).

Creating a user needs root: elsewhere the module skips, saying why, unless
TMA_REQUIRE_SECOND_USER (set by .ci/run) or CI is set, where it fails instead.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path

import pytest

from tests.helpers.daemon import watched
from tma.core.paths import socket_key
from tma.runtime import handoff

SECRET = "SECRET-PROMPT-7d1c"  # in every hook payload: it must never reach a listener
FOREIGN = "#[fg=red]PWNED-BY-ANOTHER-USER"  # what a planted daemon answers `tma status`


class User:
    def __init__(self, name: str) -> None:
        import pwd

        self.name = name
        entry = pwd.getpwnam(name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid


def _no_user(reason: str):
    if os.environ.get("TMA_REQUIRE_SECOND_USER") or os.environ.get("CI"):
        pytest.fail(f"a second user is required here (TMA_REQUIRE_SECOND_USER/CI) but {reason}")
    pytest.skip(f"needs a second local user: {reason}")


@pytest.fixture(scope="module")
def other():
    """A throwaway system user, deleted afterwards."""
    if os.geteuid() != 0:
        _no_user("creating one needs root (useradd)")
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if not useradd or not userdel:
        _no_user("useradd/userdel are not installed")
    name = f"tmasec{uuid.uuid4().hex[:8]}"
    res = subprocess.run([useradd, "--system", "--no-create-home", "--user-group",
                          "--shell", "/usr/sbin/nologin", name],
                         capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        _no_user(f"useradd {name} failed: {res.stderr.strip()}")
    try:
        yield User(name)
    finally:
        subprocess.run([userdel, name], capture_output=True, timeout=30)


@pytest.fixture
def shared():
    """A fresh sticky world-writable dir, like /tmp (its parents must be reachable by
    the other user, so not under pytest's private tmp dir)."""
    d = tempfile.mkdtemp(prefix="tma-sec-", dir="/tmp")
    os.chmod(d, 0o1777)
    try:
        yield Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


class Listener:
    """A process listening on a unix socket that records what it is sent and answers
    like a daemon: an ACK to a hook event (so the hook stamps nothing), FOREIGN as the
    status segment. As `user` (forked, then setuid), or as us when user is None."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.pid = 0

    @property
    def received(self) -> bytes:
        path = self.log_dir / "received"
        return path.read_bytes() if path.exists() else b""

    @property
    def connections(self) -> int:
        path = self.log_dir / "connections"
        return len(path.read_bytes()) if path.exists() else 0

    def start(self, user: User | None, sock: Path, make_dir: Path | None = None,
              dir_mode: int = 0o700, fifo: Path | None = None) -> Listener:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 0
            try:
                os.close(r)
                if user is not None:
                    os.setgroups([])
                    os.setgid(user.gid)
                    os.setuid(user.uid)
                self.log_dir.mkdir(mode=0o755, exist_ok=True)
                if make_dir is not None:
                    make_dir.mkdir(mode=dir_mode)
                    os.chmod(make_dir, dir_mode)
                if fifo is not None:
                    os.mkfifo(fifo)  # an open for reading blocks until a writer comes
                self._serve(sock, w)
            except BaseException:  # noqa: BLE001 - report, then leave the forked child
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        ready, _, _ = select.select([r], [], [], 10)
        ok = ready and os.read(r, 1) == b"1"
        os.close(r)
        self.pid = pid
        assert ok, "the listener did not start"
        return self

    def _serve(self, sock: Path, ready_fd: int) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(sock))
        s.listen(16)
        os.write(ready_fd, b"1")
        os.close(ready_fd)
        while True:
            conn, _ = s.accept()
            with open(self.log_dir / "connections", "ab") as fh:
                fh.write(b".")
            conn.settimeout(0.05)
            data = b""
            try:
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            with open(self.log_dir / "received", "ab") as fh:
                fh.write(data)
            try:
                if data.startswith(b"TMAT"):
                    body = FOREIGN.encode()
                    conn.sendall(b"\x06" + len(body).to_bytes(4, "little") + body)
                elif data.startswith(b"TMAQ"):
                    conn.sendall(json.dumps({"pid": 1, "sessions": []}).encode())
                else:
                    conn.sendall(b"\x06")
            except OSError:
                pass
            conn.close()

    def stop(self) -> None:
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0


@pytest.fixture
def listeners():
    started: list[Listener] = []

    def make(log_dir: Path) -> Listener:
        lst = Listener(log_dir)
        started.append(lst)
        return lst

    yield make
    for lst in started:
        lst.stop()


class Scene:
    """One private server, its env (TMPDIR=shared, no XDG_RUNTIME_DIR) and the names."""

    def __init__(self, srv, shared: Path) -> None:
        self.srv = srv
        self.env = {k: v for k, v in srv.env.items() if k != "XDG_RUNTIME_DIR"}
        self.env["TMPDIR"] = str(shared)
        self.rundir = shared / f"tma-{os.getuid()}"
        tmux_socket = handoff.tmux_socket({"socket-name": srv.name}, self.env)
        self.sock = self.rundir / f"{socket_key(tmux_socket)}.sock"
        self.pane = srv.agent_pane()

    def tma(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "tma", "--socket-name", self.srv.name, "--manifest-dir",
                str(self.srv.manifests), *args]
        return subprocess.run(argv, capture_output=True, text=True,
                              env=dict(self.env, **(env or {})), timeout=30)

    def event(self) -> subprocess.CompletedProcess:
        payload = json.dumps({"session_id": "s1", "prompt": SECRET})
        argv = [sys.executable, "-m", "tma", "--socket-name", self.srv.name, "--manifest-dir",
                str(self.srv.manifests), "event", "--agent", "fake", "--kind", "Work",
                "--pane", self.pane]
        return subprocess.run(argv, input=payload, capture_output=True, text=True,
                              env=dict(self.env, TMA_HOOK_STRICT="1"), timeout=30)

    def status(self) -> str:
        res = self.tma("status")
        assert res.returncode == 0, res.stderr
        return res.stdout

    def check_clients(self, listener: Listener, *, may_connect: bool = False) -> None:
        """The hook hands the listener nothing and stamps the pane itself, silently; the
        status line shows the local read, never the listener's text."""
        res = self.event()
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
        assert SECRET.encode() not in listener.received
        assert b"TMA1" not in listener.received
        assert self.srv.option(self.pane, "@agent_state") == "working"  # the hook stamped it
        shown = self.status()
        assert "PWNED" not in shown
        # the local read: what it shows with a runtime dir holding nothing at all
        with tempfile.TemporaryDirectory() as empty:
            local = self.tma("status", env={"TMPDIR": empty})
        assert shown == local.stdout and "tma:working" in shown, (shown, local.stdout)
        assert listener.received == b""
        if not may_connect:
            assert listener.connections == 0


def _tree(d: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.lstat().st_mode, p.read_bytes() if p.is_file() else b"")
            for p in sorted(d.iterdir())}


def _ensure_refuses(scene: Scene, srv, tmp_path, why: str) -> None:
    """`tma daemon --ensure` and `tma daemon` refuse with one line naming the dir."""
    with watched(srv, tmp_path) as d:  # stops any daemon that started after all
        d.env = scene.env
        res = scene.tma("daemon", "--ensure")
        assert res.returncode == 1, (res.stdout, res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and f"refusing the runtime dir {scene.rundir}" in lines[0] \
            and why in lines[0], res.stderr
        fg = subprocess.run(d.argv(), env=scene.env, capture_output=True, text=True,
                            timeout=30)
        assert fg.returncode == 1 and len(fg.stderr.splitlines()) == 1, fg.stderr
        assert "refusing the runtime dir" in fg.stderr
        time.sleep(0.3)
        assert d.pids() == []


def test_a_dir_another_user_made_first_gets_no_payload_and_no_status_text(
        srv, shared, other, listeners, tmp_path):
    scene = Scene(srv, shared)
    lock = scene.sock.with_suffix(".lock")
    lst = listeners(shared / "atk").start(other, scene.sock, make_dir=scene.rundir, fifo=lock)
    assert scene.rundir.stat().st_uid == other.uid
    scene.check_clients(lst)
    before = {p.name for p in scene.rundir.iterdir()}
    _ensure_refuses(scene, srv, tmp_path, f"belongs to uid {other.uid}")
    assert {p.name for p in scene.rundir.iterdir()} == before
    # a surface that autostarts the daemon, and doctor, neither hang on the planted
    # FIFO nor report anything read from that dir
    srv.config.write_text("[daemon]\nautostart = true\n")
    assert "PWNED" not in scene.status()
    res = scene.tma("doctor", "--json")
    daemon = json.loads(res.stdout)["daemon"]
    assert daemon["running"] is False and daemon["stale"] == []
    assert daemon["refused"].endswith(f"it belongs to uid {other.uid}, not to you (uid {os.getuid()})")
    assert lst.received == b""


@pytest.mark.parametrize("owner", ["theirs", "ours"])
def test_a_symlinked_dir_is_never_followed(srv, shared, other, listeners, tmp_path, owner):
    """`ln -s /some/dir $TMPDIR/tma-<uid>`: the daemon neither chmods the target nor
    writes there, and no client talks to a socket there (even one of ours: the link
    may be swapped at any moment). `ours`: the link is the user's own, so only the
    no-symlink rule refuses it."""
    scene = Scene(srv, shared)
    target = shared / "target"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    (target / "keep.txt").write_text("the target's own file\n")
    if owner == "theirs":
        os.chown(target, other.uid, other.gid)
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(other.gid)
                os.setuid(other.uid)
                os.symlink(target, scene.rundir)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert scene.rundir.lstat().st_uid == other.uid
    else:
        scene.rundir.symlink_to(target)
    before = _tree(target), target.stat().st_mode, target.stat().st_uid
    _ensure_refuses(scene, srv, tmp_path, "symlink")
    assert (_tree(target), target.stat().st_mode, target.stat().st_uid) == before
    # a listener in the target: ours when the target is (only the link is wrong)
    lst = listeners(shared / "lst").start(other if owner == "theirs" else None, scene.sock)
    scene.check_clients(lst)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o755])
def test_a_dir_open_to_others_is_refused(srv, shared, other, listeners, tmp_path, mode):
    """Our own dir, but with group/other access: refused, never chmodded. The
    listener is ours, so only the dir's mode is wrong."""
    scene = Scene(srv, shared)
    scene.rundir.mkdir()
    os.chmod(scene.rundir, mode)
    lst = listeners(shared / "lst").start(None, scene.sock)
    scene.check_clients(lst)
    before = _tree(scene.rundir)
    _ensure_refuses(scene, srv, tmp_path, f"mode {mode:04o}")
    assert scene.rundir.stat().st_mode & 0o7777 == mode
    assert _tree(scene.rundir) == before


@pytest.mark.parametrize("file_owner", ["theirs", "ours"])
def test_another_users_socket_in_our_dir_gets_nothing(srv, shared, other, listeners,
                                                      file_owner):
    """A private dir of ours holding a socket another user listens on (moved in: only
    root could). `theirs`: the socket file is theirs (the lstat refuses it); `ours`: the
    file was chowned to us, so only the listener's credentials (SO_PEERCRED) tell."""
    if file_owner == "ours" and not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("no SO_PEERCRED on this platform: the socket's owner is all there is")
    scene = Scene(srv, shared)
    scene.rundir.mkdir(mode=0o700)
    os.chmod(scene.rundir, 0o700)
    atk = shared / "atk"
    lst = listeners(atk).start(other, atk / "planted.sock")
    os.rename(atk / "planted.sock", scene.sock)
    if file_owner == "ours":
        os.chown(scene.sock, os.getuid(), os.getgid())
    assert (scene.sock.lstat().st_uid == other.uid) == (file_owner == "theirs")
    scene.check_clients(lst, may_connect=file_owner == "ours")

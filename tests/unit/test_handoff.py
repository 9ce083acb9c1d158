"""The hook's handoff client and the daemon's frame parser agree on every byte, and the
client finds the daemon's socket exactly where tma.runtime.daemon_files puts it."""

from __future__ import annotations

import os

import pytest

from tma.daemon import server
from tma.runtime import daemon_files, handoff


def test_a_frame_round_trips_through_the_parser():
    fields = ("%3", "claude", "PostToolUse", '{"a":"é ☃"}', "1796160000000", "/c\n/m")
    data = handoff.frame(fields)
    assert data[:4] == b"TMA1"
    assert server.parse_event(data[4:]) == list(fields)
    for cut in range(4, len(data) - 1):  # every prefix is incomplete, none is an error
        assert server.parse_event(data[4:cut]) is None


@pytest.mark.parametrize("bad", [
    (server.SMALL_CAP + 1).to_bytes(4, "little"),  # a small field over its cap
    b"\x01\x00\x00\x00x" * 3 + (server.PAYLOAD_CAP + 1).to_bytes(4, "little"),
    b"\x02\x00\x00\x00\xff\xfe",  # not UTF-8
    handoff.frame(("%1", "a", "k", "p", "1", "s"))[4:] + b"!",  # trailing bytes
])
def test_bad_frames_are_refused(bad):
    with pytest.raises(server.Refused):
        server.parse_event(bad)


def test_the_socket_is_where_the_daemon_binds_it(tmp_path):
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "HOME": "/h"}
    from tma.core.paths import Paths, socket_key

    path = "/tmp/tmux-1000/work"
    files = daemon_files.Files(path, os.path.join(str(tmp_path), "tma"))
    assert handoff.daemon_socket(path, Paths(env)) == files.sock
    assert daemon_files.key(path) == socket_key(path) == files.key
    assert Paths(env).status_memo(path) == os.path.join(str(tmp_path), "tma",
                                                         files.key + ".status")


def test_the_tmux_socket_follows_the_hooks_server_choice(tmp_path):
    env = {"TMUX": "/s/tmux-1/x,123,0", "TMA_HOOK_SOCKET": "", "TMUX_TMPDIR": str(tmp_path)}
    assert handoff.tmux_socket({"socket-path": "/p/q"}, env) == "/p/q"
    assert handoff.tmux_socket({}, env) == "/s/tmux-1/x"
    real = os.path.realpath(tmp_path)
    assert handoff.tmux_socket({"socket-name": "n"}, env) == f"{real}/tmux-{os.getuid()}/n"
    assert handoff.tmux_socket({}, dict(env, TMA_HOOK_SOCKET="h")).endswith("/h")
    assert handoff.tmux_socket({}, {"TMA_SOCKET_PATH": "/z"}) == "/z"
    assert handoff.tmux_socket({}, {"TMUX_TMPDIR": str(tmp_path)}).endswith("/default")


def test_the_scope_names_the_config_and_manifests_the_hook_would_read():
    from tma import __version__
    from tma.core.paths import Paths

    env = {"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"}
    assert handoff.scope({}, Paths(env)) == \
        f"/cfg/tma/config.toml\nbundled+/cfg/tma/agents\n{__version__}"
    assert handoff.scope({"config": "/x.toml", "manifest-dir": "/m"}, Paths(env)) \
        == f"/x.toml\ndir:/m\n{__version__}"
    assert handoff.scope({}, Paths(dict(env, TMA_CONFIG="/t.toml"))).startswith("/t.toml\n")
    # the user's directory named explicitly is that directory alone: another set
    assert handoff.scope({"manifest-dir": "/cfg/tma/agents"}, Paths(env)) \
        != handoff.scope({}, Paths(env))


def test_no_daemon_is_no_handoff(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("TMA_NOTIFY_CMD", raising=False)
    assert handoff.offer({"socket-path": "/nowhere"}, "claude", "Stop", "%1", "{}", 1) is False


def test_an_ack_read_before_a_late_close_is_kept(tmp_path):
    """A daemon that ACKs and then keeps the connection open past the hook's deadline
    (busy, or a close that came late) took the event: the hook must not stamp it too.
    The exchange used to return nothing at the deadline, dropping the ACK it had read."""
    import socket
    import threading
    import time

    path = str(tmp_path / "d.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    done = threading.Event()

    def daemon() -> None:
        conn, _ = srv.accept()
        conn.recv(65536)
        conn.sendall(server.ACK)
        done.wait(5)  # holds the connection open past the deadline
        conn.close()

    t = threading.Thread(target=daemon)
    t.start()
    try:
        t0 = time.monotonic()
        got = handoff._exchange(path, handoff.frame(("%1", "a", "k", "p", "1", "s")), 0.3)
        assert time.monotonic() - t0 < 2
        assert got == server.ACK
    finally:
        done.set()
        t.join()
        srv.close()

"""tma.runtime.rundir: the runtime dir is made 0700 and used only when it is a real
directory of the user's alone; an existing one is never chmodded nor followed.
(Another user's dir and socket: tests/integration/test_runtime_dir_security.py.)"""

from __future__ import annotations

import os
import socket

import pytest

from tma.daemon import lock
from tma.runtime import rundir
from tma.runtime.notify import log as notify_log


def test_make_creates_it_0700_under_a_missing_parent(tmp_path):
    d = tmp_path / "missing" / "tma-7"
    old = os.umask(0o077)  # a umask that leaves the owner's bits alone
    try:
        assert rundir.make(str(d)) == str(d)
    finally:
        os.umask(old)
    assert d.stat().st_mode & 0o7777 == 0o700
    assert rundir.problem(str(d)) is None
    assert rundir.make(str(d)) == str(d)  # and again: it is there and fine


def test_a_umask_that_takes_the_owners_bits_is_undone_on_the_new_dir_only(tmp_path):
    d = tmp_path / "tma-7"
    old = os.umask(0o277)
    try:
        rundir.make(str(d))
    finally:
        os.umask(old)
    assert d.stat().st_mode & 0o7777 == 0o700


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701, 0o1777])
def test_an_existing_dir_open_to_others_is_refused_and_left_alone(tmp_path, mode):
    d = tmp_path / "tma-7"
    d.mkdir()
    os.chmod(d, mode)
    with pytest.raises(rundir.RuntimeDirError, match=f"open to other users \\(mode {mode:04o}"):
        rundir.make(str(d))
    assert d.stat().st_mode & 0o7777 == mode


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    os.chmod(target, 0o755)
    (target / "keep").write_text("x")
    link = tmp_path / "tma-7"
    link.symlink_to(target)
    with pytest.raises(rundir.RuntimeDirError, match="it is a symlink") as exc:
        rundir.make(str(link))
    assert "\n" not in str(exc.value) and str(link) in str(exc.value)
    assert target.stat().st_mode & 0o7777 == 0o755
    assert sorted(p.name for p in target.iterdir()) == ["keep"]
    assert rundir.socket_ok(str(link / "x.sock")) is False


def test_a_file_in_its_place_is_refused(tmp_path):
    f = tmp_path / "tma-7"
    f.write_text("")
    with pytest.raises(rundir.RuntimeDirError, match="not a directory"):
        rundir.make(str(f))


def test_the_daemon_refuses_what_it_used_to_chmod(tmp_path, monkeypatch):
    """The daemon's private_dir chmodded a dir of the user's open to others to 0700."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    d = tmp_path / f"tma-{os.getuid()}"
    d.mkdir()
    os.chmod(d, 0o755)
    with pytest.raises(lock.RuntimeDirError):
        lock.private_dir()
    assert d.stat().st_mode & 0o7777 == 0o755


def test_the_daemon_never_follows_a_symlink(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.chmod(target, 0o700)  # even a private dir of ours: a link may be swapped any time
    (tmp_path / f"tma-{os.getuid()}").symlink_to(target)
    with pytest.raises(lock.RuntimeDirError, match="symlink"):
        lock.private_dir()


def test_no_failure_record_through_a_symlink(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / f"tma-{os.getuid()}").symlink_to(target)
    notify_log.record_failure("false", "exit status 1", at=5)
    assert list(target.iterdir()) == []
    (target / notify_log.FAILURE_FILE).write_text('{"at": 1, "reason": "planted", "command": "x"}')
    assert notify_log.last_failure() is None


def test_a_socket_of_ours_in_a_dir_of_ours(tmp_path):
    d = tmp_path / "rt"
    rundir.make(str(d))
    path = d / "k.sock"
    assert rundir.socket_ok(str(path)) is False  # none yet
    path.write_text("")
    assert rundir.socket_ok(str(path)) is False  # a plain file is no socket
    path.unlink()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(path))
        s.listen(1)
        assert rundir.socket_ok(str(path)) is True
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.connect(str(path))
            assert rundir.peer_ok(c) is True  # we listen: our uid


def test_refused_says_nothing_of_a_missing_dir(tmp_path):
    assert rundir.refused(str(tmp_path / "none")) is None
    (tmp_path / "link").symlink_to(tmp_path)
    assert rundir.refused(str(tmp_path / "link")).endswith("it is a symlink")

"""The daemon's lock file (tma.daemon.lock): held for the daemon's life, never opened
through a symlink or onto anything but a regular file planted at its path."""

from __future__ import annotations

import os

import pytest

from tma.daemon import lock


def test_the_lock_is_taken_once(tmp_path):
    path = str(tmp_path / "d.lock")
    fd = lock.try_lock(path)
    assert fd is not None
    try:
        assert lock.try_lock(path) is None  # held: a second daemon does not get it
    finally:
        os.close(fd)
    fd = lock.try_lock(path)  # the holder gone, the next one takes it
    assert fd is not None
    os.close(fd)


def test_a_symlink_at_the_lock_path_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("precious\n")
    path = tmp_path / "d.lock"
    path.symlink_to(target)
    with pytest.raises(OSError):
        lock.try_lock(str(path))
    assert target.read_text() == "precious\n"
    dangling = tmp_path / "d2.lock"
    dangling.symlink_to(tmp_path / "created-through-the-link")
    with pytest.raises(OSError):
        lock.try_lock(str(dangling))
    assert not (tmp_path / "created-through-the-link").exists()


def test_a_fifo_at_the_lock_path_is_refused_at_once(tmp_path):
    path = tmp_path / "d.lock"
    os.mkfifo(path)
    with pytest.raises(OSError, match="not a regular file"):
        lock.try_lock(str(path))

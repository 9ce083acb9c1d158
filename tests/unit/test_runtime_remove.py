"""What uninstall clears: tma's cache entries and a runtime dir's leftovers, through
tma.runtime.daemon_files.remove (real files in a temp dir)."""

import os

from tma.runtime import cache, daemon_files


def test_remove_unlinks_the_names_then_an_emptied_dir(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.log").write_text("x")
    (d / "b.sock").write_text("x")
    assert daemon_files.remove(str(d), ["a.log", "b.sock", "gone.lock"]) == ["a.log", "b.sock"]
    assert not d.exists()


def test_remove_keeps_a_dir_that_still_holds_something(tmp_path):
    (tmp_path / "a.log").write_text("x")
    (tmp_path / "keep.txt").write_text("x")
    assert daemon_files.remove(str(tmp_path), ["a.log"]) == ["a.log"]
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_cache_clear_removes_only_its_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.put("titles", ("k",), {"v": 1})
    base = tmp_path / "tma"
    (base / "titles.marshal.123.tmp").write_text("")
    (base / "notes.txt").write_text("mine")
    assert sorted(cache.clear()) == ["titles.marshal", "titles.marshal.123.tmp"]
    assert os.listdir(base) == ["notes.txt"]
    (base / "notes.txt").unlink()
    assert cache.clear() == [] and not base.exists()


def test_forget_removes_this_servers_stopped_daemons_files_and_nothing_else(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    mine = daemon_files.key("/tmp/tmux-0/default")
    other = daemon_files.key("/tmp/tmux-0/work")
    for name in (f"{mine}.log", f"{mine}.failed", f"{mine}.lock", f"{mine}.sock",
                 f"{mine}.status", f"{mine}.gen", f"{other}.log", f"{other}.failed",
                 f"{other}.status", "other.txt"):
        (run / name).write_text("")
    removed, others = daemon_files.forget("/tmp/tmux-0/default", str(run))
    assert sorted(removed) == sorted(f"{mine}.{x}" for x in ("failed", "gen", "lock", "log",
                                                             "sock", "status"))
    assert others == 2  # another server's daemon's log and mark stay (and its answer)
    assert sorted(os.listdir(run)) == sorted([f"{other}.log", f"{other}.failed",
                                              f"{other}.status", "other.txt"])

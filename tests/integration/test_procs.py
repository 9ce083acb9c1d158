"""The process-table reader against the real system (and a fake procfs for edge cases)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tma.core.identity import PaneFacts, identify, normalize_comm
from tma.core.manifest import loads
from tma.runtime import procs

SLEEP = shutil.which("sleep") or "/bin/sleep"
LINUX_PROC = os.path.exists("/proc/self/stat")


@pytest.fixture
def spawn():
    """Start long-lived children; every one is killed and reaped at teardown."""
    children: list[subprocess.Popen] = []

    def start(argv: list[str], **kw) -> subprocess.Popen:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **kw)
        children.append(child)
        return child

    yield start
    for child in children:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=5)


def link(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.symlink_to(SLEEP)
    return str(path)


def wait_for(pid: int, comm: str, reader=procs.read_proc_table):
    """The table once `pid` shows `comm` (the exec may not have happened yet)."""
    deadline = time.monotonic() + 5
    while True:
        table = reader()
        assert table is not None
        proc = table.get(pid)
        if proc is not None and proc.comm == comm:
            return table, proc
        if time.monotonic() > deadline:
            pytest.fail(f"pid {pid} never showed comm {comm!r}: {proc}")
        time.sleep(0.01)


def test_table_contains_ourselves() -> None:
    table = procs.read_proc_table()
    assert table is not None
    me = table.get(os.getpid())
    assert me is not None
    assert me.ppid == os.getppid()
    assert me.pgid == os.getpgrp()
    parent = table.get(os.getppid())
    assert parent is None or me in table.subtree(parent.pid)


def test_symlink_named_claude_is_seen_as_claude(tmp_path: Path, spawn) -> None:
    child = spawn([link(tmp_path, "claude"), "30"])
    table, proc = wait_for(child.pid, "claude")
    assert proc.ppid == os.getpid()
    assert proc.pgid == os.getpgrp()
    assert child.pid in {p.pid for p in table.subtree(os.getpid())}
    # And it identifies, as a pane rooted at this test process would.
    claude = loads(
        "claude", 'min_engine_version = "0.1"\n[identity]\nprocess_names = ["claude"]\n[capture]\n'
    )
    got = identify(PaneFacts(os.getpid(), "python", ""), table, [claude])
    assert (got.agent, got.pid) == ("claude", child.pid)


def test_comm_with_space_and_paren(tmp_path: Path, spawn) -> None:
    child = spawn([link(tmp_path, "a b)c"), "30"])
    _, proc = wait_for(child.pid, "a b)c")
    assert proc.ppid == os.getpid()
    assert normalize_comm(proc.comm) == "a"


@pytest.mark.skipif(not LINUX_PROC, reason="needs /proc")
def test_comm_cut_at_15_chars(tmp_path: Path, spawn) -> None:
    child = spawn([link(tmp_path, "codex-aarch64-apple-darwin"), "30"])
    wait_for(child.pid, "codex-aarch64-a")


def test_ps_fallback_agrees(tmp_path: Path, spawn) -> None:
    if shutil.which("ps") is None:
        pytest.skip("no ps")
    child = spawn([link(tmp_path, "claude"), "30"])
    wait_for(child.pid, "claude")
    table = procs.read_ps()
    if table is None:
        pytest.skip("ps does not support -eo pid=,ppid=,pgid=,tpgid=,comm=")
    proc = table.get(child.pid)
    assert proc is not None and proc.ppid == os.getpid()
    assert normalize_comm(proc.comm) == "claude"
    me = table.get(os.getpid())
    assert me is not None and me.pgid == os.getpgrp()


PTY_SCRIPT = """
import os, sys
tty, root, agent = sys.argv[1:4]
os.setsid()
fd = os.open(tty, os.O_RDWR)  # a session leader opening a tty acquires it
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.execv(agent, [agent, "30"])
try:
    os.setpgid(pid, pid)
except PermissionError:  # the child has exec'd: it set its own group before that
    pass
os.tcsetpgrp(fd, pid)  # the agent's group owns the terminal now
os.execv(root, [root, "30"])
"""


@pytest.mark.skipif(not LINUX_PROC, reason="needs /proc")
def test_tpgid_names_the_foreground_group(tmp_path: Path, spawn) -> None:
    """A fake pane on its own pty: root `fakesh` hands the terminal to `claude`."""
    import pty

    leader, follower = pty.openpty()
    tty = os.ttyname(follower)
    os.close(follower)
    agent_pid = 0
    try:
        root = spawn(
            [sys.executable, "-c", PTY_SCRIPT, tty, link(tmp_path, "fakesh"),
             link(tmp_path, "claude")]
        )
        table, root_proc = wait_for(root.pid, "fakesh")
        deadline = time.monotonic() + 5
        while not (kids := [p for p in table.children(root.pid) if p.comm == "claude"]):
            assert time.monotonic() < deadline, "agent child never appeared"
            time.sleep(0.01)
            table = procs.read_proc_table()
        agent_pid = kids[0].pid
        assert kids[0].pgid == agent_pid
        assert root_proc.pgid == root.pid
        assert root_proc.tpgid == agent_pid
        claude = loads(
            "claude",
            'min_engine_version = "0.1"\n[identity]\nprocess_names = ["claude"]\n[capture]\n',
        )
        got = identify(PaneFacts(root.pid, "fakesh", ""), table, [claude])
        assert (got.agent, got.pid, got.foreground_is_agent) == ("claude", agent_pid, True)
    finally:
        if agent_pid:
            try:
                os.kill(agent_pid, 9)
            except ProcessLookupError:
                pass
        os.close(leader)


# ---------------------------------------------------------------- parsing, fake procfs


def test_parse_stat_handles_hostile_comm() -> None:
    data = b"4242 (a b) (c)) S 1 4242 4242 34816 4300 4194560 0 0 0\n"
    proc = procs.parse_stat(data)
    assert proc is not None
    assert (proc.pid, proc.ppid, proc.pgid, proc.tpgid) == (4242, 1, 4242, 4300)
    assert proc.comm == "a b) (c)"
    assert procs.parse_stat(b"") is None
    assert procs.parse_stat(b"12 (x) S 1") is None
    assert procs.parse_stat(b"12 (\xff\xfe) S 1 12 12 0 -1 0").comm == "\ufffd\ufffd"


def test_parse_ps_keeps_spaces_in_comm() -> None:
    text = (
        "    1     0     1    -1 /sbin/launchd\n"
        "  501     1   501   501 /Applications/Visual Studio Code.app/Contents/MacOS/Electron\n"
        "garbage line\n"
        "  777   501   777   501 /opt/homebrew/bin/codex\n"
    )
    rows = procs.parse_ps(text)
    assert [p.pid for p in rows] == [1, 501, 777]
    assert rows[1].comm.endswith("Code.app/Contents/MacOS/Electron")
    assert normalize_comm(rows[2].comm) == "codex"
    assert rows[2].tpgid == 501


def test_fake_procfs_skips_vanished_and_junk(tmp_path: Path) -> None:
    def stat(pid: int, body: str) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_bytes(body.encode())

    stat(1, "1 (init) S 0 1 1 0 -1 0")
    stat(10, "10 (bash) S 1 10 10 34816 20 0")
    stat(20, "20 (.claude-wrapped) S 10 20 10 34816 20 0")
    (tmp_path / "30").mkdir()  # vanished: no stat file
    stat(40, "not a stat line")
    (tmp_path / "self").mkdir()
    table = procs.read_proc_dir(str(tmp_path))
    assert sorted(p.pid for p in table) == [1, 10, 20]
    assert [p.pid for p in table.subtree(10)] == [10, 20]
    assert table.get(20).tpgid == 20 and table.get(20).pgid == 20


def test_read_subtree_walks_only_the_pane_tree(tmp_path):
    from tma.runtime.procs import read_subtree

    link = tmp_path / "claude"
    link.symlink_to("/bin/sleep")
    child = subprocess.Popen([str(link), "30"])
    try:
        import time

        deadline = time.monotonic() + 5
        while True:
            table = read_subtree(os.getpid())
            assert table is not None  # this kernel lists children
            if child.pid in table:
                break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert table.get(child.pid).comm == "claude"
        assert table.get(os.getpid()) is not None
        assert 1 not in table  # init is not in our subtree
    finally:
        child.kill()
        child.wait()



def test_running_is_alive_less_a_zombie():
    import subprocess
    import time

    from tma.runtime import procs

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert procs.running(child.pid) and procs.alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 5
        while procs.running(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        # exited, not reaped yet: a zombie exists (alive) but does not run
        assert procs.alive(child.pid) and not procs.running(child.pid)
    finally:
        child.wait()
    assert not procs.alive(child.pid) and not procs.running(child.pid)

"""The status line's last answer (tma.runtime.status_memo) on private servers: a
`tma status` after one that only read fresh stamps prints the same segment with no tmux
spawn (counted through a logging TMA_TMUX_BIN), and everything it rests on ends it —
a tma write, a pane opened or closed, an agent gone, an agent started in a shell, the
config, the clock — while a screen change no stamp records waits at most the freshness
window, as a fresh stamp's does."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tma.core.paths import Paths, socket_key


def _config(srv, freshness: int) -> None:
    srv.config.write_text(f"[fold]\nfreshness_secs = {freshness}\n")


def _counted(srv) -> tuple[dict, Path]:
    """A TMA_TMUX_BIN that logs every tmux process tma starts."""
    wrapper, log = srv.logging_tmux()
    return {"TMA_TMUX_BIN": str(wrapper)}, log


def _status(srv, env: dict | None = None) -> tuple[str, bool]:
    """(the segment, whether the last answer stood)."""
    res = srv.tma("--debug-timing", "status", check=True, env=env)
    return res.stdout, "the last answer stands" in res.stderr


def _kept(srv, env: dict | None = None) -> str:
    """Every pane stamped afresh, then a status run past the stampede second that keeps
    its answer; the segment."""
    _first(srv)
    srv.ls()
    srv.next_second()
    shown, stood = _status(srv, env)
    assert not stood and _memo(srv).exists()
    return shown


def _first(srv) -> None:
    """The first status run on a server keeps nothing: it makes the generation file
    that every later tma write touches."""
    srv.tma("status", check=True)
    assert _memo(srv).with_suffix(".gen").exists()


def _memo(srv) -> Path:
    sock = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    return Path(Paths(os.environ).runtime_dir) / f"{socket_key(sock)}.status"


def _idle_pane(srv) -> str:
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE\n")
    return pane


@pytest.mark.tmux_contract
def test_a_quiet_status_line_answers_again_with_no_tmux_spawn(srv):
    _config(srv, 30)
    _idle_pane(srv)
    _idle_pane(srv)
    env, log = _counted(srv)
    _kept(srv)
    before = log.read_text()
    shown, stood = _status(srv, env)
    assert stood and "○2" in shown, shown
    assert log.read_text() == before  # not one tmux process
    again, stood = _status(srv, env)
    assert stood and again == shown
    assert _memo(srv).exists()


def _stampede_status(srv):
    """A status run in the second of the ls before it (the stampede guard's case)."""
    for _ in range(5):
        _memo(srv).unlink(missing_ok=True)
        srv.next_second()
        srv.ls()
        res = srv.tma("--debug-timing", "status", check=True)
        if "stampede-skipped" in res.stderr:
            return res
    raise AssertionError("no status run fell in its ls's second in five tries")


def test_a_stampede_run_keeps_its_answer_when_every_stamp_is_fresh(srv):
    _config(srv, 30)
    _idle_pane(srv)
    _first(srv)
    res = _stampede_status(srv)
    shown, stood = _status(srv)
    assert stood and shown == res.stdout and "○1" in shown, res.stderr


def test_a_stampede_run_keeps_nothing_when_a_pane_went_unidentified(srv):
    _config(srv, 30)
    _idle_pane(srv)
    srv.shell_pane()  # no stamp: the stampede guard identifies no pane
    _stampede_status(srv)
    assert not _memo(srv).exists()
    assert not _status(srv)[1]


def test_a_hook_stamp_ends_the_answer(srv):
    _config(srv, 30)
    pane = _idle_pane(srv)
    _kept(srv)
    assert _status(srv)[1]
    srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", pane, check=True)
    shown, stood = _status(srv)
    assert not stood and "⚑1" in shown, shown


@pytest.mark.tmux_contract
def test_a_new_agent_pane_and_a_closed_one_end_the_answer(srv):
    _config(srv, 30)
    first = _idle_pane(srv)
    _kept(srv)
    assert _status(srv)[1]
    _idle_pane(srv)  # tmux's own change: no tma process wrote anything
    srv.next_second()  # (a run in the last poll's second would identify no new pane)
    shown, stood = _status(srv)
    assert not stood and "○2" in shown, shown
    srv.next_second()
    _status(srv)  # that run wrote the new pane's stamp: this one keeps the answer
    assert _status(srv)[1]
    srv.tmux("kill-pane", "-t", first)
    srv.next_second()
    shown, stood = _status(srv)
    assert not stood and "○1" in shown, shown


@pytest.mark.tmux_contract
def test_a_status_job_beside_it_does_not_end_the_answer(srv):
    """tmux's `#()` jobs are the server's children too: one running is not a new pane."""
    _config(srv, 30)
    _idle_pane(srv)
    _kept(srv)
    srv.tmux("run-shell", "-b", "sleep 5")
    srv.wait_for(lambda: _server_children(srv) > 1)
    shown, stood = _status(srv)
    assert stood and "○1" in shown


def _server_children(srv) -> int:
    pid = srv.tmux("display-message", "-p", "#{pid}").strip()
    return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())


def test_an_agent_that_exited_under_its_shell_ends_the_answer(srv):
    _config(srv, 30)
    pane = srv.shell_pane()
    srv.tmux("send-keys", "-t", pane, f"{srv.fake('fakeagent')} 100000", "Enter")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "fakeagent")
    srv.draw(pane, "FAKE-IDLE\n")
    _kept(srv)
    shown, stood = _status(srv)
    assert stood and "○1" in shown
    root = srv.display(pane, "#{pane_pid}")
    agent = int(Path(f"/proc/{root}/task/{root}/children").read_text().split()[0])
    os.kill(agent, signal.SIGKILL)
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") != "fakeagent")
    srv.next_second()
    shown, stood = _status(srv)
    assert not stood and "○1" not in shown, shown


def test_an_agent_started_in_a_shell_pane_ends_the_answer(srv):
    """The shell pane holds no stamp: the full run identifies it every time, and a new
    process in it is how an agent started there shows."""
    _config(srv, 30)
    _idle_pane(srv)
    shell = srv.shell_pane()
    _kept(srv)
    assert _status(srv)[1]
    srv.tmux("send-keys", "-t", shell, f"{srv.fake('fakeagent')} 100000", "Enter")
    srv.wait_for(lambda: srv.display(shell, "#{pane_current_command}") == "fakeagent")
    srv.draw(shell, "FAKE-BLOCKED\n")
    srv.next_second()
    shown, stood = _status(srv)
    assert not stood and "⚑1" in shown, shown


def test_a_config_edit_ends_the_answer(srv):
    _config(srv, 30)
    _idle_pane(srv)
    _kept(srv)
    assert _status(srv)[1]
    srv.config.write_text('[fold]\nfreshness_secs = 30\n[status.idle]\nglyph = "I"\n')
    shown, stood = _status(srv)
    assert not stood and "I1" in shown, shown


def test_a_screen_change_no_stamp_records_shows_within_the_freshness_window(srv):
    """What the memo cannot see waits as long as a fresh stamp's screen does: no longer
    than freshness_secs after the run that kept the answer."""
    _config(srv, 2)
    pane = _idle_pane(srv)
    _first(srv)
    srv.ls()
    kept_at = time.monotonic()
    res = srv.tma("--debug-timing", "status", check=True)
    assert "0 captures" in res.stderr, res.stderr
    srv.draw(pane, "FAKE-BLOCKED\n")
    while True:
        shown, stood = _status(srv)
        if "⚑1" in shown:
            break
        assert stood or time.monotonic() - kept_at < 2.5, "an old count past the window"
        assert time.monotonic() - kept_at < 10, "the blocked screen never showed"
        time.sleep(0.1)
    assert time.monotonic() - kept_at < 2 + 1.5  # the window, and a run or two after it


def test_freshness_zero_keeps_no_answer(srv):
    _config(srv, 0)
    _idle_pane(srv)
    srv.tma("status", check=True)
    srv.ls()
    srv.next_second()
    _status(srv)
    assert not _status(srv)[1]
    assert not _memo(srv).exists()


def test_a_damaged_memo_is_a_miss_never_an_error(srv):
    _config(srv, 30)
    _idle_pane(srv)
    shown = _kept(srv)
    memo = _memo(srv)
    for junk in (b"", b"tma-status-memo 1\nshort", b"\xff\xfe" * 40,
                 memo.read_bytes().replace(b"\n", b" ", 5)):
        memo.write_bytes(junk)
        again, stood = _status(srv)
        assert not stood and again == shown
        memo.unlink(missing_ok=True)


def test_a_memo_in_a_runtime_dir_open_to_others_is_not_read(srv):
    """A planted answer reaches tmux's status line (whose `#[...]` it styles): only a
    runtime dir of the user's alone is trusted, as for the daemon's socket."""
    _config(srv, 30)
    _idle_pane(srv)
    _kept(srv)
    memo = _memo(srv)
    text = memo.read_text()
    memo.write_text(text.rsplit("\n", 1)[0] + "\n#[fg=red]PLANTED")
    assert "PLANTED" in _status(srv)[0]  # ours: it is read (the test's own write)
    memo.write_text(text.rsplit("\n", 1)[0] + "\n#[fg=red]PLANTED")
    rundir = memo.parent
    rundir.chmod(0o755)
    try:
        shown, stood = _status(srv)
        assert not stood and "PLANTED" not in shown
    finally:
        rundir.chmod(0o700)


def test_a_closed_pane_whose_stamp_names_no_process_ends_the_answer(srv):
    """A hook registration in a pane with no agent process to walk (pid 0): only the
    server's children tell that its pane closed."""
    _config(srv, 30)
    _idle_pane(srv)
    plain = srv.new_pane("exec sleep 100000")
    srv.tma("event", "--agent", "fake", "--kind", "Ask", "--pane", plain, check=True)
    assert srv.option(plain, "@agent_pid") in ("", "0")
    _kept(srv)
    shown, stood = _status(srv)
    assert stood and "⚑1" in shown, shown
    srv.tmux("kill-pane", "-t", plain)
    srv.next_second()
    shown, stood = _status(srv)
    assert not stood and "⚑1" not in shown, shown


def test_an_agent_that_redraws_its_quiet_screen_ends_the_answer(srv):
    """A stamp reused because its window printed nothing since stands only while no
    process of the pane writes: the agent drawing its dialog (one write) ends it."""
    import sys

    _config(srv, 4)
    agent = srv.root / "py" / "fakeagent"  # comm `fakeagent`: the manifest's process
    agent.parent.mkdir()
    agent.symlink_to(sys.executable)
    go, hold = srv.root / "go", srv.root / "hold"
    os.mkfifo(go)
    os.mkfifo(hold)
    code = ("import sys\nw = sys.stdout.write\nw('FAKE-IDLE\\r\\n'); sys.stdout.flush()\n"
            f"open({str(go)!r}).read()\n"
            "w('\\x1b[2J\\x1b[HFAKE-BLOCKED\\r\\n'); sys.stdout.flush()\n"
            f"open({str(hold)!r}).read()\n")
    pane = srv.new_pane(f"exec {agent} -c {_sh(code)}")
    srv.wait_for(lambda: "FAKE-IDLE" in srv.tmux("capture-pane", "-p", "-t", pane))
    _first(srv)
    srv.next_second()
    srv.next_second()  # the screen's second before the stamp's: a quiet window
    srv.ls()
    time.sleep(4.1)  # the stamp stale: reused, not consumed
    res = srv.tma("--debug-timing", "status", check=True)
    assert "1 capture-skipped" in res.stderr, res.stderr
    shown, stood = _status(srv)
    assert stood and "○1" in shown, shown
    with open(go, "w") as fh:
        fh.write("x")
    srv.wait_for(lambda: "FAKE-BLOCKED" in srv.tmux("capture-pane", "-p", "-t", pane))
    srv.next_second()  # past the keeper's poll (the stampede guard), inside the memo's life
    shown, stood = _status(srv)
    with open(hold, "w") as fh:
        fh.write("x")
    assert not stood and "⚑1" in shown, shown


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"

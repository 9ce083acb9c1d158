"""`tma wait` on a private server: every exit code, the targets, --since, --until done.

State changes are driven while `tma wait` runs in the background (Popen); the tests
poll conditions (the waiter's own `@tma_last_poll` stamp, pane options) instead of
sleeping, except where a fixed window is the thing under test (--timeout).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tma.runtime import waiting
from tma.ui.rows import ROW_KEYS

JSON_ROW_KEYS = ["schema", *ROW_KEYS]
_serial = itertools.count()


# -- helpers (local to this file) --------------------------------------------------------------

def popen(srv, *args: str) -> subprocess.Popen:
    """`tma wait ...` in the background, with the same argv and env as `srv.tma`.

    stderr goes to a file so a test can poll it while the wait runs (`stderr_of`).
    """
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name,
            "--manifest-dir", str(srv.manifests), "wait", *args]
    path = srv.root / f"wait-stderr-{next(_serial)}.txt"
    with open(path, "w") as errfile:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errfile, text=True,
                                env=srv.env)
    proc.stderr_path = path
    return proc


def stderr_of(proc: subprocess.Popen) -> str:
    return proc.stderr_path.read_text()


def finish(proc: subprocess.Popen, timeout: float = 15) -> tuple[int, str, str]:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(
            f"tma wait still running after {timeout}s\n{stderr_of(proc)}") from None
    return proc.returncode, out, stderr_of(proc)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def last_poll(srv) -> int:
    raw = srv.tmux("show-options", "-sqv", "@tma_last_poll").strip()
    return int(raw) if raw.isdigit() else 0


def cycles_after(srv, proc: subprocess.Popen, t_ms: int) -> None:
    """Block until a poll cycle started at or after t_ms (the waiter's: nothing else runs)."""
    def ready():
        assert proc.poll() is None, stderr_of(proc)
        return last_poll(srv) >= t_ms
    srv.wait_for(ready)


def observed(srv, proc: subprocess.Popen, cycles: int = 1) -> None:
    """Block until the running waiter has completed `cycles` more poll cycles."""
    for _ in range(cycles):  # a cycle that starts now proves the previous ones evaluated
        cycles_after(srv, proc, now_ms())


def between_cycles(srv, proc: subprocess.Popen) -> None:
    """Block until the waiter sleeps between its cycles: asleep and running no tmux (a
    cycle that has begun is either computing or waiting on a tmux child)."""
    def asleep() -> bool:
        try:
            with open(f"/proc/{proc.pid}/stat") as fh:
                state = fh.read().rpartition(")")[2].split()[0]
            children = "".join(open(f"/proc/{proc.pid}/task/{t}/children").read()
                               for t in os.listdir(f"/proc/{proc.pid}/task"))
        except OSError:
            return False
        return state == "S" and not children.strip()
    srv.wait_for(asleep)


def fast(srv) -> None:
    """Stamps go stale after 1 s instead of 3 (fewer seconds per state change)."""
    srv.config.write_text("[fold]\nfreshness_secs = 1\n")


def stamped(srv, pane: str, state: str) -> bool:
    return srv.option(pane, "@agent_state") == state


# -- exit 0: --pane ----------------------------------------------------------------------------

def test_pane_already_in_state_prints_ls_line(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    res = srv.tma("wait", "--pane", pane, "--until", "idle", "--timeout", "5")
    assert res.returncode == 0, res.stderr
    ls_line = srv.tma("ls", "--pane", pane, check=True).stdout
    assert res.stdout == ls_line
    assert res.stdout.split("\t")[:4] == [pane, "fake", "idle", ""]
    assert res.stderr == ""


def test_pane_json_is_one_row_object_with_schema(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    res = srv.tma("wait", "--pane", pane, "--until", "blocked,working", "--json")
    assert res.returncode == 0, res.stderr
    assert res.stdout.endswith("\n") and res.stdout.count("\n") == 1
    row = json.loads(res.stdout)
    assert list(row) == JSON_ROW_KEYS
    assert row["schema"] == 1
    assert (row["pane"], row["agent"], row["state"], row["detail"]) == (
        pane, "fake", "blocked", "permission")
    assert row["episode_ms"] == max(row["since"], row["since_ms"]) > 0


@pytest.mark.tmux_contract
def test_pane_waits_for_the_transition(srv):
    fast(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    assert srv.row(pane)["state"] == "working"
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "blocked", "--timeout", "20")
    cycles_after(srv, proc, t0)
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert out.split("\t")[:4] == [pane, "fake", "blocked", "permission"]


# -- exit 124 ----------------------------------------------------------------------------------

def test_timeout_exits_124_with_nothing_on_stdout(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    t0 = time.monotonic()
    res = srv.tma("wait", "--pane", pane, "--until", "blocked,done", "--timeout", "1.5")
    elapsed = time.monotonic() - t0
    assert res.returncode == 124
    assert res.stdout == ""
    # `done` is idle with attention: a plain idle pane never satisfies it
    assert res.stderr == "tma: timed out after 1.5s waiting for blocked, done (exit 124)\n"
    assert 1.5 <= elapsed < 6


def test_not_yet_an_agent_hints_once_and_keeps_waiting(srv):
    shell = srv.shell_pane()
    res = srv.tma("wait", "--pane", shell, "--until", "idle", "--timeout", "1.2")
    assert res.returncode == 124
    hint = f"tma: pane {shell} runs no agent yet; waiting for one to start there\n"
    assert res.stderr.count(hint) == 1
    assert res.stderr.endswith("(exit 124)\n")


# -- exit 3 / 4 --------------------------------------------------------------------------------

def test_watched_pane_vanishing_exits_3(srv):
    srv.shell_pane()  # keeps the server alive once the agent pane is gone
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    srv.ls()  # stamped: the waiter's first cycle only consumes (no mid-cycle re-read)
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "idle", "--timeout", "20")
    cycles_after(srv, proc, t0)
    # a kill during the first cycle can land between its pane list and its process read
    # (the pane is there, its agent already gone): kill once that cycle has ended
    observed(srv, proc)
    between_cycles(srv, proc)  # observed() returns as the next cycle begins
    srv.tmux("kill-pane", "-t", pane)
    rc, out, err = finish(proc)
    assert rc == 3
    assert out == ""
    assert err == f"tma: pane {pane} vanished before reaching idle (exit 3)\n"


def test_agent_exiting_while_the_pane_lives_exits_4(srv):
    fast(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    assert srv.row(pane)["state"] == "working"
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "blocked", "--timeout", "20")
    cycles_after(srv, proc, t0)
    srv.tmux("respawn-pane", "-k", "-t", pane, "exec sh")
    rc, out, err = finish(proc)
    assert rc == 4, err
    assert out == ""
    assert err == f"tma: the agent on pane {pane} exited before reaching blocked (exit 4)\n"


# -- exit 2 / 1 --------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--any", "--until", "idle,running"],  # bad --until token
    ["--any", "--until", ""],  # empty list
    ["--any", "--state", "bogus", "--until", "idle"],  # bad selector token
    ["--any"],  # --until is required
    ["--pane", "%0", "--session", "s", "--until", "idle"],  # --pane + selector
    ["--until", "idle"],  # no target
    ["--any", "--all", "--until", "idle"],  # targets are exclusive
    ["--count", "0", "--until", "idle"],
    ["--count", "x", "--until", "idle"],
    ["--any", "--until", "idle", "--since", "-5"],
    ["--any", "--until", "idle", "--timeout", "soon"],
])
def test_usage_errors_exit_2(srv, args):
    res = srv.tma("wait", *args)  # no server: usage is checked first
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""


def test_bad_token_names_the_vocabulary(srv):
    res = srv.tma("wait", "--any", "--until", "blocked,running")
    assert res.returncode == 2
    assert "running" in res.stderr
    assert "(expected one of: idle, working, blocked, unknown, done)" in res.stderr


def test_empty_all_scope_exits_2(srv):
    srv.shell_pane()
    res = srv.tma("wait", "--all", "--until", "idle", "--timeout", "5")
    assert res.returncode == 2
    assert res.stdout == ""
    assert "--all matched no agent panes" in res.stderr


def test_no_server_exits_1(srv):
    res = srv.tma("wait", "--any", "--until", "idle", "--timeout", "5")
    assert res.returncode == 1
    assert res.stderr == "tma: no tmux server running\n"


def test_ambiguous_agent_exits_1(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-IDLE composer\n")
    res = srv.tma("wait", "--agent", "fake", "--until", "blocked", "--timeout", "5")
    assert res.returncode == 1
    # surface order: working before idle
    assert res.stderr == (f'tma: --agent "fake" matches 2 panes ({a}, {b}); '
                          "target one with --pane\n")
    # a selector narrowing the scope to one pane pins it instead
    res = srv.tma("wait", "--agent", "fake", "--state", "idle", "--until", "idle")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\t")[0] == b


# -- fleet and --any targets -------------------------------------------------------------------

def test_any_takes_the_first_in_scope_pane_in_surface_order(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-BLOCKED do you want to proceed\n")
    # both satisfy; blocked sorts before working
    res = srv.tma("wait", "--any", "--until", "working,blocked", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["pane"] == b
    # out-of-scope panes never satisfy
    # (--timeout 0: the entry cycle still runs, then the wait gives up)
    res = srv.tma("wait", "--any", "--session", "elsewhere", "--until", "working",
                  "--timeout", "0")
    assert res.returncode == 124


def test_any_returns_the_first_pane_to_reach(srv):
    fast(srv)
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-WORKING thinking\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--any", "--agent", "fake", "--until", "blocked", "--timeout", "20")
    cycles_after(srv, proc, t0)
    srv.draw(b, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert out.count("\n") == 1 and out.split("\t")[0] == b


def test_all_is_a_barrier(srv):
    fast(srv)
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-WORKING thinking\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--all", "--until", "blocked", "--json", "--timeout", "25")
    cycles_after(srv, proc, t0)
    srv.draw(a, "FAKE-BLOCKED do you want to proceed\n")
    srv.wait_for(lambda: stamped(srv, a, "blocked"))  # stamped by the waiter's cycles
    observed(srv, proc)
    assert proc.poll() is None, "one member of two is not the barrier"
    # a pane launched mid-wait never joins the pinned membership
    c = srv.agent_pane()
    srv.draw(c, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    doc = json.loads(out)
    assert list(doc) == ["schema", "agents"] and doc["schema"] == 1
    assert [r["pane"] for r in doc["agents"]] == [a, b]
    assert all(list(r) == list(ROW_KEYS) for r in doc["agents"])


def test_all_member_vanishing_exits_3(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING thinking\n")
    srv.draw(b, "FAKE-BLOCKED do you want to proceed\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--all", "--until", "blocked", "--timeout", "20")
    cycles_after(srv, proc, t0)
    # the first cycle reads the screens (a person's surface serves no stamp older than
    # its screen): the membership is pinned once it ends, so kill after the next starts
    observed(srv, proc)
    # and not inside that cycle: between its pane list and its process read the pane is
    # there with its agent gone, which is exit 4 (as test_watched_pane_vanishing_exits_3)
    between_cycles(srv, proc)
    srv.tmux("kill-pane", "-t", a)
    rc, out, err = finish(proc)
    assert rc == 3
    assert out == ""
    assert err == f"tma: pane {a} vanished before reaching blocked (exit 3)\n"


def test_count_is_a_quorum(srv):
    fast(srv)
    a = srv.agent_pane()
    b = srv.agent_pane()
    c = srv.agent_pane()
    for p in (a, b, c):
        srv.draw(p, "FAKE-WORKING thinking\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--count", "2", "--until", "blocked", "--timeout", "25")
    cycles_after(srv, proc, t0)
    srv.draw(c, "FAKE-BLOCKED do you want to proceed\n")
    srv.wait_for(lambda: stamped(srv, c, "blocked"))
    # a departure is not an error for a quorum
    srv.tmux("kill-pane", "-t", b)
    observed(srv, proc)
    assert proc.poll() is None, "one of two is not the quorum"
    srv.draw(a, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert [line.split("\t")[0] for line in out.splitlines()] == [a, c]


# -- --since and done --------------------------------------------------------------------------

def test_since_is_strict_and_a_new_episode_satisfies(srv):
    fast(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    assert srv.row(pane)["state"] == "blocked"
    since = int(srv.options(pane)["@agent_since"])
    res = srv.tma("wait", "--pane", pane, "--until", "blocked", "--since", str(since - 1))
    assert res.returncode == 0, res.stderr
    res = srv.tma("wait", "--pane", pane, "--until", "blocked", "--since", str(since),
                  "--timeout", "0")
    assert res.returncode == 124
    assert res.stderr.endswith(f"waiting for blocked since {since} (exit 124)\n")
    # the same wait, running while the pane goes working and then blocked again
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "blocked", "--since", str(since), "--json",
                 "--timeout", "25")
    cycles_after(srv, proc, t0)
    srv.draw(pane, "FAKE-WORKING thinking\n")
    srv.wait_for(lambda: proc.poll() is not None or stamped(srv, pane, "working"))
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    row = json.loads(out)
    assert row["state"] == "blocked" and row["episode_ms"] > since


def test_until_done_after_a_working_to_idle_completion(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    assert srv.row(pane)["state"] == "working"
    srv.draw(pane, "FAKE-IDLE composer\n")
    # idle is published only after the 3 s dwell; the completion raises attention
    res = srv.tma("wait", "--pane", pane, "--until", "done", "--json", "--timeout", "15")
    assert res.returncode == 0, res.stderr
    row = json.loads(res.stdout)
    assert (row["state"], row["attention"], row["done"]) == ("idle", True, True)
    # --until idle also matches a done pane
    res = srv.tma("wait", "--pane", pane, "--until", "idle", "--json", "--timeout", "5")
    assert res.returncode == 0 and json.loads(res.stdout)["done"] is True


def test_since_sees_a_fresh_turn_end_on_a_pane_that_never_left_idle(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    srv.ls()
    # Stand in for the hook intake's turn end: attention raised, @agent_turn_at stamped.
    srv.tmux("set-option", "-p", "-t", pane, "@agent_attention", "1")
    row = srv.row(pane)
    floor = row["episode_ms"]
    assert row["done"] and floor == row["since"]
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "done", "--since", str(floor),
                 "--timeout", "20")
    cycles_after(srv, proc, t0)
    assert proc.poll() is None, "the handled completion does not re-satisfy"
    srv.tmux("set-option", "-p", "-t", pane, "@agent_turn_at", str(now_ms()))
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert out.split("\t")[:3] == [pane, "fake", "idle"]


# -- the loop: server gone, tmux stall, hot reload -----------------------------------------------

def test_server_vanishing_mid_wait_exits_1(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--any", "--until", "blocked", "--timeout", "20")
    cycles_after(srv, proc, t0)
    srv.tmux("kill-server")
    rc, out, err = finish(proc)
    assert rc == 1
    assert out == ""
    assert err == "tma: no tmux server running\n"


def test_tmux_stall_is_a_skipped_tick_with_one_note(srv):
    fast(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    srv.ls()
    server_pid = int(srv.display(pane, "#{pid}"))
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "blocked", "--timeout", "30")
    cycles_after(srv, proc, t0)
    os.kill(server_pid, signal.SIGSTOP)
    try:  # the adapter gives up on a silent server after 3 s
        srv.wait_for(lambda: "slow to respond" in stderr_of(proc), timeout=8)
    finally:
        os.kill(server_pid, signal.SIGCONT)
    assert proc.poll() is None
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    assert err == "tma: tmux slow to respond; still waiting\n"
    assert out.split("\t")[:3] == [pane, "fake", "blocked"]


def test_config_is_reloaded_each_tick_keeping_the_last_good_one(srv):
    fast(srv)
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    srv.ls()
    t0 = now_ms()
    proc = popen(srv, "--pane", pane, "--until", "blocked", "--timeout", "25")
    cycles_after(srv, proc, t0)
    srv.config.write_text("[fold]\nno_such_key = 1\n")
    srv.wait_for(lambda: "no_such_key" in stderr_of(proc))
    observed(srv, proc)
    assert proc.poll() is None, "a broken config mid-wait does not end the wait"
    fast(srv)
    srv.draw(pane, "FAKE-BLOCKED do you want to proceed\n")
    rc, out, err = finish(proc)
    assert rc == 0, err
    lines = err.splitlines()
    assert len(lines) == 1 and "no_such_key" in lines[0], err  # reported once


# -- the decision logic on its own (no server) -------------------------------------------------

class _P:
    def __init__(self, pane_id):
        self.pane_id = pane_id


class _S:
    def __init__(self, state, attention=False, since=0, turn_at=0):
        self.state, self.attention = state, attention
        self.episode_ms = max(since, turn_at)


class _R:
    def __init__(self, pane_id, state, **kw):
        self.pane, self.stamp = _P(pane_id), _S(state, **kw)


def test_waiter_pane_latches():
    w = waiting.Waiter(waiting.PANE, waiting.Goal(("idle",)), pane="%1")
    assert w.step([], {"%2"}).kind == waiting.WAITING  # not seen yet: keep waiting
    assert w.step([], {"%1"}).kind == waiting.WAITING
    assert w.notes == ["tma: pane %1 runs no agent yet; waiting for one to start there"]
    w.step([], {"%1"})
    assert len(w.notes) == 1  # one-time
    assert w.step([_R("%1", "working")], {"%1"}).kind == waiting.WAITING
    assert w.step([], {"%1"}).kind == waiting.DEPARTED
    assert w.step([], set()).kind == waiting.VANISHED


def test_waiter_goal_since_and_done():
    done = waiting.Goal(("done",), since=500)
    assert not done.matches(_R("%1", "idle", attention=True, since=500))
    assert done.matches(_R("%1", "idle", attention=True, since=500, turn_at=501))
    assert not done.matches(_R("%1", "idle", since=900))
    idle = waiting.Goal(("idle",))
    assert idle.matches(_R("%1", "idle", attention=True))


def test_waiter_all_defers_an_empty_scope_on_a_consume_only_cycle():
    w = waiting.Waiter(waiting.ALL, waiting.Goal(("idle",)))
    assert w.step([], {"%1"}, producing=False).kind == waiting.WAITING
    assert w.step([], {"%1"}).kind == waiting.EMPTY

"""`tma event`: the hook intake on a private server."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.helpers.events import event


@pytest.mark.tmux_contract
def test_a_hook_claim_stamps_the_pane(srv):
    pane = srv.agent_pane()
    res = event(srv, "Work", pane, '{"session_id":"s-1","model":"m-1"}')
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_source"], o["@agent_name"]) == ("working", "hook", "fake")
    assert o["@agent_session"] == "s-1" and o["@agent_model"] == "m-1"
    assert int(o["@agent_pid"]) > 0  # the walked agent pid
    assert o["@agent_evidence_at"] == o["@agent_since"] == o["@agent_stamped_at"]
    win = srv.display(pane, "#{window_id}")
    assert srv.tmux("show-options", "-w", "-qv", "-t", win, "@agent_summary").strip() == \
        "working:1"
    row = srv.row(pane)
    assert row["state"] == "working" and row["session"] == "s-1"


@pytest.mark.tmux_contract
def test_lifecycle_start_registers_idle_and_end_removes(srv):
    pane = srv.agent_pane()
    event(srv, "Work", pane, '{"session_id":"old"}')
    event(srv, "Start", pane, '{"session_id":"new"}')
    o = srv.options(pane)
    assert o["@agent_state"] == "idle" and o["@agent_session"] == "new"
    assert o.get("@agent_attention", "") == ""


@pytest.mark.tmux_contract
def test_turn_end_attention_and_second_completion(srv):
    pane = srv.agent_pane()
    event(srv, "Work", pane)
    event(srv, "Stop", pane)
    o = srv.options(pane)
    assert o["@agent_state"] == "idle" and o["@agent_attention"] == "1"
    turn1 = int(o["@agent_turn_at"])
    event(srv, "Stop", pane)  # the mark still stands: one completion
    assert int(srv.option(pane, "@agent_turn_at")) == turn1
    srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_attention")  # the user looked
    time.sleep(0.01)
    event(srv, "Stop", pane)  # an idle->idle second completion raises it again
    o = srv.options(pane)
    assert o["@agent_attention"] == "1" and int(o["@agent_turn_at"]) > turn1


@pytest.mark.tmux_contract
def test_newer_stored_evidence_wins_and_nothing_commits(srv):
    pane = srv.agent_pane()
    # newer than the event by up to 4 s: inside the 5 s skew (evidence further ahead
    # is a clock stepped back, and holds nothing: test_clock_step.py)
    future = str(int(time.time() * 1000) + 4_000)
    for k, v in (("@agent_state", "blocked"), ("@agent_source", "hook"),
                 ("@agent_evidence_at", future), ("@agent_since", future),
                 ("@agent_stamped_at", future), ("@agent_name", "fake")):
        srv.tmux("set-option", "-p", "-t", pane, k, v)
    event(srv, "Stop", pane, '{"session_id":"s"}')
    o = srv.options(pane)
    assert o["@agent_state"] == "blocked" and "@agent_session" not in o
    assert "@agent_turn_at" not in o and o["@agent_stamped_at"] == future


def test_subagent_events_never_move_the_owners_state(srv):
    pane = srv.agent_pane()
    event(srv, "Work", pane, '{"session_id":"main"}')
    event(srv, "SubagentStart", pane, '{"session_id":"sub"}')
    assert srv.option(pane, "@agent_subagents") == "sub"
    event(srv, "Stop", pane, '{"session_id":"sub"}')
    assert srv.option(pane, "@agent_state") == "working"
    event(srv, "SubagentStop", pane, '{"session_id":"sub"}')
    event(srv, "Stop", pane, '{"session_id":"main"}')
    assert srv.option(pane, "@agent_state") == "idle"


@pytest.mark.parametrize("args", [
    ["--agent", "nope", "--kind", "Work"],  # unknown agent
    ["--agent", "fake", "--kind", "Unmapped"],  # unmapped event
    ["--agent", "fake"],  # no kind
])
def test_silent_no_ops(srv, args):
    pane = srv.agent_pane()
    res = srv.tma("event", *args, "--pane", pane, input="{}", env={"TMA_HOOK_STRICT": "1"})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert srv.option(pane, "@agent_state") == ""


def test_no_pane_and_no_server_are_silent(srv):
    res = srv.tma("event", "--agent", "fake", "--kind", "Work", input="{}",
                  env={"TMA_HOOK_STRICT": "1", "TMUX_PANE": ""})
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    res = srv.tma("event", "--agent", "fake", "--kind", "Work", "--pane", "%1", input="{}")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_a_broken_config_falls_back_with_one_line(srv):
    pane = srv.agent_pane()
    srv.config.write_text("[fold\nbroken")
    res = event(srv, "Work", pane)
    assert res.returncode == 0 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1
    assert "using default config for this hook event" in res.stderr
    assert srv.option(pane, "@agent_state") == "working"


@pytest.mark.tmux_contract
def test_pane_from_tmux_pane_and_server_from_tmux_env(srv):
    pane = srv.agent_pane()
    sock = srv.display(pane, "#{socket_path}")
    argv = [sys.executable, "-m", "tma", "--manifest-dir", str(srv.manifests), "event",
            "--agent", "fake", "--kind", "Ask"]
    env = dict(srv.env, TMUX=f"{sock},1,0", TMUX_PANE=pane, TMA_HOOK_STRICT="1")
    res = subprocess.run(argv, input="{}", capture_output=True, text=True, env=env, timeout=30)
    assert (res.returncode, res.stdout) == (0, "")
    assert srv.option(pane, "@agent_state") == "blocked"
    assert srv.option(pane, "@agent_detail") == "permission"


@pytest.mark.tmux_contract
def test_hostile_values_are_stored_inert(srv):
    pane = srv.agent_pane()
    marker = srv.root / "pwned"
    hostile = f"#(touch {marker})#{{pane_id}}"
    payload = json.dumps({"session_id": hostile, "model": hostile, "api_endpoint": hostile})
    event(srv, "Work", pane, payload)
    o = srv.options(pane)
    assert o["@agent_state"] == "working"
    for key in ("@agent_session", "@agent_model", "@agent_api_endpoint"):
        assert "#" not in o.get(key, "")
    srv.ls()
    assert not marker.exists()


def test_hook_latency_is_small(srv):
    pane = srv.agent_pane()
    event(srv, "Work", pane)  # warm the caches
    t0 = time.monotonic()
    event(srv, "Stop", pane)
    assert time.monotonic() - t0 < 2.0


def test_opencode_permission_reply_is_bookkeeping_or_the_working_edge(srv):
    pane = srv.agent_pane("opencode")
    ev = dict(agent="opencode", manifests=False)
    event(srv, "session-start", pane, '{"session_id":"ses_1"}', **ev)
    event(srv, "permission-required", pane,
          '{"session_id":"ses_1","permission":"bash","request_id":"per_1"}', **ev)
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_detail"]) == ("blocked", "permission")
    assert o["@agent_permission_request"] == "per_1"
    event(srv, "permission-replied", pane, '{"session_id":"other","request_id":"per_1"}', **ev)
    assert srv.option(pane, "@agent_permission_request") == "per_1"  # not the owner's
    event(srv, "permission-replied", pane,
          '{"session_id":"ses_1","request_id":"per_1","reply":"once"}', **ev)
    o = srv.options(pane)
    assert o["@agent_state"] == "working" and o.get("@agent_permission_request", "") == ""
    event(srv, "permission-required", pane, '{"session_id":"ses_1","request_id":"per_2"}', **ev)
    event(srv, "permission-replied", pane,
          '{"session_id":"ses_1","request_id":"per_2","reply":"reject"}', **ev)
    o = srv.options(pane)
    assert o["@agent_state"] == "blocked" and o.get("@agent_permission_request", "") == ""


def test_a_registered_agent_whose_walked_pid_is_gone_is_removed_at_once(srv):
    # OpenCode fires no session end: its exit must not wait for the 30 s reaper
    pane = srv.agent_pane("opencode")
    event(srv, "session-start", pane, '{"session_id":"ses_1"}', agent="opencode",
          manifests=False)
    assert int(srv.option(pane, "@agent_pid")) > 0  # the hook recorded the walked pid
    srv.tmux("respawn-pane", "-k", "-t", pane, "exec sh")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "sh")
    srv.next_second()
    assert srv.ls(manifests=False) == []
    assert srv.option(pane, "@agent_state") == ""


def test_a_pid_less_registration_is_reaped_only_after_30_s_of_shell(srv):
    pane = srv.shell_pane()
    event(srv, "Start", pane, '{"session_id":"s"}')
    assert srv.option(pane, "@agent_pid") == "0"
    for _ in range(4):
        srv.next_second()  # past freshness: the cycle examines the registration
    assert [r["pane"] for r in srv.ls()] == [pane]  # held (marker set), not removed
    assert srv.option(pane, "@tma_reg_dead_since") != ""


@pytest.mark.tmux_contract
def test_a_repeated_event_moves_only_evidence_and_stamped_at(srv):
    """The short write: the same claim again (same state, detail, source, pid, name)
    refreshes evidence_at and stamped_at and leaves every other option as it was."""
    pane = srv.agent_pane()
    event(srv, "Work", pane, '{"session_id":"s-1"}')
    before = srv.options(pane)
    time.sleep(0.01)
    res = event(srv, "Work", pane, '{"session_id":"s-1"}')
    assert res.returncode == 0 and res.stderr == ""
    after = srv.options(pane)
    moved = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert moved == {"@agent_evidence_at", "@agent_stamped_at"}
    assert int(after["@agent_stamped_at"]) > int(before["@agent_stamped_at"])
    assert after["@agent_evidence_at"] == after["@agent_stamped_at"]


@pytest.mark.parametrize("closed", [">&-", "2>&-", ">&- 2>&-"])
def test_a_hook_with_its_standard_streams_closed_still_exits_0(srv, closed):
    """An agent may start its hook with stdout or stderr closed: the hot commands'
    early exit must not trip over the missing stream."""
    import shlex

    pane = srv.agent_pane()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "event", "--agent", "fake", "--kind", "Work", "--pane", pane]
    res = subprocess.run(["sh", "-c", f"{shlex.join(argv)} </dev/null {closed}; echo rc=$?"],
                         env=srv.env, capture_output=True, text=True, timeout=30)
    assert res.stdout.strip().endswith("rc=0"), (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr


def test_another_request_while_blocked_is_a_new_episode(srv):
    """OpenCode asks again with another request id while the pane is still blocked on
    the first (its reply event lost, or never sent): the agent's own word that another
    prompt stands, so a new episode (since moves, the mark is raised again), and an
    answer bound to the first episode is refused. The same id again
    (`permission.updated`) is the same prompt."""
    pane = srv.agent_pane("opencode")
    ev = dict(agent="opencode", manifests=False)
    event(srv, "session-start", pane, '{"session_id":"ses_1"}', **ev)
    event(srv, "permission-required", pane,
          '{"session_id":"ses_1","permission":"bash","request_id":"per_1"}', **ev)
    first = srv.options(pane)
    assert first["@agent_state"] == "blocked" and first["@agent_attention"] == "1"
    srv.tmux("set-option", "-p", "-t", pane, "-u", "@agent_attention")  # the person looked
    time.sleep(0.01)
    event(srv, "permission-required", pane,
          '{"session_id":"ses_1","permission":"bash","request_id":"per_1"}', **ev)
    assert srv.option(pane, "@agent_since") == first["@agent_since"]  # the same prompt
    assert srv.option(pane, "@agent_attention") == ""
    event(srv, "permission-required", pane,
          '{"session_id":"ses_1","permission":"edit","request_id":"per_2"}', **ev)
    second = srv.options(pane)
    assert (second["@agent_state"], second["@agent_permission_request"]) == ("blocked", "per_2")
    assert int(second["@agent_since"]) > int(first["@agent_since"])
    assert second["@agent_attention"] == "1"
    res = srv.tma("act", "approve", "--pane", pane, "--json", "--expect-episode",
                  first["@agent_since"], manifests=False)
    assert res.returncode == 4 and "episode-changed" in res.stdout, res.stderr

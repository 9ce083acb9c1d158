"""Claude's reply lane: the PermissionRequest hook holds for a verdict from `tma act`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

PAYLOAD = json.dumps({"session_id": "s1", "tool_name": "Bash", "prompt_id": "p-1",
                      "tool_input": {"command": "echo hi > f.txt", "description": "write"}})


def _finish(proc, timeout=5) -> bytes:
    out = proc.stdout.read()
    proc.wait(timeout=timeout)
    return out


def _hold(srv, pane, hold_ms=20000):
    srv.config.write_text(f"[hooks]\nhold_ms = {hold_ms}\n")
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "event", "--agent", "claude",
            "--kind", "PermissionRequest", "--pane", pane]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(srv.env, TMA_HOOK_STRICT="1"))
    proc.stdin.write(PAYLOAD.encode())
    proc.stdin.close()
    srv.wait_for(lambda: srv.option(pane, "@tma_reply_holder"))
    return proc


def test_approve_over_the_hook_lane(srv):
    pane = srv.agent_pane("claude")
    proc = _hold(srv, pane)
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_detail"], o["@agent_source"]) == \
        ("blocked", "permission", "hook")
    assert o["@agent_pending_tool"] == "Bash" and o["@agent_pending_call"] == "p-1"
    assert o["@agent_pending_summary"].startswith("Bash: echo hi > f.txt")
    assert o["@agent_permission_request"].startswith("tma-")
    res = srv.tma("act", "approve", "--pane", pane, manifests=False)
    assert res.returncode == 0 and "over the hook lane" in res.stderr
    out = _finish(proc)
    assert proc.returncode == 0
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                      "decision": {"behavior": "allow"}}}
    assert srv.option(pane, "@agent_permission_request") == ""


def test_deny_over_the_hook_lane(srv):
    pane = srv.agent_pane("claude")
    proc = _hold(srv, pane)
    assert srv.tma("act", "deny", "--pane", pane, manifests=False).returncode == 0
    out = _finish(proc)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny" and decision["message"]


def test_expiry_prints_nothing_and_act_falls_back_to_keys(srv):
    """The hold is over: act types the key, since Claude's screen still shows the prompt
    (a fake claude drawing a real captured prompt, recording what it receives)."""
    from pathlib import Path

    from tests.helpers.keyrecorder import KeyRecorder
    from tma.core import fixture

    capture = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / \
        "claude-2.1.332_blocked.txt"
    rec = KeyRecorder.start(srv, "claude", fixture.parse(capture.read_text(encoding="utf-8")))
    pane = rec.pane
    t0 = time.monotonic()
    proc = _hold(srv, pane, hold_ms=600)
    out = _finish(proc)
    assert out == b"" and proc.returncode == 0 and time.monotonic() - t0 < 5
    assert srv.option(pane, "@agent_permission_request") == ""
    assert srv.option(pane, "@agent_state") == "blocked"  # the keyboard still answers it
    res = srv.tma("act", "approve", "--pane", pane, manifests=False)
    assert res.returncode == 0 and "sent `approve`" in res.stderr, res.stderr
    assert rec.settle(1) == b"1"


def test_a_keyboard_answer_releases_the_holder_within_a_second(srv):
    pane = srv.agent_pane("claude")
    proc = _hold(srv, pane)
    t0 = time.monotonic()
    srv.tma("event", "--agent", "claude", "--kind", "PostToolUse", "--pane", pane,
            input='{"session_id":"s1"}', manifests=False)
    out = _finish(proc)
    assert out == b"" and time.monotonic() - t0 < 1.0 + 0.5  # one poll tick + one spawn
    assert srv.option(pane, "@agent_state") == "working"


def test_the_lane_can_be_turned_off(srv):
    pane = srv.agent_pane("claude")
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n")
    res = srv.tma("event", "--agent", "claude", "--kind", "PermissionRequest", "--pane", pane,
                  input=PAYLOAD, manifests=False, env={"TMA_HOOK_STRICT": "1"}, timeout=10)
    assert (res.returncode, res.stdout) == (0, "")
    assert srv.option(pane, "@agent_state") == "blocked"
    assert srv.option(pane, "@agent_permission_request") == ""


def test_act_is_gated_on_a_permission_prompt(srv):
    pane = srv.agent_pane("claude")
    srv.tma("event", "--agent", "claude", "--kind", "UserPromptSubmit", "--pane", pane,
            input="{}", manifests=False)
    res = srv.tma("act", "approve", "--pane", pane, manifests=False)
    assert res.returncode == 4
    assert res.stderr == f"tma: {pane} is working, not at a permission prompt: nothing to " \
                         "approve (exit 4)\n"


def test_codex_permission_request_returns_at_once(srv):
    node, codex = srv.fake("node"), srv.fake("codex")
    pane = srv.new_pane(f"sh -c '{codex} 100000 & exec {node} 100000'")
    t0 = time.monotonic()
    res = srv.tma("event", "--agent", "codex", "--kind", "PermissionRequest", "--pane", pane,
                  input=PAYLOAD, manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert (res.returncode, res.stdout) == (0, "") and time.monotonic() - t0 < 3
    assert srv.option(pane, "@agent_state") == "blocked"

"""The hook decision: attention, turn_end, lifecycle, subagent ownership."""

from __future__ import annotations

from tma.core import intake, plan as P
from tma.core.codec import Stamp
from tma.core.manifest import loads

MANIFEST = loads("agent", """
min_engine_version = "0.1"
[identity]
process_names = ["agent"]
[hooks]
covers = ["working", "idle", "blocked", "lifecycle"]
[[hooks.map]]
event = "Start"
claim = { lifecycle = "start" }
[[hooks.map]]
event = "End"
claim = { lifecycle = "end" }
[[hooks.map]]
event = "Work"
claim = { state = "working" }
[[hooks.map]]
event = "Ask"
matcher = "ExitPlanMode"
claim = { state = "blocked", detail = "plan" }
[[hooks.map]]
event = "Ask"
matcher = "permission_prompt"
claim = { state = "blocked", detail = "permission" }
[[hooks.map]]
event = "Stop"
claim = { state = "idle" }
turn_end = true
[[hooks.map]]
event = "notify"
matcher = "agent-turn-complete"
claim = { state = "idle" }
turn_end = true
[capture]
""")


def st(state, **kw):
    base = dict(source="hook", evidence_at=1000, since=1000, stamped_at=1000)
    base.update(kw)
    return Stamp(state=state, **base)


def decide(prev, event, payload="{}", session="s1", now=5000):
    return intake.decide(prev, MANIFEST, event, payload, session, now)


def test_state_claim_stamps_under_hook_arbitration():
    d = decide(None, "Work")
    assert d.kind == intake.STAMP
    assert (d.plan.state, d.plan.source, d.plan.evidence_at) == ("working", "hook", 5000)
    assert d.plan.guard == P.Guard(P.HOOK_ARBITRATE, at=5000)
    assert d.session == "s1"  # recorded when none is stored


def test_session_never_overwritten_by_a_state_claim():
    d = decide(st("idle", session="orig"), "Work", session="other")
    assert d.session == "" and not d.replace_session


def test_lifecycle_start_registers_idle_without_attention_and_replaces_the_session():
    d = decide(st("working", session="old"), "Start", session="new")
    assert d.plan.state == "idle" and not d.plan.set_attention
    assert d.session == "new" and d.replace_session


def test_lifecycle_end_deregisters():
    assert decide(st("idle"), "End").kind == intake.DEREGISTER


def test_matcher_gates_the_claim():
    assert decide(None, "Ask", payload='{"notification_type":"idle_prompt"}').kind == intake.UNMAPPED
    d = decide(None, "Ask", payload='{"notification_type":"permission_prompt"}')
    assert (d.plan.state, d.plan.detail, d.plan.set_attention) == ("blocked", "permission", True)


def test_attention_on_entering_blocked_only_once():
    payload = '{"notification_type":"permission_prompt"}'
    assert not decide(st("blocked"), "Ask", payload=payload).plan.set_attention


def test_a_generic_permission_claim_keeps_the_standing_dialogs_detail():
    # claude: PermissionRequest for ExitPlanMode (plan), then ~6 s later the generic
    # Notification permission_prompt for the same dialog
    d = decide(None, "Ask", payload='{"tool_name":"ExitPlanMode"}')
    assert (d.plan.state, d.plan.detail) == ("blocked", "plan")
    payload = '{"notification_type":"permission_prompt"}'
    d = decide(st("blocked", detail="plan"), "Ask", payload=payload)
    assert (d.plan.state, d.plan.detail) == ("blocked", "plan")
    d = decide(st("blocked", detail="question", source="capture"), "Ask", payload=payload)
    assert d.plan.detail == "question"
    # from any other state, or over a plain blocked, the claim says permission
    for prev in (None, st("working"), st("idle"), st("blocked"), st("blocked", detail="permission")):
        assert decide(prev, "Ask", payload=payload).plan.detail == "permission"


def test_turn_end_raises_on_completion_and_on_an_idle_to_idle_second_completion():
    d = decide(st("working"), "Stop")
    assert d.plan.set_attention and d.record_turn
    d = decide(st("idle", attention=False), "Stop")  # second completion, mark down
    assert d.plan.set_attention and d.record_turn


def test_one_turn_on_two_channels_records_once():
    # codex: Stop then notify; the second finds the mark already standing
    d = decide(st("idle", attention=True), "notify", payload='{"type":"agent-turn-complete"}')
    assert not d.plan.set_attention and not d.record_turn


def test_unmapped_notify_changes_nothing():
    d = decide(st("working"), "notify", payload='{"type":"approval-requested"}')
    assert d.kind == intake.UNMAPPED and d.plan is None


def test_subagent_bookkeeping_and_ownership_guard():
    d = decide(st("working", session="main"), "SubagentStart", session="sub1")
    assert d.kind == intake.SUBAGENTS and d.subagents == ("sub1",)
    prev = st("working", session="main", subagents=("sub1",))
    assert decide(prev, "Stop", session="sub1").kind == intake.IGNORE
    assert decide(prev, "Stop", session="").kind == intake.IGNORE
    assert decide(prev, "Stop", session="main").kind == intake.STAMP
    d = decide(prev, "SubagentStop", session="sub1")
    assert d.subagents == ()

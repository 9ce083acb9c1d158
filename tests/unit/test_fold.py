"""The fold, rule by rule (behaviours 1-17 at the plan level) plus hypothesis properties."""

from __future__ import annotations

from hypothesis import given, strategies as st

from tma.core import plan as P, states
from tma.core.codec import Stamp
from tma.core.fold import Evidence, Facts, FoldConfig, verdict

CFG = FoldConfig()
ALL_VISIBLE = ("working", "idle", "blocked")


def ev(state, at, source="screen", detail=""):
    return Evidence(source, state, detail, at, f"{source}:{state}")


def stamp(state, *, source="capture", evidence_at=1000, since=None, pid=0, attention=False,
          detail="", prompt=""):
    return Stamp(state=state, detail=detail, source=source, evidence_at=evidence_at,
                 since=evidence_at if since is None else since, stamped_at=evidence_at,
                 pid=pid, attention=attention, prompt=prompt)


def fold(prev, evidence, now, facts=Facts(agent_pid=7), visible=ALL_VISIBLE, cfg=CFG,
         prompt=""):
    return verdict(prev, facts, evidence, visible, cfg, now, prompt)


# -- 1. the answered-prompt race, at the plan level
def test_blocker_older_than_the_hook_claim_holds():
    prev = stamp("working", source="hook", evidence_at=5000)
    assert fold(prev, [ev("blocked", 2000, detail="permission")], 6000).action == P.HOLD
    assert fold(prev, [ev("blocked", 5000, detail="permission")], 6000).action == P.HOLD


def test_blocker_newer_than_the_hook_claim_commits_under_the_carve_out():
    prev = stamp("working", source="hook", evidence_at=5000)
    plan = fold(prev, [ev("blocked", 6000, detail="permission")], 6010)
    assert plan.action == P.PUBLISH
    assert (plan.state, plan.detail, plan.source) == ("blocked", "permission", "capture")
    assert plan.guard == P.Guard(P.CARVE_OUT, at=6000)
    assert plan.set_attention and plan.evidence_at == 6000


# -- 2. a capture never clobbers a hook claim
def test_capture_working_over_a_hook_claim_is_protected():
    prev = stamp("idle", source="capture", evidence_at=1000)
    plan = fold(prev, [ev("working", 2000)], 2010)
    assert plan.guard.kind == P.PROTECT_HOOK  # the server-side guard holds a hook claim


# -- 5. dwell
def test_working_to_idle_dwell_is_inclusive_at_three_seconds():
    prev = stamp("working", evidence_at=10_000)
    for now in (11_000, 13_000):
        assert fold(prev, [ev("idle", now)], now).action == P.HOLD
    plan = fold(prev, [ev("idle", 14_000)], 14_000)
    assert (plan.action, plan.state, plan.set_attention) == (P.PUBLISH, "idle", True)


def test_idle_to_working_and_anything_to_blocked_are_immediate():
    prev = stamp("idle", evidence_at=10_000)
    assert fold(prev, [ev("working", 10_001)], 10_001).state == "working"
    prev = stamp("working", evidence_at=10_000)
    plan = fold(prev, [ev("blocked", 10_001)], 10_001)
    assert plan.state == "blocked" and plan.set_attention


# -- 6. coverage-aware decay
def test_hook_claim_decays_only_past_the_window_on_contrary_visible_chrome():
    prev = stamp("working", source="hook", evidence_at=0)
    assert fold(prev, [ev("idle", 60_000)], 60_000).action == P.HOLD
    plan = fold(prev, [ev("idle", 61_000)], 61_000)
    assert (plan.action, plan.state, plan.guard.kind) == (P.PUBLISH, "idle", P.UNCONDITIONAL)
    # not screen-visible for this agent: holds forever
    assert fold(prev, [ev("idle", 900_000)], 900_000, visible=("blocked",)).action == P.HOLD


def test_blocked_hook_claim_has_the_longer_window():
    prev = stamp("blocked", source="hook", evidence_at=0, detail="permission")
    assert fold(prev, [ev("idle", 300_000)], 300_000).action == P.HOLD
    assert fold(prev, [ev("idle", 300_001)], 300_001).state == "idle"
    assert fold(prev, [ev("idle", 900_000)], 900_000, visible=("working",)).action == P.HOLD


def test_decisive_chrome_ends_a_visible_hook_claim_once_it_has_stood_for_the_dwell():
    """[capture].decisive (Copilot's idle): a dialog dismissed with no hook, a turn that
    failed with no end event, end at the dwell, not the decay window."""
    for state in ("blocked", "working"):
        prev = stamp(state, source="hook", evidence_at=10_000, detail="")
        # within the dwell past the claim's evidence: the claim holds
        assert fold(prev, [ev("idle", 13_000)], 13_000).action == P.HOLD
        assert verdict(prev, Facts(agent_pid=7), [ev("idle", 13_000)], ALL_VISIBLE, CFG,
                       13_000, decisive=("idle",)).action == P.HOLD
        plan = verdict(prev, Facts(agent_pid=7), [ev("idle", 13_001)], ALL_VISIBLE, CFG,
                       13_001, decisive=("idle",))
        assert (plan.action, plan.state, plan.source) == (P.PUBLISH, "idle", "capture")
        # a hook claim written since the capture still wins, server-side
        assert plan.guard == P.Guard(P.CARVE_OUT, at=13_001)
        # without the declaration the claim waits for its decay window
        assert fold(prev, [ev("idle", 13_001)], 13_001).action == P.HOLD
        # a claim the screen cannot see is never ended by it
        assert verdict(prev, Facts(agent_pid=7), [ev("idle", 99_000)], ("idle",), CFG,
                       99_000, decisive=("idle",)).action == P.HOLD
    # working chrome is not decisive here: the hook's idle holds
    prev = stamp("idle", source="hook", evidence_at=10_000)
    assert verdict(prev, Facts(agent_pid=7), [ev("working", 20_000)], ALL_VISIBLE, CFG,
                   20_000, decisive=("idle",)).action == P.HOLD


def test_silence_never_decays_a_claim():
    for state in ("working", "idle", "blocked"):
        prev = stamp(state, source="hook", evidence_at=0)
        assert fold(prev, [], 10**9).action == P.HOLD


def test_agreeing_chrome_corroborates_the_hook_claim():
    prev = stamp("working", source="hook", evidence_at=1000)
    plan = fold(prev, [ev("working", 2000)], 2000)
    assert (plan.state, plan.source, plan.evidence_at) == ("working", "hook", 2000)
    assert plan.guard == P.Guard(P.REFRESH_CLAIM, state="working")
    prev = stamp("blocked", source="hook", evidence_at=1000, detail="permission")
    plan = fold(prev, [ev("blocked", 2000, detail="permission")], 2000)
    assert plan.guard == P.Guard(P.REFRESH_CLAIM, state="blocked")
    assert plan.detail == "permission" and not plan.set_attention


# -- 7. foreground cap
def test_foreground_cap_is_unknown_from_process():
    plan = fold(stamp("working"), [ev("working", 2000)], 2000,
                facts=Facts(agent_pid=7, foreground_is_agent=False))
    assert (plan.state, plan.source, plan.guard.kind) == ("unknown", "process", P.UNCONDITIONAL)


def test_foreground_cap_holds_a_live_hook_claim_while_the_pid_lives():
    prev = stamp("blocked", source="hook", detail="permission")
    plan = fold(prev, [], 2000, facts=Facts(agent_pid=7, foreground_is_agent=False))
    assert plan.action == P.HOLD
    plan = fold(prev, [], 2000, facts=Facts(agent_pid=0, foreground_is_agent=False))
    assert plan.state == "unknown"


def test_cap_precedes_freeze():
    plan = fold(stamp("idle"), [], 2000,
                facts=Facts(agent_pid=7, foreground_is_agent=False, scrolled=True))
    assert plan.state == "unknown"


# -- 8. freeze
def test_scrolled_or_history_view_freezes():
    prev = stamp("idle")
    for facts in (Facts(agent_pid=7, scrolled=True), Facts(agent_pid=7, history_view=True)):
        assert fold(prev, [ev("blocked", 2000, detail="permission")], 2000,
                    facts=facts).action == P.HOLD


def test_freeze_with_no_prior_is_unknown():
    plan = fold(None, [ev("blocked", 2000)], 2000, facts=Facts(agent_pid=7, history_view=True))
    assert plan.state == "unknown"


# -- 12. co-rendering ladder
def test_ladder_blocked_over_working_over_idle():
    evidence = [ev("idle", 2000), ev("working", 2000), ev("blocked", 2000, detail="permission")]
    assert fold(None, evidence, 2000).state == "blocked"
    assert fold(None, evidence[:2], 2000).state == "working"
    assert fold(None, evidence[:1], 2000).state == "idle"


def test_no_evidence_and_no_prior_is_unknown():
    plan = fold(None, [], 2000)
    assert (plan.action, plan.state) == (P.PUBLISH, "unknown")


# -- 16. episode boundary
def test_pid_change_resets_the_episode():
    prev = stamp("blocked", source="hook", pid=5, detail="permission", attention=True)
    plan = fold(prev, [ev("idle", 2000)], 2000, facts=Facts(agent_pid=6))
    assert plan.episode_reset and plan.guard.kind == P.UNCONDITIONAL
    assert plan.state == "idle" and not plan.set_attention


def test_same_or_unknown_pid_is_not_a_new_episode():
    prev = stamp("idle", pid=5)
    assert not fold(prev, [ev("idle", 2000)], 2000, facts=Facts(agent_pid=5)).episode_reset
    assert not fold(prev, [ev("idle", 2000)], 2000, facts=Facts(agent_pid=0)).episode_reset


# -- 17. attention on publish
def test_attention_raises_on_entering_blocked_and_on_completion_only():
    assert fold(stamp("idle"), [ev("blocked", 2000)], 2000).set_attention
    assert not fold(stamp("blocked"), [ev("blocked", 2000)], 2000).set_attention
    assert not fold(stamp("idle"), [ev("working", 2000)], 2000).set_attention
    assert not fold(stamp("unknown"), [ev("idle", 2000)], 2000).set_attention
    assert fold(stamp("working", evidence_at=0), [ev("idle", 9000)], 9000).set_attention


# -- properties
_states = st.sampled_from(states.STATES)
_sources = st.sampled_from(states.SOURCES)
_evidence = st.builds(ev, st.sampled_from(["working", "idle", "blocked"]),
                      st.integers(0, 10**6), st.sampled_from(["screen", "title"]))
_prev = st.one_of(st.none(), st.builds(
    stamp, _states, source=_sources, evidence_at=st.integers(0, 10**6),
    pid=st.integers(0, 3)))
_facts = st.builds(Facts, agent_pid=st.integers(0, 3))


@given(_prev, st.lists(_evidence, max_size=6), _facts, st.integers(0, 2 * 10**6))
def test_blocker_among_non_hook_noise_never_folds_to_idle(prev, noise, facts, now):
    blocker = ev("blocked", 500_000, detail="permission")
    plan = fold(prev, noise + [blocker], now, facts=facts)
    assert not (plan.action == P.PUBLISH and plan.state == "idle")


@given(_prev, st.lists(_evidence, max_size=6), _facts, st.integers(0, 2 * 10**6))
def test_the_dwell_holds_nothing_but_working_to_idle(prev, evidence, facts, now):
    with_dwell = fold(prev, evidence, now, facts=facts)
    without = fold(prev, evidence, now, facts=facts, cfg=FoldConfig(dwell_ms=0))
    if with_dwell != without:
        assert prev is not None and prev.state == "working"
        assert with_dwell.action == P.HOLD
        assert without.action == P.PUBLISH and without.state == "idle"


@given(_prev, st.lists(_evidence, max_size=6), _facts, st.integers(0, 2 * 10**6))
def test_plans_are_well_formed(prev, evidence, facts, now):
    plan = fold(prev, evidence, now, facts=facts)
    assert plan.action in (P.PUBLISH, P.HOLD)
    if plan.action == P.PUBLISH:
        assert plan.state in states.STATES
        assert plan.source in states.SOURCES
        assert states.safe_detail(plan.detail) == plan.detail
        if plan.state == "blocked" and plan.source == "capture" and not plan.episode_reset:
            assert plan.guard.kind in (P.CARVE_OUT, P.UNCONDITIONAL)


# -- evidence from the future (a wall clock stepped back, issue 18)
_far_ahead = st.integers(5_001, 10**9)


@given(st.sampled_from(states.STATES), _sources, st.lists(_evidence, max_size=6), _facts,
       st.integers(0, 2 * 10**6), _far_ahead)
def test_evidence_dated_beyond_the_skew_orders_before_every_event(state, source, evidence,
                                                                   facts, now, ahead):
    """A stored claim dated further ahead of now than the skew folds exactly as the
    oldest claim would: it never holds a later event."""
    future = stamp(state, source=source, evidence_at=now + ahead, pid=facts.agent_pid)
    oldest = future.replace(evidence_at=0)
    assert fold(future, evidence, now, facts=facts) == fold(oldest, evidence, now, facts=facts)


def test_a_working_hook_claim_from_the_future_yields_to_an_idle_screen():
    prev = stamp("working", source="hook", evidence_at=100_000 + 10_000)
    plan = fold(prev, [ev("idle", 100_000)], 100_000)
    assert (plan.action, plan.state, plan.guard.kind) == (P.PUBLISH, "idle", P.UNCONDITIONAL)
    inside = fold(stamp("working", source="hook", evidence_at=100_000 + 4_000),
                  [ev("idle", 100_000)], 100_000)
    assert inside.action == P.HOLD  # within the skew: still a fresh claim


# -- a blocked episode is one prompt (issue 28; tma.core.prompt)
A = "permission:0123456789abcdef"
B = "permission:fedcba9876543210"


def test_another_prompt_on_a_blocked_screen_starts_a_new_episode():
    prev = stamp("blocked", detail="permission", evidence_at=1000, prompt=A)
    plan = fold(prev, [ev("blocked", 2000, detail="permission")], 2000, prompt=B)
    assert (plan.action, plan.state, plan.new_prompt, plan.prompt) == (P.PUBLISH, "blocked",
                                                                      True, B)
    assert plan.set_attention and plan.moves_since and not plan.episode_reset
    assert plan.guard == P.Guard(P.CARVE_OUT, at=2000)  # a newer hook claim still wins
    same = fold(prev, [ev("blocked", 2000, detail="permission")], 2000, prompt=A)
    assert not same.new_prompt and not same.set_attention and same.prompt == A


def test_another_prompt_under_a_blocked_hook_claim_is_the_screens_new_episode():
    prev = stamp("blocked", source="hook", detail="permission", evidence_at=1000, prompt=A)
    plan = fold(prev, [ev("blocked", 2000, detail="permission")], 2000, prompt=B)
    assert (plan.source, plan.new_prompt, plan.prompt) == ("capture", True, B)
    assert plan.guard == P.Guard(P.CARVE_OUT, at=2000) and plan.set_attention
    same = fold(prev, [ev("blocked", 2000, detail="permission")], 2000, prompt=A)
    assert (same.source, same.guard.kind, same.new_prompt) == ("hook", P.REFRESH_CLAIM, False)


def test_an_unread_or_unrecorded_prompt_is_never_a_new_episode():
    blocker = [ev("blocked", 2000, detail="permission")]
    recorded = stamp("blocked", detail="permission", prompt=A)
    for prev, prompt in ((recorded, ""), (recorded, "permission:"),
                         (stamp("blocked", detail="permission"), B)):
        plan = fold(prev, blocker, 2000, prompt=prompt)
        assert not plan.new_prompt and not plan.set_attention, (prev, prompt)
    # the first reading of an episode's prompt is recorded, and starts nothing
    first = fold(stamp("blocked", detail="permission"), blocker, 2000, prompt=B)
    assert first.prompt == B and not first.moves_since


_identity = st.sampled_from(["", "permission:", A, B, "plan:", "question:"])


@given(_prev, _identity, st.lists(_evidence, max_size=4), _facts, st.integers(0, 2 * 10**6),
       _identity)
def test_a_blocked_pane_starts_a_new_episode_exactly_for_another_prompt(prev, recorded, noise,
                                                                        facts, now, prompt):
    """Whatever the stamp and the screen's other chrome: a blocked pane whose screen shows
    a blocker starts a new episode (since moves, the mark is raised) exactly when
    `prompt.changed` says the recorded prompt and the one on screen differ; an episode
    reset (another agent process) is an episode of its own; nothing else records a
    prompt but a blocked verdict."""
    from tma.core.prompt import changed

    if prev is not None:
        prev = prev.replace(prompt=recorded)
    plan = fold(prev, noise + [ev("blocked", now, detail="permission")], now, facts=facts,
                prompt=prompt)
    same_process = prev is not None and not (prev.pid and facts.agent_pid
                                             and prev.pid != facts.agent_pid)
    blocked_before = same_process and prev is not None and prev.state == "blocked"
    assert plan.new_prompt == (blocked_before and changed(recorded, prompt))
    if plan.new_prompt:
        assert (plan.action, plan.state) == (P.PUBLISH, "blocked")
        assert plan.set_attention and plan.moves_since and plan.prompt == prompt
    if plan.action == P.PUBLISH and plan.state != "blocked":
        assert not plan.prompt

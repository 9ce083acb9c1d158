"""The guarded writes against a real tmux: the guarded-write traces, field by field.

Every write goes through `tma debug stamp` (one guarded chain rendered by
tma.tmux.write, the one renderer) and every trace asserts the whole stored tuple
afterwards, so a guard that holds one field but commits another shows up here.
The hypothesis property at the end replays random write sequences against the same
server and checks them against a small model of the guard formats.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tma.core import options, plan as P
from tma.core.codec import FUTURE_SKEW_MS
from tma.runtime import cycle
from tma.tmux import write
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

TUPLE = ("@agent_state", "@agent_detail", "@agent_source", "@agent_since",
         "@agent_evidence_at", "@agent_stamped_at", "@agent_attention", "@agent_name",
         "@agent_pid")
SHORT = {"state": "@agent_state", "detail": "@agent_detail", "source": "@agent_source",
         "since": "@agent_since", "evidence": "@agent_evidence_at",
         "stamped": "@agent_stamped_at", "attention": "@agent_attention",
         "name": "@agent_name", "pid": "@agent_pid"}


def opts(srv, pane: str) -> dict[str, str]:
    """The pane's options as `srv.options` shows them, tmux's `''` read as empty."""
    return {k: ("" if v == "''" else v) for k, v in srv.options(pane).items()}


def tuple_of(srv, pane: str) -> dict[str, str]:
    """Every tuple field; absent and empty both read as "" (what a reader sees)."""
    o = opts(srv, pane)
    return {k: o.get(SHORT[k], "") for k in SHORT}


def expect(srv, pane: str, **want) -> dict[str, str]:
    """Assert EVERY tuple field: the ones named must match, the rest must be empty."""
    got = tuple_of(srv, pane)
    full = {k: str(want.get(k, "")) for k in SHORT}
    assert got == full
    return got


def stamp(srv, pane: str, *, state: str = "idle", detail: str = "", source: str = "capture",
          at: int, now: int | None = None, guard: str = "unconditional", name: str = "fake",
          pid: int = 0, mode: str = "publish", attention: bool = False, reset: bool = False,
          hash: str = "") -> None:
    argv = ["debug", "stamp", pane, "--mode", mode, "--state", state, "--detail", detail,
            "--source", source, "--evidence-at", str(at),
            "--stamped-at", str(at if now is None else now), "--guard", guard,
            "--name", name, "--pid", str(pid)]
    if attention:
        argv.append("--attention")
    if reset:
        argv.append("--episode-reset")
    if hash:
        argv += ["--hash", hash]
    res = srv.tma(*argv)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


@pytest.fixture
def pane(srv):
    return srv.shell_pane()


# ---------------------------------------------------------------- the -F probe


def test_probe_expands_and_caches(srv, pane):
    server = Server(srv.tmux_bin, socket_name=srv.name)
    assert cycle.probe(server) is True
    assert srv.tmux("show-options", "-sv", "@tma_setpf_ok").strip() == "1"
    # and the guarded form really is expanded, not stored literally
    stamp(srv, pane, state="working", at=1000, guard="protect-hook")
    assert srv.option(pane, "@agent_state") == "working"
    assert "#{" not in srv.tmux("show-options", "-p", "-t", pane)


# ---------------------------------------------------------------- seed traces


def test_trace_a_capture_never_clobbers_a_hook_claim(srv, pane):
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=1000,
          name="fake", pid=11)
    expect(srv, pane, state="blocked", detail="permission", source="hook", since=1000,
           evidence=1000, stamped=1000, name="fake", pid=11)
    before = opts(srv, pane)
    stamp(srv, pane, state="working", source="capture", at=2000, guard="protect-hook",
          name="other", pid=22, hash="abcd")
    # a losing producer changes nothing: not the state, not name/pid/hash, not stamped_at
    assert opts(srv, pane) == before
    # idle and unknown hold the same way
    for state in ("idle", "unknown"):
        stamp(srv, pane, state=state, at=3000, guard="protect-hook", attention=True)
        assert opts(srv, pane) == before


def test_trace_a_commits_over_a_capture_claim(srv, pane):
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=1000)
    stamp(srv, pane, state="working", source="capture", at=2000, guard="protect-hook")
    expect(srv, pane, state="working", source="capture", since=2000, evidence=2000,
           stamped=2000, name="fake", pid=0)


def test_trace_b1_blocker_newer_than_the_hook_claim_commits(srv, pane):
    stamp(srv, pane, state="working", source="hook", at=1000)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=2000,
          guard="carveout:2000", attention=True)
    expect(srv, pane, state="blocked", detail="permission", source="capture", since=2000,
           evidence=2000, stamped=2000, attention=1, name="fake", pid=0)


@pytest.mark.parametrize("capture_ms", [2000, 5000])
def test_trace_b2_blocker_not_newer_is_fully_suppressed(srv, pane, capture_ms):
    stamp(srv, pane, state="working", source="hook", at=5000)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=capture_ms,
          guard=f"carveout:{capture_ms}", attention=True, name="other", pid=22, hash="abcd")
    expect(srv, pane, state="working", source="hook", since=5000, evidence=5000,
           stamped=5000, name="fake", pid=0)
    assert "@agent_hash" not in opts(srv, pane)  # the held write's identity never lands
    # nothing of the held chain reached the pane, not even an empty attention option
    assert "@agent_attention" not in opts(srv, pane)


def test_trace_b_one_ms_newer_commits(srv, pane):
    stamp(srv, pane, state="working", source="hook", at=5000)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=5001,
          guard="carveout:5001", attention=True)
    expect(srv, pane, state="blocked", detail="permission", source="capture", since=5001,
           evidence=5001, stamped=5001, attention=1, name="fake", pid=0)


def test_carveout_commits_over_a_capture_claim_whatever_its_evidence(srv, pane):
    stamp(srv, pane, state="working", source="capture", at=9000)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=2000,
          guard="carveout:2000")
    expect(srv, pane, state="blocked", detail="permission", source="capture", since=2000,
           evidence=2000, stamped=2000, name="fake", pid=0)


# ---------------------------------------------------------------- hook vs hook


def test_hook_arbitration_older_event_is_suppressed_entirely(srv, pane):
    stamp(srv, pane, state="working", source="hook", at=5000)
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=4000,
          guard="hook:4000", attention=True)
    expect(srv, pane, state="working", source="hook", since=5000, evidence=5000, stamped=5000,
           name="fake", pid=0)
    # an equal event time is not strictly newer: it commits
    stamp(srv, pane, state="idle", source="hook", at=5000, guard="hook:5000")
    expect(srv, pane, state="idle", source="hook", since=5000, evidence=5000, stamped=5000,
           name="fake", pid=0)
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=6000,
          guard="hook:6000", attention=True)
    expect(srv, pane, state="blocked", detail="permission", source="hook", since=6000,
           evidence=6000, stamped=6000, attention=1, name="fake", pid=0)


def test_a_late_write_still_loses_to_a_newer_claim_within_the_writers_skew(srv, pane):
    # a hook event from t=4000 stamped late, at t=12000 (queued in the daemon's storm
    # queue): the claim written at 10000 meanwhile is newer evidence and within the skew
    # of the writer's clock, so it holds, though it is more than the skew after 4000
    stamp(srv, pane, state="working", source="hook", at=10000)
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=4000, now=12000,
          guard="hook:4000", attention=True)
    expect(srv, pane, state="working", source="hook", since=10000, evidence=10000,
           stamped=10000, name="fake", pid=0)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=4000,
          now=12000, guard="carveout:4000")
    expect(srv, pane, state="working", source="hook", since=10000, evidence=10000,
           stamped=10000, name="fake", pid=0)
    # a claim dated beyond the skew ahead of the writer's clock (a clock stepped back
    # since) never holds: the late write commits
    stamp(srv, pane, state="working", source="hook", at=20000)
    stamp(srv, pane, state="idle", source="hook", at=4000, now=12000, guard="hook:4000")
    expect(srv, pane, state="idle", source="hook", since=4000, evidence=4000, stamped=12000,
           name="fake", pid=0)


@pytest.mark.parametrize("stored_source", ["capture", "process"])
def test_hook_arbitration_ignores_non_hook_claims(srv, pane, stored_source):
    # the stored evidence is NEWER than the event: only a hook claim can hold a hook write,
    # and the whole tuple commits (evidence_at and attention too, not just the state)
    stamp(srv, pane, state="working", source=stored_source, at=9000)
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=4000,
          guard="hook:4000", attention=True)
    expect(srv, pane, state="blocked", detail="permission", source="hook", since=4000,
           evidence=4000, stamped=4000, attention=1, name="fake", pid=0)


@pytest.mark.parametrize("event_ms", [1_700_000_000_500, 1_699_999_999_000])
def test_legacy_seconds_evidence_never_makes_a_ms_event_older(srv, pane, event_ms):
    legacy = 1_700_000_000  # 10-digit epoch seconds left by an old writer
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=legacy)
    stamp(srv, pane, state="working", source="hook", at=event_ms, guard=f"hook:{event_ms}")
    expect(srv, pane, state="working", source="hook", since=event_ms, evidence=event_ms,
           stamped=event_ms, name="fake", pid=0)


# ---------------------------------------------------------------- write-once since


def test_since_is_written_once_per_state_run(srv, pane):
    stamp(srv, pane, state="working", at=1000)
    stamp(srv, pane, state="working", at=2000)
    expect(srv, pane, state="working", source="capture", since=1000, evidence=2000,
           stamped=2000, name="fake", pid=0)
    stamp(srv, pane, state="working", source="hook", at=2500, guard="hook:2500")
    expect(srv, pane, state="working", source="hook", since=1000, evidence=2500,
           stamped=2500, name="fake", pid=0)
    stamp(srv, pane, state="idle", source="hook", at=3000, guard="hook:3000")
    expect(srv, pane, state="idle", source="hook", since=3000, evidence=3000, stamped=3000,
           name="fake", pid=0)


def test_since_stranded_ahead_by_a_clock_step_is_rewritten(srv, pane):
    stamp(srv, pane, state="idle", at=10_000)
    # exactly 2000 ahead of the new stamp: still held
    stamp(srv, pane, state="idle", at=8000)
    expect(srv, pane, state="idle", source="capture", since=10_000, evidence=8000,
           stamped=8000, name="fake", pid=0)
    # more than 2000 ahead: a backward clock step, rewritten
    stamp(srv, pane, state="idle", at=7999)
    expect(srv, pane, state="idle", source="capture", since=7999, evidence=7999,
           stamped=7999, name="fake", pid=0)


# ---------------------------------------------------------------- corroboration


def test_refresh_commits_only_while_the_claimed_state_stands(srv, pane):
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=1000)
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=3000,
          guard="refresh:blocked")
    expect(srv, pane, state="blocked", detail="permission", source="hook", since=1000,
           evidence=3000, stamped=3000, name="fake", pid=0)
    # the hook moved the pane on in between: the corroboration must not resurrect blocked
    stamp(srv, pane, state="working", source="hook", at=4000, guard="hook:4000")
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=5000,
          guard="refresh:blocked")
    expect(srv, pane, state="working", source="hook", since=4000, evidence=4000, stamped=4000,
           name="fake", pid=0)


# ---------------------------------------------------------------- episode reset


def _seed_marks(srv, pane: str) -> None:
    for key, value in (("@agent_attention", "1"), ("@agent_notified_at", "1500"),
                       ("@agent_turn_at", "1600")):
        srv.tmux("set-option", "-p", "-t", pane, key, value)


def test_episode_reset_rewrites_unconditionally(srv, pane):
    stamp(srv, pane, state="idle", source="hook", at=1000, pid=11)
    _seed_marks(srv, pane)
    # same state, older evidence, stored hook claim: an episode reset still rewrites it all
    stamp(srv, pane, state="idle", source="capture", at=900, pid=22, reset=True)
    expect(srv, pane, state="idle", source="capture", since=900, evidence=900, stamped=900,
           name="fake", pid=22)
    o = opts(srv, pane)
    for key in ("@agent_attention", "@agent_notified_at", "@agent_turn_at"):
        assert key not in o


def test_episode_reset_that_raises_keeps_attention(srv, pane):
    stamp(srv, pane, state="working", source="hook", at=1000, pid=11)
    _seed_marks(srv, pane)
    stamp(srv, pane, state="blocked", detail="permission", source="capture", at=2000, pid=22,
          reset=True, attention=True)
    expect(srv, pane, state="blocked", detail="permission", source="capture", since=2000,
           evidence=2000, stamped=2000, attention=1, name="fake", pid=22)
    o = opts(srv, pane)
    assert "@agent_notified_at" not in o and "@agent_turn_at" not in o


# ---------------------------------------------------------------- remove and hold


SURVIVORS = {"@agent_action": "99:n:1:x", "@agent_mute_until": "4102444800000",
             "@tma_watch_pid": "4242", "@agent_ignore": "1"}


def test_remove_unsets_the_episode_set_and_spares_the_survivors(srv, pane):
    for i, key in enumerate(options.EPISODE_OPTIONS):
        srv.tmux("set-option", "-p", "-t", pane, key, f"v{i}")
    for key, value in SURVIVORS.items():
        srv.tmux("set-option", "-p", "-t", pane, key, value)
    assert set(options.EPISODE_OPTIONS) <= set(opts(srv, pane))
    stamp(srv, pane, mode="remove", at=1000)
    assert opts(srv, pane) == SURVIVORS


def test_remove_of_a_real_stamp(srv, pane):
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=1000,
          attention=True, hash="ff")
    srv.tmux("set-option", "-p", "-t", pane, "@agent_mute_until", "4102444800000")
    stamp(srv, pane, mode="remove", at=2000)
    assert opts(srv, pane) == {"@agent_mute_until": "4102444800000"}


def test_hold_moves_only_stamped_at_and_hash(srv, pane):
    stamp(srv, pane, state="blocked", detail="permission", source="hook", at=1000,
          attention=True, hash="aaaa", pid=7)
    before = opts(srv, pane)
    stamp(srv, pane, mode="hold", state="idle", source="capture", at=9000, hash="bbbb",
          name="other", pid=8)
    after = opts(srv, pane)
    assert after == dict(before, **{"@agent_stamped_at": "9000", "@agent_hash": "bbbb"})
    # without a hash only stamped_at moves
    stamp(srv, pane, mode="hold", at=9500)
    assert opts(srv, pane) == dict(after, **{"@agent_stamped_at": "9500"})


# ---------------------------------------------------------------- sanitised values


@pytest.mark.parametrize("detail", ["a#{b", "a,b", "a}b", "a b", "#{pane_id}", "Perm", "a\tb"])
def test_unsafe_detail_is_written_empty(srv, pane, detail):
    stamp(srv, pane, state="blocked", detail=detail, source="capture", at=1000,
          guard="protect-hook")
    expect(srv, pane, state="blocked", source="capture", since=1000, evidence=1000,
           stamped=1000, name="fake", pid=0)
    assert srv.option(pane, "@agent_detail") == ""


@pytest.mark.parametrize("name", ["x#{pane_id}", "#{?1,a,b}", 'a"b$HOME\\c', "a;b", "a b,}"])
def test_name_is_stored_literally(srv, pane, name):
    stamp(srv, pane, state="idle", source="capture", at=1000, name=name,
          guard="protect-hook")
    assert srv.option(pane, "@agent_name") == name
    assert srv.option(pane, "@agent_state") == "idle"
    assert srv.option(pane, "@agent_stamped_at") == "1000"


# ---------------------------------------------------------------- property

STATES = ("idle", "working", "blocked", "unknown")
GUARDS = ("unconditional", "protect-hook", "carveout", "hook", "refresh")


def _model(stored: dict, state: str, source: str, evidence: int, now: int, guard: str,
           claimed: str) -> tuple[dict, bool]:
    """The guards (machinery 3.4), evaluated client-side over a known store."""
    hook = stored.get("source") == "hook"
    stored_ev = int(stored.get("evidence") or 0)
    held = {"unconditional": False,
            "protect-hook": hook,
            # stored evidence more than the skew ahead of the writer's clock (or of the
            # write's evidence, if later) never holds it
            "carveout": hook and evidence <= stored_ev <= max(evidence, now) + FUTURE_SKEW_MS,
            "hook": hook and evidence < stored_ev <= max(evidence, now) + FUTURE_SKEW_MS,
            "refresh": stored.get("state", "") != claimed}[guard]
    if held:
        return dict(stored), True  # a losing producer changes nothing
    new = dict(stored, stamped=str(now), name="prop", pid="0")
    since = stored.get("since", "")
    keep = stored.get("state") == state and since and int(since) <= now + 2000
    new.update(state=state, detail="", source=source, evidence=str(evidence),
               since=since if keep else str(evidence))
    return new, False


# The guard/source pairs the fold and the hook intake produce: protect-hook and the
# carve-out for capture writes, hook arbitration for hook writes, refresh for a hook
# corroboration of the claimed state, unconditional for anything.
step = st.tuples(st.sampled_from(STATES), st.sampled_from(GUARDS),
                 st.sampled_from(("hook", "capture", "process")), st.integers(1, 3000),
                 st.integers(0, 8000))
SOURCE_FOR = {"protect-hook": "capture", "carveout": "capture", "hook": "hook",
              "refresh": "hook"}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=10))
def test_property_since_is_write_once_and_a_held_write_changes_nothing(srv, steps):
    if not srv.started:
        srv.shell_pane()
    pane = srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()[0]
    server = Server(srv.tmux_bin, socket_name=srv.name)
    server.source([write.remove(pane)])
    t = 1_700_000_000_000
    model: dict = {}
    prev = tuple_of(srv, pane)
    for state, guard_kind, source, gap, lag in steps:
        source = SOURCE_FOR.get(guard_kind, source)
        claimed = state
        t += gap
        evidence = t - lag
        if guard_kind in (P.CARVE_OUT, P.HOOK_ARBITRATE):
            guard = P.Guard(guard_kind, at=evidence)
        elif guard_kind == P.REFRESH_CLAIM:
            guard = P.Guard(guard_kind, state=claimed)
        else:
            guard = P.Guard(guard_kind)
        plan = P.Plan(P.PUBLISH, state=state, source=source, evidence_at=evidence, guard=guard)
        _out, err = server.source([write.render(pane, plan, t, name="prop", pid=0)])
        assert err == ""
        got = tuple_of(srv, pane)
        model, held = _model(model, state, source, evidence, t, guard_kind, claimed)
        if held:
            assert got == prev  # the whole tuple, stamped_at included, as it was
            continue
        # a committed write ends with this write's stamped_at
        assert got["stamped"] == str(t)
        # since changes only when the state changes (write-once per state run) ...
        if got["state"] == prev["state"]:
            assert got["since"] == prev["since"]
        else:
            # ... and a state change stamps since from this write's evidence
            assert got["since"] == str(evidence)
        assert got == {k: model.get(k, "") for k in SHORT}
        prev = got

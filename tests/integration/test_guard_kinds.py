"""Every guard kind against a real tmux: a held write leaves the pane byte-identical,
a committed write stores the new tuple ending with @agent_stamped_at.

The writes go through `tma.tmux.write.render` and one `source-file` each, as the cycle
and the hook intake send them; "byte-identical" compares every pane option tmux lists
(`show-options -p`), companions and absent options included. The short write (a tuple
that only moves evidence_at, hash and stamped_at) is checked against the full chain:
wherever the options it was folded against still stand, both leave the same pane.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tma.core import plan as P
from tma.tmux import write
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

TUPLE_KEYS = ("@agent_since", "@agent_state", "@agent_detail", "@agent_source",
              "@agent_evidence_at", "@agent_attention", "@agent_hash", "@agent_pid",
              "@agent_name", "@agent_stamped_at")
NOW = 1_800_000_010_000

# A hook claim as the hook intake leaves it, with companions a held write must not touch.
HOOK_CLAIM = {"@agent_since": "1800000000000", "@agent_state": "working",
              "@agent_detail": "", "@agent_source": "hook",
              "@agent_evidence_at": "1800000005000", "@agent_hash": "aaaa1111",
              "@agent_pid": "11", "@agent_name": "fake",
              "@agent_stamped_at": "1800000005000", "@agent_session": "sess-1"}
CAPTURE_CLAIM = dict(HOOK_CLAIM, **{"@agent_source": "capture", "@agent_state": "idle"})


def seed(srv, pane: str, options: dict[str, str]) -> dict[str, str]:
    srv.tmux("set-option", "-p", "-t", pane, "@x", "1")  # a pane-level option block
    Server(srv.tmux_bin, socket_name=srv.name).source([write.remove(pane)])
    for key, value in options.items():
        srv.tmux("set-option", "-p", "-t", pane, key, value)
    return srv.options(pane)


def apply(srv, line: str) -> None:
    _out, err = Server(srv.tmux_bin, socket_name=srv.name).source([line])
    assert err == "", err


def tuple_order(line: str) -> list[str]:
    """The tuple options in the order the rendered line writes them."""
    keys = re.findall(r"set-option -p (?:-F |-u )?-t \S+ (@\w+)", line)
    return [k for k in keys if k in TUPLE_KEYS]


def plan(state: str, guard: P.Guard, *, source: str = "capture", at: int = NOW,
         detail: str = "", attention: bool = False) -> P.Plan:
    return P.Plan(P.PUBLISH, state=state, detail=detail, source=source, evidence_at=at,
                  guard=guard, set_attention=attention)


EXTRAS = (write.Extra("@agent_turn_at", str(NOW)),
          write.Extra("@agent_notified_at", str(NOW), True, write.already_notified()))

# (guard, plan state, plan source, stored tuple, holds?)
CASES = [
    ("protect-hook held", P.Guard(P.PROTECT_HOOK), "idle", "capture", HOOK_CLAIM, True),
    ("protect-hook commits", P.Guard(P.PROTECT_HOOK), "working", "capture", CAPTURE_CLAIM,
     False),
    ("carve-out held", P.Guard(P.CARVE_OUT, at=1800000005000), "blocked", "capture",
     HOOK_CLAIM, True),
    ("carve-out commits", P.Guard(P.CARVE_OUT, at=1800000005001), "blocked", "capture",
     HOOK_CLAIM, False),
    ("hook held", P.Guard(P.HOOK_ARBITRATE, at=1800000004999), "idle", "hook", HOOK_CLAIM,
     True),
    ("hook commits", P.Guard(P.HOOK_ARBITRATE, at=1800000005000), "idle", "hook", HOOK_CLAIM,
     False),
    ("refresh held", P.Guard(P.REFRESH_CLAIM, state="blocked"), "blocked", "hook",
     HOOK_CLAIM, True),
    ("refresh commits", P.Guard(P.REFRESH_CLAIM, state="working"), "working", "hook",
     HOOK_CLAIM, False),
]


@pytest.mark.parametrize("short", [False, True], ids=["full", "with-stored"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_held_is_byte_identical_committed_ends_with_stamped_at(srv, case, short):
    _label, guard, state, source, stored, holds = case
    pane = srv.shell_pane()
    before = seed(srv, pane, stored)
    detail = "permission" if state == "blocked" else ""
    p = plan(state, guard, source=source, at=guard.at or NOW, detail=detail,
             attention=state == "blocked")
    assert write.would_hold(guard, before, NOW) is holds
    line = write.render(pane, p, NOW, name="fake", pid=11, hash="bbbb2222", extras=EXTRAS,
                        stored=before if short else None)
    apply(srv, line)
    after = srv.options(pane)
    if holds:
        assert after == before
        return
    # committed: the whole new tuple, the companions with it, stamped_at written last
    assert tuple_order(line)[-1] == "@agent_stamped_at"
    assert after["@agent_state"] == state and after["@agent_source"] == source
    assert after["@agent_evidence_at"] == str(p.evidence_at)
    assert after["@agent_stamped_at"] == str(NOW)
    assert (after["@agent_hash"], after["@agent_pid"], after["@agent_name"]) == (
        "bbbb2222", "11", "fake")
    assert after["@agent_turn_at"] == after["@agent_notified_at"] == str(NOW)
    keep = stored["@agent_state"] == state
    assert after["@agent_since"] == (stored["@agent_since"] if keep else str(p.evidence_at))


def test_unconditional_commits_over_anything(srv):
    pane = srv.shell_pane()
    seed(srv, pane, HOOK_CLAIM)
    p = P.Plan(P.PUBLISH, state="idle", source="capture", evidence_at=NOW,
               guard=P.Guard(P.UNCONDITIONAL), episode_reset=True)
    line = write.render(pane, p, NOW, name="fake", pid=12)
    assert not line.startswith("if-shell")  # nothing to decide: a plain chain
    apply(srv, line)
    o = srv.options(pane)
    assert (o["@agent_state"], o["@agent_since"], o["@agent_stamped_at"], o["@agent_pid"]) == (
        "idle", str(NOW), str(NOW), "12")
    assert tuple_order(line)[-1] == "@agent_stamped_at"


def test_a_held_write_still_runs_its_unguarded_companions(srv):
    """Unguarded companions (before the block, so that stamped_at stays the last option
    the block sets) are written even when the block holds."""
    pane = srv.shell_pane()
    before = seed(srv, pane, HOOK_CLAIM)
    p = plan("idle", P.Guard(P.PROTECT_HOOK))
    line = write.render(pane, p, NOW, name="fake", pid=11,
                        extras=(write.Extra("@agent_model", "m-1", False),))
    apply(srv, line)
    assert srv.options(pane) == dict(before, **{"@agent_model": "m-1"})


def test_then_commands_run_only_with_the_tuple(srv):
    pane = srv.shell_pane()
    window = srv.display(pane, "#{window_id}")
    seed(srv, pane, HOOK_CLAIM)
    roll = write.rollup("window", window, "●1")
    held = plan("idle", P.Guard(P.HOOK_ARBITRATE, at=1800000004000), source="hook")
    apply(srv, write.render(pane, held, NOW, name="fake", pid=11, then=(roll,)))
    assert srv.tmux("show-options", "-wqv", "-t", window, "@agent_summary").strip() == ""
    wins = plan("idle", P.Guard(P.HOOK_ARBITRATE, at=NOW), source="hook")
    apply(srv, write.render(pane, wins, NOW, name="fake", pid=11, then=(roll,)))
    assert srv.tmux("show-options", "-wqv", "-t", window, "@agent_summary").strip() == "●1"


# ---------------------------------------------------------------- the short write


def test_short_write_for_an_unchanged_tuple(srv):
    pane = srv.shell_pane()
    before = seed(srv, pane, CAPTURE_CLAIM)
    p = plan("idle", P.Guard(P.PROTECT_HOOK))
    line = write.render(pane, p, NOW, name="fake", pid=11, hash="cccc3333", stored=before)
    assert tuple_order(line) == ["@agent_evidence_at", "@agent_hash", "@agent_stamped_at"]
    apply(srv, line)
    assert srv.options(pane) == dict(before, **{"@agent_evidence_at": str(NOW),
                                                "@agent_hash": "cccc3333",
                                                "@agent_stamped_at": str(NOW)})
    # an unchanged hash is not rewritten
    again = write.render(pane, p.replace(evidence_at=NOW + 5), NOW + 5, name="fake", pid=11,
                         hash="cccc3333", stored=srv.options(pane))
    assert tuple_order(again) == ["@agent_evidence_at", "@agent_stamped_at"]


@pytest.mark.parametrize("field, value", [
    ("@agent_state", "working"), ("@agent_detail", "permission"), ("@agent_source", "hook"),
    ("@agent_pid", "12"), ("@agent_name", "other"), ("@agent_since", "1800000020000")])
def test_short_write_holds_when_another_producer_moved_the_rest(srv, field, value):
    """Folded against a read that no longer stands: the short write changes nothing
    (and the stranded-since case, which the full chain would rewrite, holds too)."""
    pane = srv.shell_pane()
    read_then = seed(srv, pane, CAPTURE_CLAIM)
    p = plan("idle", P.Guard(P.PROTECT_HOOK) if field != "@agent_source"
             else P.Guard(P.UNCONDITIONAL))
    line = write.render(pane, p, NOW, name="fake", pid=11, hash="cccc3333", stored=read_then)
    srv.tmux("set-option", "-p", "-t", pane, field, value)  # the write in between
    before = srv.options(pane)
    apply(srv, line)
    assert srv.options(pane) == before


def test_short_write_is_not_used_where_it_cannot_be_exact(srv):
    stored = dict(CAPTURE_CLAIM)
    p = plan("idle", P.Guard(P.PROTECT_HOOK))
    full = len(tuple_order(write.render("%0", p, NOW, name="fake", pid=11)))
    for change in ({"@agent_since": "0"}, {"@agent_since": str(NOW + 2001)},
                   {"@agent_name": "a b"}):
        line = write.render("%0", p, NOW, name=change.get("@agent_name", "fake"), pid=11,
                            stored=dict(stored, **change))
        assert len(tuple_order(line)) == full, change
    for other in (p.replace(set_attention=True), p.replace(episode_reset=True),
                  p.replace(state="working")):
        assert len(tuple_order(write.render("%0", other, NOW, name="fake", pid=11,
                                            stored=stored))) >= full - 1


STATES = ("idle", "working", "blocked", "unknown")
SOURCES = ("hook", "capture", "process")
stored_tuple = st.fixed_dictionaries({
    "@agent_state": st.sampled_from(STATES), "@agent_source": st.sampled_from(SOURCES),
    "@agent_detail": st.sampled_from(("", "permission")),
    "@agent_since": st.sampled_from(("1800000000000", "1800000013000")),
    "@agent_evidence_at": st.sampled_from(("1800000005000", "1800000010000",
                                           "1800000015000")),
    "@agent_hash": st.sampled_from(("aaaa1111", "bbbb2222")),
    "@agent_pid": st.sampled_from(("11", "12")), "@agent_name": st.just("fake"),
    "@agent_stamped_at": st.just("1800000005000")})
guards = st.one_of(
    st.sampled_from((P.Guard(P.UNCONDITIONAL), P.Guard(P.PROTECT_HOOK))),
    st.builds(lambda k, at: P.Guard(k, at=at), st.sampled_from((P.CARVE_OUT, P.HOOK_ARBITRATE)),
              st.sampled_from((1800000005000, 1800000010000, 1800000012000))),
    st.builds(lambda s: P.Guard(P.REFRESH_CLAIM, state=s), st.sampled_from(STATES)))


def _readable(options: dict[str, str]) -> dict[str, str]:
    """What a reader sees: an empty option reads as absent."""
    return {k: v for k, v in options.items() if v not in ("", "''", '""')}


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(stored=stored_tuple, guard=guards, state=st.sampled_from(STATES),
       source=st.sampled_from(SOURCES), detail=st.sampled_from(("", "permission")),
       hash=st.sampled_from(("aaaa1111", "cccc3333")), pid=st.sampled_from((11, 12)),
       same=st.booleans())
def test_property_with_stored_equals_full_chain_and_would_hold_predicts(
        srv, stored, guard, state, source, detail, hash, pid, same):
    if same:  # half the plans restate the stored tuple: the short write's ground
        state, source = stored["@agent_state"], stored["@agent_source"]
        detail, pid = stored["@agent_detail"], int(stored["@agent_pid"])
    if not srv.started:
        srv.shell_pane()
        srv.shell_pane()
    a, b = srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()[:2]
    p = plan(state, guard, source=source, at=guard.at or NOW, detail=detail)
    seed(srv, a, stored)
    read = seed(srv, b, stored)
    apply(srv, write.render(a, p, NOW, name="fake", pid=pid, hash=hash))
    apply(srv, write.render(b, p, NOW, name="fake", pid=pid, hash=hash, stored=read))
    got_a, got_b = srv.options(a), srv.options(b)
    assert _readable(got_a) == _readable(got_b)
    # the client-side mirror of the guard agrees with what the server did
    # (at the writer's clock, NOW, as publish bounds a stored claim's future skew)
    assert write.would_hold(guard, read, NOW) == (_readable(got_a) == _readable(read))


# ---------------------------------------------------------------- the refresh


def test_refresh_commits_only_over_the_stamp_it_read(srv):
    pane = srv.shell_pane()
    read_then = seed(srv, pane, HOOK_CLAIM)
    refresh = write.render(pane, P.hold("no rule matched"), NOW, name="fake", pid=11,
                           hash="dddd4444", stored=read_then)
    apply(srv, refresh)
    assert srv.options(pane) == dict(read_then, **{"@agent_hash": "dddd4444",
                                                   "@agent_stamped_at": str(NOW)})
    # another producer wrote after the read: the refresh (older now) changes nothing
    read_then = seed(srv, pane, HOOK_CLAIM)
    late = write.render(pane, P.hold("no rule matched"), NOW, name="fake", pid=11,
                        hash="dddd4444", stored=read_then)
    srv.tmux("set-option", "-p", "-t", pane, "@agent_stamped_at", str(NOW + 50))
    before = srv.options(pane)
    apply(srv, late)
    assert srv.options(pane) == before


@pytest.mark.parametrize("evidence", ["1700000000", "", "1800000012000", "1800000020000"])
def test_would_hold_reads_evidence_as_tmux_does(srv, evidence):
    """Raw stored text, as the server compares it: legacy seconds are a small number;
    evidence 2 s newer holds, evidence 10 s ahead (beyond the 5 s skew: a clock
    stepped back since it was written) holds nothing."""
    pane = srv.shell_pane()
    stored = dict(HOOK_CLAIM, **{"@agent_evidence_at": evidence})
    if not evidence:
        del stored["@agent_evidence_at"]
    before = seed(srv, pane, stored)
    guard = P.Guard(P.HOOK_ARBITRATE, at=NOW)
    apply(srv, write.render(pane, plan("idle", guard, source="hook"), NOW, name="fake",
                            pid=11))
    held = srv.options(pane) == before
    assert held is (evidence == "1800000012000")
    assert write.would_hold(guard, before, NOW) is held

"""`@agent_stamped_at` is the last pane option every tuple write sets (the contract: "Every
write tma makes ends with it"; a reader that finds it older than since or evidence_at
caught a chain in flight), over every form tma's one renderer (tma.tmux.write) gives a
write: the full chain, the short write, the unguarded (pre-3.2) chain and the refresh,
with and without the hook's event name, a prompt, the companions and the rollups that
ride the block. tests/integration/test_write_order_paths.py holds the same over the lines
the real producers send.
"""

from __future__ import annotations

import itertools
import re

import pytest

from tma.core import plan as P
from tma.tmux import write

PANE = "%7"
NOW = 1_800_000_010_000
STORED = {"@agent_state": "blocked", "@agent_detail": "permission", "@agent_source": "hook",
          "@agent_pid": "42", "@agent_name": "claude", "@agent_since": "1800000000000",
          "@agent_evidence_at": "1800000000000", "@agent_stamped_at": "1800000000000",
          "@agent_hash": "aaaa1111"}
PANE_SET = re.compile(r"set-option -p (?:-F |-u )*-t (%\d+) (@\w+)")


def pane_writes(line: str, pane: str = PANE) -> list[str]:
    """The pane options the line sets or unsets, in order."""
    return [key for target, key in PANE_SET.findall(line) if target == pane]


def assert_stamped_last(line: str) -> None:
    keys = pane_writes(line)
    assert keys.count("@agent_stamped_at") == 1, line
    assert keys[-1] == "@agent_stamped_at", f"set after stamped_at: {keys}"


EXTRAS = (write.Extra("@agent_session", "ses-1"), write.Extra("@agent_turn_at", str(NOW)),
          write.Extra("@agent_pending_tool", "Bash"), write.Extra("@agent_pending_call", ""),
          write.Extra("@agent_notified_at", str(NOW), True, write.already_notified()))
THEN = (write.rollup("window", "@3", "blocked:1"), write.rollup("session", "$1", "blocked:1"))
GUARDS = [P.Guard(P.UNCONDITIONAL), P.Guard(P.PROTECT_HOOK), P.Guard(P.CARVE_OUT, at=NOW),
          P.Guard(P.HOOK_ARBITRATE, at=NOW), P.Guard(P.REFRESH_CLAIM, state="blocked")]


def plans() -> list[P.Plan]:
    out = []
    for guard, (state, detail), source, attention, reset, prompt in itertools.product(
            GUARDS, [("blocked", "permission"), ("idle", "")], ["hook", "capture"],
            [False, True], [False, True], ["", "permission:9399cfd8002adf10"]):
        out.append(P.Plan(P.PUBLISH, state=state, detail=detail, source=source,
                          evidence_at=NOW - 5, guard=guard, set_attention=attention,
                          episode_reset=reset, label="PermissionRequest",
                          prompt=prompt if state == "blocked" else ""))
    return out


@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "unguarded"])
@pytest.mark.parametrize("stored", [None, STORED], ids=["full", "with-stored"])
@pytest.mark.parametrize("extras", [(), EXTRAS], ids=["alone", "companions"])
@pytest.mark.parametrize("then", [(), THEN], ids=["no-rollups", "rollups"])
def test_every_publish_ends_with_stamped_at(guarded, stored, extras, then) -> None:
    for plan in plans():
        line = write.render(PANE, plan, NOW, name="claude", pid=42, hash="bbbb2222",
                            guarded=guarded, prev_state="blocked", prev_since=NOW - 10_000,
                            extras=extras, stored=stored, then=then)
        assert_stamped_last(line)


def test_the_short_write_is_among_them() -> None:
    """A claim the store already holds: only evidence_at, hash and stamped_at move."""
    plan = P.Plan(P.PUBLISH, state="blocked", detail="permission", source="hook",
                  evidence_at=NOW - 5, guard=P.Guard(P.HOOK_ARBITRATE, at=NOW - 5),
                  label="PermissionRequest")
    line = write.render(PANE, plan, NOW, name="claude", pid=42, hash="bbbb2222",
                        stored=STORED, extras=EXTRAS)
    keys = pane_writes(line)
    assert "@agent_state" not in keys and "@tma_hook_event" in keys  # the short form
    assert_stamped_last(line)


@pytest.mark.parametrize("stored", [None, STORED], ids=["plain", "guarded"])
@pytest.mark.parametrize("hash", ["", "cccc3333"])
def test_a_refresh_ends_with_stamped_at(stored, hash) -> None:
    assert_stamped_last(write.render(PANE, P.hold("no change"), NOW, name="claude", pid=42,
                                     hash=hash, stored=stored))


def test_the_hook_event_and_the_companions_come_before_it() -> None:
    plan = P.Plan(P.PUBLISH, state="blocked", detail="permission", source="hook",
                  evidence_at=NOW, guard=P.Guard(P.HOOK_ARBITRATE, at=NOW),
                  label="PermissionRequest")
    keys = pane_writes(write.render(PANE, plan, NOW, name="claude", pid=42, extras=EXTRAS))
    last = keys.index("@agent_stamped_at")
    for key in ("@tma_hook_event", "@agent_session", "@agent_turn_at", "@agent_pending_tool",
                "@agent_notified_at"):
        assert keys.index(key) < last, key


def test_an_unguarded_companion_precedes_the_block() -> None:
    """It runs whether the block commits or holds, so it cannot follow stamped_at."""
    plan = P.Plan(P.PUBLISH, state="idle", source="capture", evidence_at=NOW,
                  guard=P.Guard(P.PROTECT_HOOK))
    line = write.render(PANE, plan, NOW, name="claude", pid=42,
                        extras=(write.Extra("@agent_model", "m-1", False),))
    assert line.startswith("set-option -p -t %7 @agent_model")
    assert_stamped_last(line)

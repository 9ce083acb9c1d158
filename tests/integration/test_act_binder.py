"""The episode binder (`tma act --expect-episode MS`): an answer meant for one blocked
episode types nothing into any other, and the right one still goes through the broker.

The agent is a real process named `claude` (tests/helpers/keyrecorder.py) drawing its
captured permission prompt and recording every byte it receives.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"


def _cap(name: str) -> fixture.Capture:
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text(encoding="utf-8"))


def _act(srv, pane: str, *extra: str):
    res = srv.tma("act", "approve", "--pane", pane, "--json", *extra, manifests=False)
    return res, json.loads(res.stdout) if res.stdout.strip() else None


def test_a_stale_episode_types_nothing_and_the_current_one_answers(srv):
    rec = KeyRecorder.start(srv, "claude", _cap("blocked"))
    row = srv.row(rec.pane, manifests=False)
    assert row is not None and row["state"] == "blocked"
    since = row["episode_ms"]
    res, doc = _act(srv, rec.pane, "--expect-episode", str(since - 1))
    assert (res.returncode, doc["outcome"], doc["reason"]) == (4, "refused", "episode-changed")
    assert "moved on from the episode" in res.stderr and "nothing done" in res.stderr
    res, doc = _act(srv, rec.pane, "--expect-episode", str(since - 1), "--dry-run")
    assert doc["reason"] == "episode-changed" and not doc["fireable"]
    assert rec.settle() == b""
    res, doc = _act(srv, rec.pane, "--expect-episode", str(since))
    assert (res.returncode, doc["outcome"]) == (0, "sent"), res.stderr
    assert rec.settle(1) == b"1"


def test_a_pane_answered_by_hand_refuses_the_bound_answer(srv):
    """The person answered at the keyboard, the agent went back to work: the binder
    (and the fresh screen) refuse, and no key reaches the agent."""
    rec = KeyRecorder.start(srv, "claude", _cap("blocked"), after=_cap("working"),
                            redraw_ms=50)
    row = srv.row(rec.pane, manifests=False)
    assert row["state"] == "blocked"
    since = str(row["episode_ms"])
    srv.tmux("send-keys", "-t", rec.pane, "1")  # by hand
    assert rec.settle(1) == b"1"
    srv.next_second()
    res, doc = _act(srv, rec.pane, "--expect-episode", since)
    assert res.returncode == 4 and doc["outcome"] == "refused", res.stderr
    assert doc["reason"] in ("episode-changed", "gated")
    assert rec.settle() == b"1"  # only the hand's key


def test_usage(srv):
    res = srv.tma("act", "approve", "--all", "--agent", "claude", "--expect-episode", "5",
                  manifests=False)
    assert res.returncode == 2 and "--expect-episode" in res.stderr
    res = srv.tma("act", "approve", "--pane", "%0", "--expect-episode", "soon",
                  manifests=False)
    assert res.returncode == 2 and "epoch ms" in res.stderr

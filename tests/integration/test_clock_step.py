"""A wall clock stepped back (issue 18, 6): a hook claim dated in the future must
never hold a later event. Private server, real `tma event` processes."""

from __future__ import annotations

import time

import pytest

from tests.helpers.events import event


def _ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.mark.tmux_contract
@pytest.mark.parametrize("ahead_ms", [10_000, 3_600_000])
def test_a_claim_dated_ahead_of_the_clock_does_not_hold_a_later_stop(srv, ahead_ms):
    """The claim was written, then the clock stepped back: its evidence now lies ahead
    of every later event's time. The Stop still commits (it used to be held, and the
    pane read working over an idle screen for a minute and more)."""
    pane = srv.agent_pane()
    assert event(srv, "Work", pane).returncode == 0
    assert srv.option(pane, "@agent_state") == "working"
    srv.tmux("set-option", "-p", "-t", pane, "@agent_evidence_at", str(_ms() + ahead_ms))
    res = event(srv, "Stop", pane)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert srv.option(pane, "@agent_state") == "idle"
    assert int(srv.option(pane, "@agent_evidence_at")) <= _ms()


def test_a_claim_inside_the_skew_still_holds_an_older_event(srv):
    """Ordering between near events is kept: a stored claim a second newer than an
    event holds it (the guard's arbitration, unchanged inside the skew)."""
    from tma.core import plan as P
    from tma.tmux import write

    pane = srv.agent_pane()
    assert event(srv, "Work", pane).returncode == 0
    stored = _ms() + 1000
    srv.tmux("set-option", "-p", "-t", pane, "@agent_evidence_at", str(stored))
    guard = write.suppress(P.Guard(P.HOOK_ARBITRATE, at=stored - 1000))
    assert srv.display(pane, f"#{{?{guard},hold,commit}}") == "hold"
    far = write.suppress(P.Guard(P.HOOK_ARBITRATE, at=stored - 60_000))
    assert srv.display(pane, f"#{{?{far},hold,commit}}") == "commit"

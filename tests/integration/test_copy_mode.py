"""The viewport freeze keys on tmux's scroll offset, not on copy-mode: a real pane in
copy-mode at offset 0 is still the live screen and is read; scrolled back by one line it
is frozen (the last verdict holds, whatever the live screen shows), and it is read again
once the scroll is gone.

The fake agent is `sleep`; its screens are written straight to the pane's tty, so output
keeps arriving under copy-mode as an agent's would."""

from __future__ import annotations

import pytest

HISTORY = "\n".join(f"history line {i}" for i in range(80))


def mode(srv, pane: str) -> tuple[str, str]:
    """(#{pane_in_mode}, #{scroll_position})."""
    in_mode, _, offset = srv.display(pane, "#{pane_in_mode} #{scroll_position}").partition(" ")
    return in_mode, offset


def scroll_back_one_line(srv, pane: str) -> None:
    srv.tmux("copy-mode", "-t", pane)
    srv.tmux("send-keys", "-t", pane, "-X", "scroll-up")
    assert mode(srv, pane) == ("1", "1")


def explain(srv, pane: str) -> str:
    res = srv.tma("debug", "explain", pane, check=True)
    return res.stdout


@pytest.mark.tmux_contract
def test_copy_mode_at_offset_0_is_still_the_live_screen(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING")
    assert srv.row(pane)["state"] == "working"

    srv.tmux("copy-mode", "-t", pane)  # to copy an error message, say
    assert mode(srv, pane) == ("1", "0")
    srv.draw(pane, "FAKE-BLOCKED")  # the agent stops on a dialog meanwhile
    row = srv.row(pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert mode(srv, pane) == ("1", "0")  # read while still in copy-mode


@pytest.mark.tmux_contract
def test_a_pane_scrolled_back_is_frozen_until_the_scroll_is_gone(srv):
    pane = srv.agent_pane()
    srv.draw(pane, HISTORY + "\nFAKE-WORKING", clear=False)
    assert srv.row(pane)["state"] == "working"

    scroll_back_one_line(srv, pane)
    srv.draw(pane, "FAKE-BLOCKED")  # the live screen changes under the scrolled view
    assert mode(srv, pane) == ("1", "1")
    assert srv.row(pane)["state"] == "working"  # frozen: not read off the live screen
    assert "pane is scrolled back: frozen" in explain(srv, pane)

    srv.tmux("send-keys", "-t", pane, "-X", "cancel")
    assert mode(srv, pane)[0] == "0"
    row = srv.row(pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")


@pytest.mark.tmux_contract
def test_a_settled_pane_is_read_again_once_its_scroll_is_gone(srv):
    """The frozen hold must not pass for a fresh read: leaving copy-mode prints nothing,
    so a stamp the hold refreshed after the new output would let the next cycle reuse
    the old verdict without looking."""
    pane = srv.agent_pane()
    srv.draw(pane, HISTORY + "\nFAKE-IDLE", clear=False)
    srv.wait_for(lambda: srv.row(pane)["state"] == "idle")

    scroll_back_one_line(srv, pane)
    stamped = srv.option(pane, "@agent_stamped_at")
    srv.draw(pane, "FAKE-BLOCKED")
    assert srv.row(pane)["state"] == "idle"  # frozen
    srv.next_second()
    assert srv.row(pane)["state"] == "idle"  # a later cycle, still scrolled: still frozen
    assert srv.option(pane, "@agent_stamped_at") == stamped  # nothing read, nothing refreshed

    srv.tmux("send-keys", "-t", pane, "-X", "cancel")
    row = srv.row(pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")

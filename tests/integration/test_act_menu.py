"""`tma act approve` on a menu with no digits: Claude Code 2.1.332's approval when auto mode
cannot check an action (`❯ No` over `Yes`), in a real tmux pane.

The agent is a real process named `claude` (keyrecorder.py) that draws the real captures
of that dialog, moves its cursor on Down and Up as the real one does (lab, 2.1.332: Down
wraps; an Up on the top row moves nothing visible and swallows the next Down), draws the
answered screen on Enter, and records every byte. `1`, today's key for Claude's numbered
dialogs, does nothing on this one; Enter on `No` denies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder, key_bytes
from tma.core import fixture

pytestmark = pytest.mark.tmux_contract

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"


def _cap(name: str) -> fixture.Capture:
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text(encoding="utf-8"))


ON_NO = _cap("blocked_autocheck_bash_w100")
ON_YES = _cap("blocked_autocheck_bash_yes_w100")
APPROVED = _cap("idle_autocheck_approved_w100")


def _act(srv, action: str, pane: str) -> dict:
    res = srv.tma("act", action, "--pane", pane, "--json", manifests=False)
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == res.returncode, res.stderr
    return doc


def _menu(srv, up_on_top: int = 0) -> KeyRecorder:
    rec = KeyRecorder.menu(srv, "claude", [ON_NO, ON_YES], after=APPROVED, up_on_top=up_on_top)
    row = srv.row(rec.pane, manifests=False)
    assert (row["agent"], row["state"], row["detail"]) == ("claude", "blocked", "permission")
    assert rec.received() == b""
    return rec


def test_approve_moves_the_cursor_to_yes_then_presses_enter_once(srv):
    rec = _menu(srv)
    doc = _act(srv, "approve", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("sent", 0), doc
    assert "Down ×1, then Enter" in doc["message"]
    want = key_bytes(["Down", "Enter"])
    assert rec.settle(len(want)) == want  # never "1", never Enter on No, nothing twice
    assert srv.row(rec.pane, manifests=False)["state"] == "idle"


def test_approve_presses_enter_alone_where_the_cursor_already_rests_on_yes(srv):
    rec = KeyRecorder.start(srv, "claude", ON_YES, after=APPROVED, redraw_ms=100)
    doc = _act(srv, "approve", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("sent", 0), doc
    assert rec.settle(1) == key_bytes(["Enter"])


def test_a_swallowed_down_is_seen_and_pressed_again(srv):
    """An Up pressed by hand on the top row: the first Down moves nothing on screen, so
    a blind Down Enter would have picked No. The screen is read after each press."""
    rec = _menu(srv, up_on_top=1)
    doc = _act(srv, "approve", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("sent", 0), doc
    want = key_bytes(["Down", "Down", "Enter"])
    assert rec.settle(len(want)) == want


def test_a_press_taken_late_is_waited_for_before_enter(srv):
    """An agent too busy to take a key within the settle time: Down shows nothing, so a
    second Down goes; the first is then drawn (the cursor on Yes) while the second is
    still on its way. Enter then would reach the agent after the second Down and pick No:
    the walk watches a settle time more, sees the cursor leave Yes, and presses no Enter."""
    rec = KeyRecorder.menu(srv, "claude", [ON_NO, ON_YES], after=APPROVED, lag_ms=1300)
    doc = _act(srv, "approve", rec.pane)
    rec.settle(2, timeout=10, quiet=2.0)
    assert rec.received() == key_bytes(["Down", "Down"])
    assert (doc["outcome"], doc["exit_code"]) == ("error", 1), doc


def test_no_enter_when_the_cursor_never_shows_on_yes_and_the_prompt_stays_answerable(srv):
    rec = _menu(srv, up_on_top=2)
    doc = _act(srv, "approve", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("error", 1), doc
    assert "Enter not pressed, nothing picked" in doc["message"]
    assert rec.settle(6) == key_bytes(["Down", "Down"])  # one per row, and no Enter
    # nothing was picked: the episode's claim was given back, and deny still answers it
    doc = _act(srv, "deny", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("sent", 0), doc
    assert rec.settle(7) == key_bytes(["Down", "Down", "Escape"])


def test_deny_still_sends_escape_alone(srv):
    rec = _menu(srv)
    doc = _act(srv, "deny", rec.pane)
    assert (doc["outcome"], doc["exit_code"]) == ("sent", 0), doc
    assert rec.settle(1) == key_bytes(["Escape"])


def test_dry_run_names_the_walk(srv):
    rec = _menu(srv)
    res = srv.tma("act", "approve", "--pane", rec.pane, "--dry-run", manifests=False)
    assert "effect:  keys: 1; where the screen draws a menu with no digits: Down until " \
           "the cursor shows on 'Yes'" in res.stdout, res.stdout
    assert rec.settle() == b""

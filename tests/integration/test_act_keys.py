"""Which bytes `tma act approve|deny` puts on an agent's tty, pinned for every agent.

Each agent is a real process named like it (keyrecorder.py) that draws a real captured
screen in raw mode and records every byte it receives. `tma ls` reads the screen as
tma does; then `tma act` must deliver exactly the action manifest's [keys].<agent> bytes
when the screen is a permission prompt, and nothing at all when it refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder, key_bytes
from tma.core import bundled, fixture
from tma.runtime.act import registry as actions

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

HERE = Path(__file__).resolve().parent
CAPTURES = HERE.parent / "fixtures" / "captures"
REFERENCE = HERE.parents[2] / "shared" / "reference" / "captures"

#: agent -> (process name, blocked/permission screen, idle screen, title or None for the
#: capture's own). Cursor's captures come from the shared reference set; its title is
#: the one its identity anchors on (the capture shows a tool's retitle).
SCREENS = {
    "claude": ("claude", CAPTURES / "claude-2.1.332_blocked.txt",
               CAPTURES / "claude-2.1.332_idle.txt", None),
    "codex": ("codex", CAPTURES / "codex-0.171.0_blocked.txt",
              CAPTURES / "codex-0.171.0_idle.txt", None),
    "gemini": ("node", CAPTURES / "gemini-0.61.0_blocked.txt",
               CAPTURES / "gemini-0.61.0_idle.txt", None),
    "cursor": ("node", REFERENCE / "cursor_blocked_w100.txt",
               REFERENCE / "cursor_idle_w100.txt", "Cursor Agent"),
    "copilot": ("node", CAPTURES / "copilot-1.0.102_blocked_permission_bash_w120.txt",
                CAPTURES / "copilot-1.0.102_idle_after_text_w120.txt", None),
    "qwen": ("node", CAPTURES / "qwen-0.24.4_blocked_permission_shell_w120.txt",
             CAPTURES / "qwen-0.24.4_idle_w120.txt", None),
    "aider": ("aider", CAPTURES / "aider-0.86.2_blocked_permission_shell_w120.txt",
              CAPTURES / "aider-0.86.2_idle_w120.txt", None),
}
ACTIONS = ("approve", "deny")
BUNDLED = actions.load("/nonexistent")  # the bundled action manifests only
KEYED = sorted(name for name in bundled.names()
               if any(name in BUNDLED.get(a).keys for a in ACTIONS))
UNKEYED = sorted(set(bundled.names()) - set(KEYED))


def _capture(path: Path) -> fixture.Capture:
    if not path.exists() and REFERENCE in path.parents:
        pytest.skip("../shared/reference/captures is absent (a user's clone)")
    return fixture.parse(path.read_text(encoding="utf-8"))


def _agent(srv, agent: str, which: int) -> KeyRecorder:
    process, *screens, title = SCREENS[agent]
    return KeyRecorder.start(srv, process, _capture(screens[which]), title=title)


def _verdict(srv, pane: str) -> tuple[str, str, str]:
    row = srv.row(pane, manifests=False)  # a producing cycle: reads the screen, stamps
    assert row is not None, f"tma does not list {pane}"
    return row["agent"], row["state"], row["detail"] or ""


def _act(srv, action: str, pane: str) -> tuple[int, str | None, str]:
    """(exit status, the machine reason, outcome) of one `tma act --json`."""
    res = srv.tma("act", action, "--pane", pane, "--json", manifests=False)
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == res.returncode, res.stderr
    return res.returncode, doc["reason"], doc["outcome"]


def test_every_agent_with_keys_has_a_screen_here():
    assert KEYED and set(KEYED) <= set(SCREENS), "add the agent's screens to SCREENS"


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("agent", KEYED)
def test_act_sends_exactly_the_manifest_keys(srv, agent, action):
    keys = BUNDLED.get(action).keys.get(agent)
    assert keys, f"the {action} action has no [keys].{agent}"
    rec = _agent(srv, agent, 0)
    assert _verdict(srv, rec.pane) == (agent, "blocked", "permission")
    assert rec.received() == b""  # reading the screen sent nothing
    assert _act(srv, action, rec.pane) == (0, None, "sent")
    want = key_bytes(keys)
    assert rec.settle(len(want)) == want


@pytest.mark.parametrize("agent", KEYED)
def test_nothing_reaches_a_pane_that_is_not_at_a_permission_prompt(srv, agent):
    rec = _agent(srv, agent, 1)
    assert _verdict(srv, rec.pane) == (agent, "idle", "")
    for action in ACTIONS:
        assert _act(srv, action, rec.pane) == (4, "gated", "refused")
    assert rec.settle() == b""


def test_nothing_reaches_a_blocked_pane_that_asks_something_else(srv):
    rec = KeyRecorder.start(srv, "claude", _capture(CAPTURES / "claude-2.1.332_blocked_question.txt"))
    assert _verdict(srv, rec.pane) == ("claude", "blocked", "question")
    for action in ACTIONS:
        assert _act(srv, action, rec.pane) == (4, "gated", "refused")
    assert rec.settle() == b""


def test_opencode_permission_gets_no_key(srv):
    """OpenCode answers permissions over its HTTP API only: with no pending request id
    stamped, act refuses (requires-unmet) and types nothing."""
    assert UNKEYED == ["opencode", "pi"]
    assert all(BUNDLED.get(a).api["opencode"] for a in ACTIONS)
    rec = KeyRecorder.start(srv, "opencode", _capture(CAPTURES / "opencode-1.18.33_blocked.txt"))
    assert _verdict(srv, rec.pane) == ("opencode", "blocked", "permission")
    for action in ACTIONS:
        assert _act(srv, action, rec.pane) == (4, "requires-unmet", "refused")
    assert rec.settle() == b""


def test_the_recorder_sees_keys_raw():
    """key_bytes' table matches what tmux writes: checked through the recorder itself in
    test_act_sends_exactly_the_manifest_keys; here, that an unknown name is refused."""
    assert key_bytes(["1", "y", "Escape", "C-c", "Enter"]) == b"1y\x1b\x03\r"
    with pytest.raises(ValueError, match="F13"):
        key_bytes(["F13"])

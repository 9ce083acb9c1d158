"""ctrl-t in the picker and in `tma watch`: the preview shows the selected pane's
conversation (its transcript, read by the bundled Claude store) and goes back to its
screen; a pane with no transcript says why in one line.

Each screen runs in a pane of a private server, driven with send-keys and read back with
capture-pane. The agents are fake (a process named `claude`, the bundled manifests); one
pane's @agent_transcript names a recorded Claude session (tests/fixtures/transcripts), as
Claude's hooks name it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers.screens import tma_command, wait_screen

FIXTURE = next((Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
                / "claude-2.1.332" / "tool-approved").glob("*.jsonl"))
FRESH = "[fold]\nfreshness_secs = 3600\n"
#: The recorded session's words: the prompt, the agent's answer after its tool ran.
ASKED = "RUNTOOL please write the file"
ANSWERED = "TOOL RESULT SEEN: the command ran. All done."


def _locator(srv, pane: str) -> str:
    return srv.display(pane, "#{session_name}:#{window_index}.#{pane_index}")


def _select(srv, ui: str, locator: str) -> str:
    """Down until the preview's rule names `locator` (the rows' order is the picker's)."""
    for _ in range(4):
        s = wait_screen(srv, ui, lambda s: "── " in s)
        if f"── {locator}" in s:
            return s
        srv.tmux("send-keys", "-t", ui, "Down")
        try:
            return wait_screen(srv, ui, lambda s: f"── {locator}" in s, timeout=2)
        except AssertionError:
            continue
    raise AssertionError(f"{locator} never selected")


@pytest.mark.parametrize("command", ["", "watch"])
def test_ctrl_t_shows_the_panes_conversation_and_goes_back_to_its_screen(srv, command):
    srv.config.write_text(FRESH)
    talker = srv.agent_pane("claude")
    srv.draw(talker, "TALKER-SCREEN ready\n")
    path = srv.root / "talk.jsonl"
    shutil.copyfile(FIXTURE, path)
    srv.tmux("set-option", "-p", "-t", talker, "@agent_transcript", str(path))
    silent = srv.agent_pane("claude")  # no hook ever named its session
    srv.draw(silent, "SILENT-SCREEN ready\n")
    assert {r["pane"] for r in srv.ls(manifests=False)} >= {talker, silent}

    ui = srv.tmux("new-session", "-d", "-s", "ui", "-x", "120", "-y", "40", "-P", "-F",
                  "#{pane_id}", f"cd {os.getcwd()} && TERM=xterm-256color "
                  f"{tma_command(srv, *command.split(), manifests=False)}").strip()
    srv.tmux("set-option", "-t", "ui", "status", "off")
    srv.tmux("resize-window", "-t", "ui", "-x", "120", "-y", "40")
    at = _locator(srv, talker)
    _select(srv, ui, at)
    wait_screen(srv, ui, lambda s: "TALKER-SCREEN ready" in s)

    srv.tmux("send-keys", "-t", ui, "C-t")
    s = wait_screen(srv, ui, lambda s: ANSWERED in s)
    assert f"── {at} · conversation" in s and ASKED in s
    assert "▸ Bash  echo hi > mockllm-hi.txt  ✓" in s  # the call and its result's status
    assert "TALKER-SCREEN" not in s
    assert "\x1b" not in s
    if not command:
        assert "ctrl-t screen" in s

    # the other pane, the view still on: why there is nothing, in one line
    _select(srv, ui, _locator(srv, silent))
    s = wait_screen(srv, ui, lambda s: "(no conversation: claude has named no session" in s)
    assert "SILENT-SCREEN" not in s

    # back to the screen
    srv.tmux("send-keys", "-t", ui, "C-t")
    s = wait_screen(srv, ui, lambda s: "SILENT-SCREEN ready" in s)
    assert "no conversation" not in s and "· conversation" not in s
    if not command:
        assert "ctrl-t conversation" in s
    _select(srv, ui, at)
    s = wait_screen(srv, ui, lambda s: "TALKER-SCREEN ready" in s)
    assert ANSWERED not in s
    srv.tmux("send-keys", "-t", ui, "q")
    srv.wait_for(lambda: ui not in srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split())

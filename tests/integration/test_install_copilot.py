"""`tma install-hooks copilot`: tma's own hooks file in Copilot's hooks folder, Copilot's
flat version-1 shape (`{"type": "command", "bash": …, "timeoutSec": 10}`), the event name
on each command line."""

from __future__ import annotations

import json

import pytest

from tests.helpers.installs import Inst, dump, write
from tma.core import bundled


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


EVENTS = ["sessionStart", "sessionEnd", "userPromptSubmitted", "preToolUse",
          "permissionRequest", "notification", "postToolUse", "agentStop", "preCompact"]
FOREIGN = {"version": 1, "hooks": {
    "preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}],
    "errorOccurred": [{"type": "command", "bash": "notify-send oops"}]}}


def entry(inst: Inst, event: str) -> dict:
    return {"type": "command", "bash": inst.cmd("copilot", event), "timeoutSec": 10}


def test_the_wired_events_are_the_manifest_s():
    assert sorted(EVENTS) == sorted(set(bundled.load("copilot").hook_events))


def test_copilot_fresh_install_check_and_uninstall(inst):
    res = inst.ok("copilot", "--yes")
    assert "first prompt" in res.out  # the caveat: sessionStart comes late
    data = json.loads(inst.copilot_hooks.read_text())
    assert list(data) == ["version", "hooks"] and data["version"] == 1
    assert sorted(data["hooks"]) == sorted(EVENTS)
    for ev in EVENTS:
        assert data["hooks"][ev] == [entry(inst, ev)], ev
    assert inst.ok("--check", "copilot").out == "tma: hooks OK\n"
    installed = inst.copilot_hooks.read_bytes()
    assert "already wired" in inst.ok("copilot", "--yes").out
    assert inst.copilot_hooks.read_bytes() == installed
    inst.ok("copilot", "--uninstall", "--yes")
    # the file tma created went, and the folders it made with it
    assert not inst.copilot_hooks.exists() and not inst.copilot_hooks.parent.exists()


def test_copilot_foreign_entries_kept_and_bytes_restored(inst):
    orig = write(inst.copilot_hooks, dump(FOREIGN))
    res = inst.run("copilot", stdin="n\n", tty=True)  # the diff first, then the question
    assert "+++" in res.out and inst.copilot_hooks.read_bytes() == orig
    inst.ok("copilot", "--yes")
    data = json.loads(inst.copilot_hooks.read_text())
    assert data["hooks"]["preToolUse"][0] == FOREIGN["hooks"]["preToolUse"][0]
    assert data["hooks"]["preToolUse"][1] == entry(inst, "preToolUse")
    assert data["hooks"]["errorOccurred"] == FOREIGN["hooks"]["errorOccurred"]
    inst.ok("copilot", "--uninstall", "--yes")
    assert inst.copilot_hooks.read_bytes() == orig


def test_copilot_stale_entry_is_reported_and_replaced(inst):
    inst.ok("copilot", "--yes")
    data = json.loads(inst.copilot_hooks.read_text())
    data["hooks"]["agentStop"][0]["timeoutSec"] = 1  # no longer the entry tma writes
    inst.copilot_hooks.write_text(dump(data))
    res = inst.run("--check", "copilot")
    assert res.rc != 0 and "agentStop" in res.out + res.err, res
    inst.ok("copilot", "--yes")
    assert json.loads(inst.copilot_hooks.read_text())["hooks"]["agentStop"] == [
        entry(inst, "agentStop")]


def test_copilot_hooks_flag_and_copilot_home(inst, monkeypatch, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "tma.json"
    inst.ok("copilot", "--yes", "--copilot-hooks", str(elsewhere))
    assert json.loads(elsewhere.read_text())["hooks"]["agentStop"] == [entry(inst, "agentStop")]
    assert not inst.copilot_hooks.exists()
    # without the flag or TMA_COPILOT_HOOKS: $COPILOT_HOME/hooks/tma.json
    monkeypatch.delenv("TMA_COPILOT_HOOKS")
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cphome"))
    inst.ok("copilot", "--yes")
    assert (tmp_path / "cphome" / "hooks" / "tma.json").is_file()

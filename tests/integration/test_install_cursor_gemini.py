"""`tma install-hooks cursor` (flat hooks.json + cli-config statusLine), `gemini`
(Claude's nested shape in ~/.gemini/settings.json) and `qwen` (the same shape in
~/.qwen/settings.json)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.installs import Inst, dump, ours, write
from tma.install import statusline


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


CURSOR_EVENTS = ["sessionStart", "sessionEnd", "beforeSubmitPrompt", "preToolUse",
                 "postToolUse", "postToolUseFailure", "stop", "SubagentStart", "SubagentStop"]
GEMINI_EVENTS = ["SessionStart", "SessionEnd", "BeforeAgent", "BeforeTool", "AfterTool",
                 "AfterAgent", "Notification", "SubagentStart", "SubagentStop"]

CURSOR_HOOKS = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}],
                                        "stop": [{"command": "say stop"}]}}
CURSOR_CLI = {"version": 1, "editor": {"vimMode": True},
              "permissions": {"allow": ["Shell(ls)"], "deny": []},
              "statusLine": {"type": "command", "command": "~/.cursor/status.sh",
                             "padding": 2},
              "model": {"modelId": "gpt-5"}}


def test_cursor_roundtrip(inst):
    hooks = write(inst.cursor_hooks, dump(CURSOR_HOOKS))
    cli = write(inst.cursor_cli, dump(CURSOR_CLI))
    res = inst.ok("cursor", "--yes")
    assert "user-level" in res.out
    data = json.loads(inst.cursor_hooks.read_text())
    assert data["version"] == 1 and list(data) == ["version", "hooks"]
    for ev in CURSOR_EVENTS:
        mine = [e for e in data["hooks"][ev] if e.get("command") == inst.cmd("cursor", ev)]
        assert mine == [{"command": inst.cmd("cursor", ev)}]  # flat: no type, no nesting
    assert data["hooks"]["afterFileEdit"] == [{"command": "./fmt.sh"}]
    assert data["hooks"]["stop"][0] == {"command": "say stop"}
    conf = json.loads(inst.cursor_cli.read_text())
    assert {k: v for k, v in conf.items() if k != "statusLine"} == {
        k: v for k, v in CURSOR_CLI.items() if k != "statusLine"}
    assert conf["statusLine"]["padding"] == 2
    assert statusline.parse(conf["statusLine"]["command"], "cursor") == (
        True, "~/.cursor/status.sh")

    assert inst.ok("--check").out == "tma: hooks OK\n"
    before = (inst.cursor_hooks.read_bytes(), inst.cursor_cli.read_bytes())
    assert "already wired" in inst.ok("cursor", "--yes").out
    assert (inst.cursor_hooks.read_bytes(), inst.cursor_cli.read_bytes()) == before

    inst.ok("cursor", "--uninstall", "--yes")
    assert inst.cursor_hooks.read_bytes() == hooks
    assert inst.cursor_cli.read_bytes() == cli


def test_cursor_foreign_edit_survives(inst):
    write(inst.cursor_hooks, dump(CURSOR_HOOKS))
    write(inst.cursor_cli, dump(CURSOR_CLI))
    inst.ok("cursor", "--yes")
    data = json.loads(inst.cursor_hooks.read_text())
    data["hooks"]["stop"].append({"command": "another"})
    inst.cursor_hooks.write_text(dump(data))
    conf = json.loads(inst.cursor_cli.read_text())
    conf["editor"]["vimMode"] = False
    inst.cursor_cli.write_text(dump(conf))
    inst.ok("cursor", "--uninstall", "--yes")
    want = json.loads(json.dumps(CURSOR_HOOKS))
    want["hooks"]["stop"].append({"command": "another"})
    assert json.loads(inst.cursor_hooks.read_text()) == want
    want_cli = json.loads(json.dumps(CURSOR_CLI))
    want_cli["editor"]["vimMode"] = False
    assert json.loads(inst.cursor_cli.read_text()) == want_cli


def test_cursor_fresh_and_without_cli_config(inst):
    res = inst.ok("cursor", "--yes")
    assert "statusline shim was skipped" in res.out
    assert not inst.cursor_cli.exists()
    data = json.loads(inst.cursor_hooks.read_text())
    assert data["version"] == 1 and sorted(data["hooks"]) == sorted(CURSOR_EVENTS)
    assert inst.ok("--check").out == "tma: hooks OK\n"
    inst.ok("cursor", "--uninstall", "--yes")
    # version went with the hooks, and the file tma created (and ~/.cursor) with them
    assert not inst.cursor_hooks.exists() and not inst.cursor_hooks.parent.exists()
    assert not inst.cursor_cli.exists()
    # --statusline creates cli-config.json on purpose
    inst.ok("cursor", "--yes", "--statusline")
    conf = json.loads(inst.cursor_cli.read_text())
    assert statusline.parse(conf["statusLine"]["command"], "cursor") == (True, None)


def test_cursor_version_kept_when_hooks_remain_and_not_added_twice(inst):
    write(inst.cursor_hooks, dump({"version": 2, "hooks": {}}))
    inst.ok("cursor", "--yes", "--no-statusline")
    assert json.loads(inst.cursor_hooks.read_text())["version"] == 2
    inst.ok("cursor", "--uninstall", "--yes")
    assert json.loads(inst.cursor_hooks.read_text()) == {"version": 2}


def test_gemini_roundtrip(inst):
    orig_doc = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooksConfig": {"enabled": True},
        "hooks": {"BeforeTool": [{"matcher": "*", "hooks": [
            {"type": "command", "name": "audit", "command": "python3 audit.py"}]}]},
        "ui": {"hideTips": True},
    }
    orig = write(inst.gemini, dump(orig_doc))
    res = inst.ok("gemini", "--yes")
    assert "trust" in res.out and "folder" in res.out  # the folder-trust caveat
    data = json.loads(inst.gemini.read_text())
    found = ours(inst, data, "gemini")
    assert sorted(found) == sorted(GEMINI_EVENTS)
    assert data["hooks"]["BeforeTool"][0] == orig_doc["hooks"]["BeforeTool"][0]
    assert data["hooksConfig"] == {"enabled": True} and "statusLine" not in data
    assert inst.ok("--check", "gemini").out == "tma: hooks OK\n"
    installed = inst.gemini.read_bytes()
    inst.ok("gemini", "--yes")
    assert inst.gemini.read_bytes() == installed
    data["hooks"]["AfterAgent"].append({"hooks": [{"type": "command", "command": "mine"}]})
    inst.gemini.write_text(dump(data))
    inst.ok("gemini", "--uninstall", "--yes")
    want = json.loads(json.dumps(orig_doc))
    want["hooks"]["AfterAgent"] = [{"hooks": [{"type": "command", "command": "mine"}]}]
    assert json.loads(inst.gemini.read_text()) == want
    data = json.loads(inst.gemini.read_text())
    del data["hooks"]["AfterAgent"]
    inst.gemini.write_text(dump(data))
    assert inst.gemini.read_bytes() == orig


QWEN_EVENTS = ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
               "Stop", "StopFailure", "PreCompact", "PermissionRequest", "Notification",
               "SubagentStart", "SubagentStop"]


def test_qwen_roundtrip(inst):
    """Byte for byte: install, check, reinstall (no change), uninstall back to the original,
    a person's own hooks and settings untouched; every entry observe-only (no matcher, no
    async, the plain tma-hook command)."""
    orig_doc = {
        "general": {"enableAutoUpdate": False},
        "tools": {"approvalMode": "default"},
        "security": {"auth": {"selectedType": "openai"}},
        "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": "python3 audit.py"}]}]},
    }
    orig = write(inst.qwen, dump(orig_doc))
    res = inst.ok("qwen", "--yes")
    assert "next starts" in res.out
    data = json.loads(inst.qwen.read_text())
    found = ours(inst, data, "qwen")
    assert sorted(found) == sorted(QWEN_EVENTS)
    for event in QWEN_EVENTS:
        group = data["hooks"][event][-1]
        assert "matcher" not in group and group["hooks"][0].get("async") is None, event
    assert data["hooks"]["PreToolUse"][0] == orig_doc["hooks"]["PreToolUse"][0]
    assert {k: data[k] for k in ("general", "tools", "security")} == {
        k: orig_doc[k] for k in ("general", "tools", "security")}
    assert inst.ok("--check", "qwen").out == "tma: hooks OK\n"
    installed = inst.qwen.read_bytes()
    inst.ok("qwen", "--yes")
    assert inst.qwen.read_bytes() == installed
    inst.ok("qwen", "--uninstall", "--yes")
    assert inst.qwen.read_bytes() == orig


def test_qwen_fresh_file_is_created_and_removed(inst):
    assert not inst.qwen.exists()
    inst.ok("qwen", "--yes")
    data = json.loads(inst.qwen.read_text())
    assert sorted(ours(inst, data, "qwen")) == sorted(QWEN_EVENTS)
    res = inst.ok("qwen", "--uninstall", "--yes")
    # tma created settings.json (and ~/.qwen): the uninstall takes both back
    assert not inst.qwen.exists() and not inst.qwen.parent.exists()
    assert "tma created it" in res.out

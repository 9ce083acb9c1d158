"""`tma install-hooks claude`: settings.json hooks and the statusline shim."""

from __future__ import annotations

import json

import pytest

from tests.helpers.installs import Inst, dump, ours, write
from tma.install import statusline


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


EVENTS = ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
          "PermissionRequest", "PreCompact", "Notification", "Stop", "SubagentStart", "SubagentStop"]

ORIG = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(git status:*)"], "defaultMode": "default"},
    "env": {"FOO": "bär"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/audit-bash", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0},
    "includeCoAuthoredBy": False,
}


def test_roundtrip(inst):
    orig = write(inst.claude, dump(ORIG))
    res = inst.ok("claude", "--yes")
    assert "claude: wired" in res.out
    data = json.loads(inst.claude.read_text())
    found = ours(inst, data, "claude")
    assert sorted(found) == sorted(EVENTS)
    for ev in EVENTS:
        assert found[ev] == [inst.cmd("claude", ev)]
    # our groups: no matcher (Notification sees every type), never async
    for ev in EVENTS:
        groups = [g for g in data["hooks"][ev]
                  if any(h["command"] == inst.cmd("claude", ev) for h in g["hooks"])]
        assert groups == [{"hooks": [{"type": "command", "command": inst.cmd("claude", ev)}]}]
    # foreign entries and unrelated keys intact, in order
    assert data["hooks"]["PreToolUse"][0] == ORIG["hooks"]["PreToolUse"][0]
    assert data["hooks"]["Stop"][0] == ORIG["hooks"]["Stop"][0]
    assert list(data)[:5] == list(ORIG)[:5]
    assert data["includeCoAuthoredBy"] is False and data["env"] == {"FOO": "bär"}
    # the statusline shim wraps the user's command, padding kept
    sl = data["statusLine"]
    assert sl["padding"] == 0 and sl["type"] == "command"
    assert statusline.parse(sl["command"], "claude") == (True, "~/.claude/statusline.sh")
    assert str(inst.tma) in sl["command"]

    assert inst.ok("--check").out == "tma: hooks OK\n"
    assert inst.ok("--check", "claude").out == "tma: hooks OK\n"

    installed = inst.claude.read_bytes()
    res = inst.ok("claude", "--yes")
    assert "already wired" in res.out
    assert inst.claude.read_bytes() == installed

    res = inst.ok("claude", "--uninstall", "--yes")
    assert "claude: unwired" in res.out
    assert inst.claude.read_bytes() == orig
    assert inst.ok("claude", "--uninstall", "--yes").out.count("nothing to remove") == 1


def test_foreign_edit_after_install_survives_uninstall(inst):
    write(inst.claude, dump(ORIG))
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send x"}]})
    data["hooks"]["PostToolUse"].insert(0, {"matcher": "Edit", "hooks": [
        {"type": "command", "command": "fmt"}]})
    data["theme"] = "dark"
    inst.claude.write_text(json.dumps(data, indent=2) + "\n")
    inst.ok("claude", "--uninstall", "--yes")
    want = json.loads(json.dumps(ORIG))
    want["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send x"}]})
    want["hooks"]["PostToolUse"] = [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": "fmt"}]}]
    want["theme"] = "dark"
    assert json.loads(inst.claude.read_text()) == want
    assert list(json.loads(inst.claude.read_text())["hooks"]) == ["PreToolUse", "Stop",
                                                                  "PostToolUse"]


def test_absent_settings_created_and_emptied(inst):
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    assert sorted(ours(inst, data, "claude")) == sorted(EVENTS)
    assert statusline.parse(data["statusLine"]["command"], "claude") == (True, None)
    res = inst.ok("claude", "--uninstall", "--yes")
    # tma created settings.json (and ~/.claude): the uninstall takes both back
    assert not inst.claude.exists() and not inst.claude.parent.exists()
    assert "tma created it" in res.out


def test_a_settings_file_the_user_had_stays_when_emptied(inst):
    write(inst.claude, "{}\n")
    inst.ok("claude", "--yes")
    inst.ok("claude", "--uninstall", "--yes")
    assert inst.claude.read_text() == "{}\n"  # the user's file, back to its bytes


def test_a_created_file_the_user_added_to_stays(inst):
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    data["model"] = "opus"
    inst.claude.write_text(dump(data))
    inst.ok("claude", "--uninstall", "--yes")
    assert json.loads(inst.claude.read_text()) == {"model": "opus"}


def test_permission_request_async_and_notification_matcher_are_drift(inst):
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    data["hooks"]["PermissionRequest"][0]["hooks"][0]["async"] = True
    data["hooks"]["Notification"][0]["matcher"] = "permission_prompt"
    inst.claude.write_text(dump(data))
    res = inst.run("--check")
    assert res.rc == 1
    assert "PermissionRequest" in res.err and "Notification" in res.err
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    assert data["hooks"]["PermissionRequest"] == [{"hooks": [
        {"type": "command", "command": inst.cmd("claude", "PermissionRequest")}]}]
    assert data["hooks"]["Notification"] == [{"hooks": [
        {"type": "command", "command": inst.cmd("claude", "Notification")}]}]
    assert inst.ok("--check").out == "tma: hooks OK\n"


def test_duplicates_collapse_to_one(inst):
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    data["hooks"]["Stop"].append(data["hooks"]["Stop"][-1])
    inst.claude.write_text(dump(data))
    assert inst.run("--check").rc == 1
    inst.ok("claude", "--yes")
    assert ours(inst, json.loads(inst.claude.read_text()), "claude")["Stop"] == [
        inst.cmd("claude", "Stop")]


def test_settings_flag_overrides_env(inst, tmp_path):
    other = tmp_path / "other-settings.json"
    inst.ok("claude", "--yes", "--settings", str(other))
    assert other.is_file() and not inst.claude.exists()


def test_diff_shown_before_writing(inst):
    write(inst.claude, dump(ORIG))
    res = inst.ok("claude", "--yes")
    assert f"--- {inst.claude}\n+++ {inst.claude}\n" in res.out
    assert f'+            "command": "{inst.cmd("claude", "SessionStart")}"' in res.out
    assert "@@ " in res.out
    assert res.out.index("+++") < res.out.index("claude: wired")


HAND = ('{\r\n'
        '    "model" :"opus",\r\n'
        '    "cost":   2.50,\r\n'
        '    "permissions": {"allow": ["Bash(git status:*)"],\r\n'
        '                    "defaultMode": "default"},\r\n'
        '    "env": {"FOO": "b\\u00e4r"},\r\n'
        '    "hooks": {\r\n'
        '        "Stop": [ {"hooks": [{"type": "command", "command": "say done"}]} ]\r\n'
        '    }\r\n'
        '}\r\n')


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_hand_formatted_file_comes_back_byte_for_byte(inst, agent):
    """Issue 18.5: uninstall after install restores the exact bytes of a file that is not
    2-space JSON, and install touched nothing but the entries it added."""
    path = inst.claude if agent == "claude" else inst.gemini
    orig = write(path, HAND)
    inst.ok(agent, "--yes", "--no-statusline") if agent == "claude" else inst.ok(agent, "--yes")
    text = path.read_bytes().decode()
    assert '    "model" :"opus",\r\n    "cost":   2.50,\r\n' in text  # untouched bytes
    assert '"env": {"FOO": "b\\u00e4r"}' in text
    assert '"Stop": [ {"hooks": [{"type": "command", "command": "say done"}]}' in text
    assert "\n" not in text.replace("\r\n", "")  # the file's own line ending
    inst.ok(agent, "--uninstall", "--yes")
    assert path.read_bytes() == orig

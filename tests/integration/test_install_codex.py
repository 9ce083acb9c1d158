"""`tma install-hooks codex`: config.toml (notify, [features] hooks) and hooks.json."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.helpers.installs import Inst, dump, ours, write


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


EVENTS = ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
          "PostCompact", "PermissionRequest", "Stop", "SubagentStart", "SubagentStop"]

CONFIG = '''# My codex setup.
model = "gpt-5"   # the default model
approval_policy = "on-request"

# providers
[model_providers.mock]
base_url = "http://127.0.0.1:18080/v1"   # local
env_key = "MOCK_API_KEY"

[projects."/home/me/work"]
trust_level = "trusted"

[features]
# keep the daemon off
daemon_auto_start = false
'''

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
    {"type": "command", "command": "python3 audit.py", "timeout": 10}]}]}}


def test_roundtrip(inst):
    conf = write(inst.codex_config, CONFIG)
    hooks = write(inst.codex_hooks, dump(HOOKS))
    res = inst.ok("codex", "--yes")
    assert "Hooks need review" in res.out
    text = inst.codex_config.read_text()
    doc = tomllib.loads(text)
    assert doc["notify"] == [str(inst.wrapper), "codex", "notify"]
    assert doc["features"] == {"daemon_auto_start": False, "hooks": True}
    # every original line survives, comments included, in order
    lines = text.splitlines()
    kept = [ln for ln in lines if not ln.startswith(("notify = ", "hooks = true"))]
    assert kept == CONFIG.splitlines()
    assert 'hooks = true # added by tma install-hooks' in lines
    # notify sits among the top-level keys, before the first table
    assert lines.index(f'notify = ["{inst.wrapper}", "codex", "notify"]') < lines.index(
        "[model_providers.mock]")

    data = json.loads(inst.codex_hooks.read_text())
    found = ours(inst, data, "codex")
    assert sorted(found) == sorted(EVENTS) and "notify" not in data["hooks"]
    for ev in EVENTS:
        assert found[ev] == [inst.cmd("codex", ev)]
        assert all(isinstance(h["command"], str) for g in data["hooks"][ev] for h in g["hooks"])
    assert data["hooks"]["PreToolUse"][0] == HOOKS["hooks"]["PreToolUse"][0]

    assert inst.ok("--check").out == "tma: hooks OK\n"
    before = (inst.codex_config.read_bytes(), inst.codex_hooks.read_bytes())
    assert "already wired" in inst.ok("codex", "--yes").out
    assert (inst.codex_config.read_bytes(), inst.codex_hooks.read_bytes()) == before

    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_bytes() == conf
    assert inst.codex_hooks.read_bytes() == hooks


@pytest.mark.parametrize("original", [
    "", "# only a comment\n", 'model = "o3"\n', "[a]\nb = 1\n", "# about a\n[a]\nb = 1\n",
    'x = 1\n\n# note\n[a]\nb = 1\n', 'x = 1\n[features]\nother = false\n',
    'arr = [\n  1, # one\n  2,\n]\ns = """\n[not-a-table]\n"""\n[t]\nk = 1\n',
    'features.daemon_auto_start = false\n',
], ids=["empty", "comment", "key", "table", "commented-table", "key-note-table",
        "features-table", "multiline-values", "dotted-features"])
def test_toml_shapes_restored(inst, original):
    conf = write(inst.codex_config, original)
    inst.ok("codex", "--yes")
    doc = tomllib.loads(inst.codex_config.read_text())
    assert doc["notify"][1:] == ["codex", "notify"] and doc["features"]["hooks"] is True
    assert inst.ok("--check").out == "tma: hooks OK\n"
    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_bytes() == conf


def test_foreign_edit_after_install_survives_uninstall(inst):
    write(inst.codex_config, CONFIG)
    inst.ok("codex", "--yes")
    # codex records hook trust in config.toml; the user adds a key
    text = inst.codex_config.read_text().replace('approval_policy = "on-request"\n',
                                                 'approval_policy = "on-request"\n'
                                                 'sandbox_mode = "workspace-write"\n')
    text += '\n[hooks.state."/h/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "abc"\n'
    inst.codex_config.write_text(text)
    data = json.loads(inst.codex_hooks.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine"}]})
    inst.codex_hooks.write_text(dump(data))
    res = inst.ok("codex", "--uninstall", "--yes")
    assert "still holds other hooks" in res.out  # told that the feature line goes
    want = CONFIG.replace('approval_policy = "on-request"\n',
                          'approval_policy = "on-request"\nsandbox_mode = "workspace-write"\n')
    want += '\n[hooks.state."/h/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "abc"\n'
    assert inst.codex_config.read_text() == want
    assert json.loads(inst.codex_hooks.read_text()) == {"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "mine"}]}]}}


def test_foreign_notify_refused(inst):
    conf = write(inst.codex_config, 'notify = ["python3", "/home/me/notify.py"]\n' + CONFIG)
    res = inst.run("codex", "--yes")
    assert res.rc == 1
    assert str(inst.codex_config) in res.err and "notify.py" in res.err
    assert "only one notify program" in res.err
    assert inst.codex_config.read_bytes() == conf
    assert not inst.codex_hooks.exists() and not inst.wrapper.exists()
    # nothing of ours: the bare check says there is nothing to check, the named one says
    # not installed
    res = inst.run("--check")
    assert res.rc == 1 and "nothing to check" in res.err
    # hooks.json wired by hand beside the foreign notify: check names the notify
    inst.ok("claude", "--yes")  # gets the wrapper written
    hooks = {"hooks": {ev: [{"hooks": [{"type": "command", "command": inst.cmd("codex", ev)}]}]
                       for ev in EVENTS}}
    write(inst.codex_hooks, dump(hooks))
    res = inst.run("--check", "codex")
    assert res.rc == 1 and "foreign program" in res.err and "notify.py" in res.err
    # uninstall leaves the foreign notify alone
    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_bytes() == conf
    assert json.loads(inst.codex_hooks.read_text()) == {}


def test_old_tma_notify_repointed(inst):
    write(inst.codex_config, 'notify = ["/old/bin/tma-hook", "codex", "notify"]  # tma\n'
                             'model = "o3"\n')
    assert inst.run("--check").rc == 1
    inst.ok("codex", "--yes")
    doc = tomllib.loads(inst.codex_config.read_text())
    assert doc["notify"] == [str(inst.wrapper), "codex", "notify"]
    assert inst.codex_config.read_text().startswith(f'notify = ["{inst.wrapper}"')
    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_text() == 'model = "o3"\n'


def test_features_hooks_false_refused_and_users_own_true_kept(inst):
    conf = write(inst.codex_config, '[features]\nhooks = false\n')
    res = inst.run("codex", "--yes")
    assert res.rc == 1 and "hooks = false" in res.err
    assert inst.codex_config.read_bytes() == conf
    conf = write(inst.codex_config, 'model = "o3"\n\n[features]\nhooks = true\n')
    inst.ok("codex", "--yes")
    assert tomllib.loads(inst.codex_config.read_text())["features"] == {"hooks": True}
    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_bytes() == conf


def test_codex_home_and_defaults(inst, monkeypatch, tmp_path):
    monkeypatch.delenv("TMA_CODEX_CONFIG")
    monkeypatch.delenv("TMA_CODEX_HOOKS")
    inst.ok("codex", "--yes")
    assert (inst.home / ".codex" / "config.toml").is_file()
    assert (inst.home / ".codex" / "hooks.json").is_file()
    ch = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(ch))
    inst.ok("codex", "--yes")
    assert (ch / "config.toml").is_file() and (ch / "hooks.json").is_file()
    # flags beat both
    inst.ok("codex", "--yes", "--codex-config", str(tmp_path / "c.toml"),
            "--codex-hooks", str(tmp_path / "h.json"))
    assert (tmp_path / "c.toml").is_file() and (tmp_path / "h.json").is_file()


def test_check_names_missing_pieces(inst):
    write(inst.codex_config, CONFIG)
    inst.ok("codex", "--yes")
    text = inst.codex_config.read_text().replace("hooks = true # added by tma install-hooks\n",
                                                 "")
    inst.codex_config.write_text(text)
    res = inst.run("--check")
    assert res.rc == 1 and "[features] hooks is not true" in res.err
    inst.codex_hooks.write_text("{}\n")
    res = inst.run("--check", "codex")
    assert res.rc == 1 and "SessionStart" in res.err
    inst.ok("--all", "--yes")
    assert inst.ok("--check").out == "tma: hooks OK\n"


def test_no_final_newline_gets_one(inst):
    write(inst.codex_config, 'model = "o3"')
    inst.ok("codex", "--yes")
    inst.ok("codex", "--uninstall", "--yes")
    assert inst.codex_config.read_text() == 'model = "o3"\n'

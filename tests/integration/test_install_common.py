"""`tma install-hooks`: the shared machinery (CLI, refusals, prompt, writes, wrapper).

Also the helpers the other test_install_* modules use. Every test runs the real CLI
in-process (`tma.cli.main.main`) with HOME, XDG dirs, every TMA_* path and PATH pointed
into tmp_path, against a tmux socket name no server listens on. The tmux attention
hooks module is hidden (its own tests cover it), except in the one end-to-end test
that drives a private server.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.helpers.installs import (
    FakeStdin,
    Inst,
    dump,
    ours,
    write,
)
from tma.cli.main import main
from tma.install import common


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


CLAUDE_ORIG = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
}


# ---------------------------------------------------------------- CLI surface


def test_usage_and_unknown_agents(inst):
    assert inst.run().rc == 2
    res = inst.run("claude", "--all")
    assert res.rc == 2 and "not both" in res.err
    res = inst.run("nope", "--yes")
    assert res.rc == 2  # usage, as an unknown command or flag is
    assert 'tma: unknown agent "nope" (expected one of: claude, codex, gemini,' in res.err
    res = inst.run("cladue", "--yes")
    assert res.rc == 2 and res.err.rstrip().endswith("; did you mean 'claude'?")
    assert not inst.wrapper.exists()


def test_command_is_registered():
    from tma.cli.spec import COMMANDS

    assert COMMANDS["install-hooks"].module == "install_hooks"


# ---------------------------------------------------------------- read refusals


def _dir(p: Path):
    p.mkdir(parents=True)


def _non_utf8(p: Path):
    write(p, b'{"model": "\xff\xfe"}\n')


def _malformed(p: Path):
    write(p, '{"model": "opus",\n')


def _dangling(p: Path):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.symlink_to(p.parent / "missing-target.json")


def _array(p: Path):
    write(p, "[1, 2]\n")


def _hooks_not_object(p: Path):
    write(p, '{"hooks": ["x"]}\n')


@pytest.mark.parametrize("make,words", [
    (_dir, "directory"), (_non_utf8, "UTF-8"), (_malformed, "malformed JSON"),
    (_dangling, "dangling symlink"), (_array, "not a JSON object"),
    (_hooks_not_object, "not an object"),
], ids=["directory", "non-utf8", "malformed", "dangling-symlink", "array", "hooks-array"])
def test_unreadable_settings_refused_and_untouched(inst, make, words):
    p = inst.claude
    make(p)
    before = (p.is_dir(), p.is_symlink(), p.read_bytes() if p.is_file() else None)
    for args in (("claude", "--yes"), ("claude", "--uninstall", "--yes")):
        res = inst.run(*args)
        assert res.rc == 1, res
        assert str(p) in res.err and words in res.err, res.err
        assert (p.is_dir(), p.is_symlink(), p.read_bytes() if p.is_file() else None) == before
    assert not inst.wrapper.exists()
    res = inst.run("--check", "claude")
    assert res.rc == 1 and str(p) in res.err


def test_codex_toml_refusals(inst):
    for content in (b'model = "o3\n', b'model = "\xff"\n'):
        data = write(inst.codex_config, content)
        res = inst.run("codex", "--yes")
        assert res.rc == 1 and str(inst.codex_config) in res.err
        assert inst.codex_config.read_bytes() == data
        assert not inst.codex_hooks.exists()


# ---------------------------------------------------------------- the prompt


def test_prompt_decline_and_accept(inst):
    orig = write(inst.claude, dump(CLAUDE_ORIG))
    # not a terminal, no --yes: declined
    res = inst.run("claude")
    assert res.rc == 1 and "tma: aborted; no changes written" in res.err
    assert f"+++ {inst.claude}" in res.out
    assert inst.claude.read_bytes() == orig and not inst.wrapper.exists()
    # a terminal answering n (the first answer is the shim's own question's)
    res = inst.run("claude", stdin="n\nn\n", tty=True)
    assert res.rc == 1 and "Apply this change? [y/N]" in res.out
    assert "tma: aborted; no changes written" in res.err
    assert inst.claude.read_bytes() == orig
    # an empty answer is no
    assert inst.run("claude", stdin="\n\n", tty=True).rc == 1
    assert inst.claude.read_bytes() == orig
    # y applies
    res = inst.run("claude", stdin="y\ny\n", tty=True)
    assert res.rc == 0, res
    assert "Apply this change? [y/N]" in res.out
    assert ours(inst, json.loads(inst.claude.read_text()), "claude")
    assert inst.wrapper.exists()
    # nothing left to do: no prompt at all
    res = inst.run("claude", stdin="", tty=True)
    assert res.rc == 0 and "Apply this change" not in res.out and "already wired" in res.out


class InterruptedStdin(FakeStdin):
    """A terminal whose user presses Ctrl-C at the prompt."""

    def readline(self, *a):
        raise KeyboardInterrupt


def test_ctrl_c_at_the_prompt_aborts_without_a_traceback(inst):
    orig = write(inst.claude, dump(CLAUDE_ORIG))
    inst.capsys.readouterr()
    inst.mp.setattr(sys, "stdin", InterruptedStdin("", True))
    rc = main(["--socket-name", inst.socket, "install-hooks", "claude"])
    out, err = inst.capsys.readouterr()
    # Ctrl-C stops the command (exit 130, as everywhere), not just this one answer
    assert rc == 130 and "tma: interrupted" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    # (the first question: the shim's) the cursor leaves the prompt line
    assert out.endswith("Put the shim into Claude Code's status line? [y/N] \n")
    assert inst.claude.read_bytes() == orig and not inst.wrapper.exists()
    # Ctrl-D (end of input) declines this change: exit 1
    res = inst.run("claude", stdin="", tty=True)
    assert res.rc == 1 and "tma: aborted; no changes written" in res.err


def test_a_declined_install_says_would_write(inst):
    res = inst.run("gemini")  # not a terminal: declined
    assert res.rc == 1
    assert f"would write the hook wrapper {inst.wrapper}" in res.out
    assert "\nwrite the hook wrapper" not in "\n" + res.out
    res = inst.ok("gemini", "--yes")  # applied: plain "write"
    assert res.out.startswith(f"write the hook wrapper {inst.wrapper}")


def test_every_adapter_flag_is_a_command_line_flag(capsys):
    """The adapters own their file flags; install-hooks and uninstall take each one."""
    from tma.install import registry

    owned = {f.flag for f in registry.file_options()}
    assert len(owned) == 11  # claude 1, gemini 1, codex 2, cursor 2, opencode, pi, copilot, qwen,
    # aider
    for command in ("install-hooks", "uninstall"):
        try:
            main([command, "--help"])
        except SystemExit as exc:
            assert exc.code in (0, None)
        shown = capsys.readouterr().out
        assert all(flag in shown for flag in owned), (command, shown)
    for f in registry.file_options():
        assert f.env.startswith("TMA_") and f.dest.replace("_", "-") == f.flag[2:]


# ---------------------------------------------------------------- writes


def test_wrapper_written_0755_and_skipped_when_identical(inst):
    inst.ok("gemini", "--yes")
    assert inst.wrapper.read_bytes() == common.asset_bytes("tma-hook")
    assert stat.S_IMODE(inst.wrapper.stat().st_mode) == 0o755
    st = inst.wrapper.stat()
    res = inst.ok("gemini", "--yes")
    assert "hook wrapper" not in res.out
    assert inst.wrapper.stat().st_mtime_ns == st.st_mtime_ns
    # a different copy is replaced; a non-executable identical copy is fixed
    inst.wrapper.write_text("#!/bin/sh\nold\n")
    res = inst.ok("gemini", "--yes")
    assert "update the hook wrapper" in res.out
    assert inst.wrapper.read_bytes() == common.asset_bytes("tma-hook")
    inst.wrapper.chmod(0o644)
    inst.ok("gemini", "--yes")
    assert os.access(inst.wrapper, os.X_OK)


def test_wrapper_beside_running_tma_by_default(inst, monkeypatch):
    monkeypatch.delenv("TMA_WRAPPER_PATH")
    inst.ok("gemini", "--yes")
    data = json.loads(inst.gemini.read_text())
    want = f"{inst.bin / 'tma-hook'} gemini AfterAgent"
    assert ours(inst, data, "gemini")["AfterAgent"] == [want]
    other = inst.root / "elsewhere" / "tma-hook"
    inst.ok("gemini", "--yes", "--wrapper-path", str(other))
    assert other.is_file()
    assert ours(inst, json.loads(inst.gemini.read_text()), "gemini")["AfterAgent"] == [
        f"{other} gemini AfterAgent"]


def test_wrapper_path_with_spaces_is_quoted_and_recognised(inst, monkeypatch):
    spaced = inst.root / "my bin" / "tma-hook"
    monkeypatch.setenv("TMA_WRAPPER_PATH", str(spaced))
    inst.ok("gemini", "--yes")
    cmds = ours(inst, json.loads(inst.gemini.read_text()), "gemini")
    assert cmds["AfterAgent"] == [f"'{spaced}' gemini AfterAgent"]
    assert inst.ok("--check").out == "tma: hooks OK\n"
    inst.ok("gemini", "--uninstall", "--yes")
    assert not inst.gemini.exists()  # tma created it: the uninstall takes it back


def test_symlink_written_through_and_mode_kept(inst):
    target = inst.root / "dotfiles" / "settings.json"
    orig = write(target, dump(CLAUDE_ORIG))
    target.chmod(0o600)
    inst.claude.parent.mkdir(parents=True)
    inst.claude.symlink_to(target)
    inst.ok("claude", "--yes")
    assert inst.claude.is_symlink()
    assert ours(inst, json.loads(target.read_text()), "claude")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    inst.ok("claude", "--uninstall", "--yes")
    assert inst.claude.is_symlink() and target.read_bytes() == orig
    assert not [p for p in target.parent.iterdir() if p.name != "settings.json"]  # no temp


def test_parent_dirs_created_and_uninstall_never_creates(inst):
    assert not inst.gemini.parent.exists()
    res = inst.ok("gemini", "--uninstall", "--yes")
    assert "nothing to remove" in res.out and not inst.gemini.exists()
    inst.ok("gemini", "--yes")
    assert inst.gemini.is_file()


def test_write_failure_reported(inst):
    orig = write(inst.claude, dump(CLAUDE_ORIG))
    blocker = inst.root / "blocker"
    blocker.write_text("a file where a directory should be")
    res = inst.run("gemini", "--yes", "--gemini-settings", str(blocker / "settings.json"))
    assert res.rc == 1 and "cannot write" in res.err
    assert inst.claude.read_bytes() == orig


# ---------------------------------------------------------------- formats


FORMATS = {
    "minified": json.dumps(CLAUDE_ORIG, separators=(",", ":")),
    "minified-spaced": json.dumps(CLAUDE_ORIG),
    "tabs": json.dumps(CLAUDE_ORIG, indent="\t") + "\n",
    "four": json.dumps(CLAUDE_ORIG, indent=4) + "\n",
    "no-final-newline": json.dumps(CLAUDE_ORIG, indent=2),
    "crlf": json.dumps(CLAUDE_ORIG, indent=2).replace("\n", "\r\n") + "\r\n",
    "non-ascii": json.dumps(dict(CLAUDE_ORIG, note="café ✓"), indent=2,
                            ensure_ascii=False) + "\n",
    "ascii-escaped": json.dumps(dict(CLAUDE_ORIG, note="café ✓"), indent=2) + "\n",
    "empty": "",
    "empty-object": "{}\n",
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_format_preserved_and_restored(inst, name):
    orig = write(inst.gemini, FORMATS[name])
    inst.ok("gemini", "--yes")
    text = inst.gemini.read_bytes().decode()
    assert ours(inst, json.loads(text), "gemini")
    if name.startswith("minified"):
        assert "\n" not in text.strip()
    if name == "tabs":
        assert "\n\t\"hooks\"" in text
    if name == "four":
        assert '\n    "hooks"' in text
    if name == "crlf":
        assert text.count("\r\n") == text.count("\n")
    if name == "non-ascii":
        assert "café ✓" in text
    if name == "ascii-escaped":
        assert "caf\\u00e9" in text
    if name == "no-final-newline":
        assert not text.endswith("\n")
    inst.ok("gemini", "--uninstall", "--yes")
    if name != "empty":
        assert inst.gemini.read_bytes() == orig
    else:
        assert json.loads(inst.gemini.read_text()) == {}


# ---------------------------------------------------------------- ours / current


def test_old_wrapper_paths_repointed_and_removed(inst):
    doc = json.loads(json.dumps(CLAUDE_ORIG))
    doc["hooks"]["Stop"].append({"hooks": [
        {"type": "command", "command": "/old/place/tma-hook claude Stop"}]})
    doc["hooks"]["SessionStart"] = [{"hooks": [
        {"type": "command", "command": "'/old dir/tma-hook' claude SessionStart"},
        {"type": "command", "command": "echo mine"}]}]
    doc["hooks"]["Obsolete"] = [{"hooks": [
        {"type": "command", "command": "/old/place/tma-hook claude Obsolete"}]}]
    write(inst.claude, dump(doc))
    res = inst.run("--check")
    assert res.rc == 1
    assert "Stop" in res.err and "SessionStart" in res.err and "Obsolete" in res.err
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    found = ours(inst, data, "claude")
    assert found["Stop"] == [inst.cmd("claude", "Stop")]
    assert found["SessionStart"] == [inst.cmd("claude", "SessionStart")]
    assert "Obsolete" not in data["hooks"]
    assert {"type": "command", "command": "echo mine"} in data["hooks"]["SessionStart"][0]["hooks"]
    assert data["hooks"]["Stop"][0] == CLAUDE_ORIG["hooks"]["Stop"][0]
    assert inst.ok("--check").out == "tma: hooks OK\n"
    inst.ok("claude", "--uninstall", "--yes", "--no-statusline")
    data = json.loads(inst.claude.read_text())
    assert not ours(inst, data, "claude")
    assert data["hooks"]["SessionStart"] == [{"hooks": [
        {"type": "command", "command": "echo mine"}]}]


def test_lookalikes_are_foreign(inst):
    doc = {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/x/not-tma-hook claude Stop"},
        {"type": "command", "command": "/x/tma-hook codex Stop"},
        {"type": "command", "command": "/x/tma-hook claude Stopped"},
    ]}]}}
    orig = write(inst.claude, dump(doc))
    res = inst.ok("claude", "--uninstall", "--yes")
    assert "nothing to remove" in res.out
    assert inst.claude.read_bytes() == orig


# ---------------------------------------------------------------- --check / --all


def test_check_nothing_installed_and_named(inst):
    res = inst.run("--check")  # nothing wired: never "hooks OK"
    assert res.rc == 1 and res.out == ""
    assert "no agent carries tma wiring, so there is nothing to check" in res.err
    res = inst.run("--check", "claude")
    assert res.rc == 1
    assert res.err.startswith("tma: hook wiring incomplete:\n  - claude: hooks not installed")


def test_check_reports_missing_event_and_wrapper(inst):
    inst.ok("gemini", "--yes")
    data = json.loads(inst.gemini.read_text())
    del data["hooks"]["AfterAgent"]
    inst.gemini.write_text(dump(data))
    res = inst.run("--check")
    assert res.rc == 1
    assert "  - gemini: AfterAgent not wired" in res.err
    inst.ok("--all", "--yes")
    assert inst.ok("--check").out == "tma: hooks OK\n"
    inst.wrapper.unlink()
    res = inst.run("--check", "gemini")
    assert res.rc == 1 and f"wrapper: {inst.wrapper} is missing" in res.err


def test_all_touches_only_wired_agents(inst):
    res = inst.ok("--all", "--yes")
    assert "no agent carries tma wiring" in res.out
    assert not inst.wrapper.exists() and not inst.claude.exists()
    inst.ok("gemini", "--yes", "--no-statusline")
    inst.ok("pi", "--yes")
    res = inst.ok("--all", "--yes")
    assert "gemini: already wired" in res.out and "pi: already wired" in res.out
    assert not inst.claude.exists() and not inst.codex_config.exists()
    res = inst.ok("--all", "--uninstall", "--yes")
    assert "no agent is wired any more" in res.out
    assert not inst.gemini.exists() and not inst.gemini.parent.exists()  # tma made both
    assert not inst.paths["TMA_PI_EXTENSION"].exists()


def test_hookless_manifest_refused(inst, tmp_path):
    agents = tmp_path / "config" / "tma" / "agents"
    agents.mkdir(parents=True)
    (agents / "quiet.toml").write_text('min_engine_version = "0.1"\n[identity]\n'
                                       'process_names = ["quiet"]\n[capture]\n')
    res = inst.run("quiet", "--yes")
    assert res.rc == 1 and "no [hooks]" in res.err
    (agents / "loud.toml").write_text('min_engine_version = "0.1"\n[identity]\n'
                                      'process_names = ["loud"]\n[hooks]\ncovers = ["idle"]\n'
                                      '[[hooks.map]]\nevent = "Stop"\n'
                                      'claim = { state = "idle" }\n[capture]\n')
    res = inst.run("loud", "--yes")
    assert res.rc == 1 and 'no hook installer for agent "loud"' in res.err


# ---------------------------------------------------------------- end to end, real tmux


def test_end_to_end_subprocess_with_tmux_hooks(srv, tmp_path):
    """The real CLI in a subprocess against a private server: the tmux attention hooks
    come and go with the agent wiring."""
    srv.shell_pane()
    settings = srv.home / ".claude" / "settings.json"
    orig = write(settings, dump(CLAUDE_ORIG))
    env = {"TMA_CLAUDE_SETTINGS": str(settings),
           "TMA_WRAPPER_PATH": str(tmp_path / "wbin" / "tma-hook")}
    res = srv.tma("install-hooks", "claude", "--yes", manifests=False, env=env)
    assert res.returncode == 0, res.stderr
    # installing an agent's hooks installs tmux's attention hooks too; their absence is a
    # failure, never a skip
    assert "clear-attention" in srv.tmux("show-hooks", "-g")
    pane = srv.shell_pane()
    srv.tmux("set-option", "-p", "-t", pane, "@agent_state", "idle")
    res = srv.tma("install-hooks", "--check", manifests=False, env=env)
    assert res.returncode == 0 and res.stdout == "tma: hooks OK\n", res.stderr
    res = srv.tma("install-hooks", "claude", "--uninstall", "--yes", manifests=False, env=env)
    assert res.returncode == 0, res.stderr
    assert settings.read_bytes() == orig
    assert "clear-attention" not in srv.tmux("show-hooks", "-g")
    assert "@agent_state" not in srv.options(pane)  # the last uninstall purges


def test_the_tmux_hooks_are_in_the_diff_and_asked_about_with_the_files(srv, tmp_path):
    """`install-hooks codex` changes the running server too (its attention hooks): the
    diff shows those `set-hook` commands before the question that covers them, and a
    run with nothing left in the files still asks before it puts them back on a server
    that lost them (a restart): declined, the server is left as it was."""
    srv.shell_pane()
    cfgs = tmp_path / "codex"
    env = {"TMA_CODEX_CONFIG": str(cfgs / "config.toml"),
           "TMA_CODEX_HOOKS": str(cfgs / "hooks.json"),
           "TMA_WRAPPER_PATH": str(tmp_path / "wbin" / "tma-hook")}
    res = srv.tma("install-hooks", "codex", "--yes", manifests=False, env=env)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    head = out.index("tmux server ")
    assert "set-hook -ga after-select-pane " in out[head:]
    assert "set-hook -ga session-window-changed " in out[head:]
    assert head < out.index("tma: codex: wired") < out.index("tmux: installed the")
    assert "clear-attention" in srv.tmux("show-hooks", "-g")

    for hook in ("after-select-pane", "session-window-changed"):  # as a restart leaves it
        srv.tmux("set-hook", "-gu", hook)
    res = srv.tma("install-hooks", "codex", manifests=False, env=env)  # no terminal: no
    assert res.returncode == 1 and "already wired" not in res.stdout, res.stdout
    assert "+ set-hook -ga after-select-pane " in res.stdout
    assert "tma: aborted; no changes written" in res.stderr
    assert "clear-attention" not in srv.tmux("show-hooks", "-g")
    res = srv.tma("install-hooks", "codex", "--yes", manifests=False, env=env)
    assert res.returncode == 0 and "+ set-hook -ga after-select-pane " in res.stdout
    assert "clear-attention" in srv.tmux("show-hooks", "-g")
    res = srv.tma("install-hooks", "codex", manifests=False, env=env)  # nothing to change
    assert res.returncode == 0 and "tma: codex: already wired" in res.stdout, res.stdout
    assert "set-hook" not in res.stdout


def test_wrapper_shim_and_tmux_hooks_name_the_same_tma(srv, tmp_path):
    """One answer to "which tma?": the statusline shim and the tmux attention hooks
    call the tma being run, even with another tma first on PATH (the wrapper's place
    beside it: test_wrapper_beside_running_tma_by_default)."""
    import sys

    srv.shell_pane()
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "tma").write_text("#!/bin/sh\nexit 0\n")
    (decoy / "tma").chmod(0o755)
    settings = srv.home / ".claude" / "settings.json"
    env = {"TMA_CLAUDE_SETTINGS": str(settings), "TMA_WRAPPER_PATH": str(tmp_path / "tma-hook"),
           "PATH": f"{decoy}{os.pathsep}{srv.env['PATH']}"}
    res = srv.tma("install-hooks", "claude", "--yes", manifests=False, env=env)
    assert res.returncode == 0, res.stderr
    running = str(Path(sys.executable).with_name("tma"))  # what `python -m tma` runs as
    shim = json.loads(settings.read_text())["statusLine"]["command"]
    assert f"_TMA_BIN={running};" in shim
    hooks = [line for line in srv.tmux("show-hooks", "-g").splitlines()
             if "clear-attention" in line]
    assert hooks and all(running in line and str(decoy) not in line for line in hooks)
    srv.tma("install-hooks", "claude", "--uninstall", "--yes", manifests=False, env=env)


def test_installed_commands_reach_tma_through_the_wrapper(inst):
    """The command strings as the agents run them: through a shell (JSON hooks) or as an
    argv with the JSON appended (codex notify), via the real tma-hook, into `tma event`."""
    import subprocess
    import time

    inst.ok("gemini", "--yes")
    inst.ok("codex", "--yes")
    env = {"PATH": "/usr/bin:/bin", "TMA_BIN": str(inst.tma)}
    args_file, stdin_file = inst.bin / "tma.args", inst.bin / "tma.stdin"

    def fired():
        deadline = time.monotonic() + 10
        while not args_file.exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        out = args_file.read_text().splitlines(), stdin_file.read_text()
        args_file.unlink()
        return out

    cmd = ours(inst, json.loads(inst.gemini.read_text()), "gemini")["AfterAgent"][0]
    subprocess.run(["sh", "-c", cmd], input='{"session_id":"g1"}', text=True, env=env,
                   check=True, timeout=10)
    assert fired() == (["event", "--agent", "gemini", "--kind", "AfterAgent", "--payload", "-"],
                       '{"session_id":"g1"}')
    import tomllib

    notify = tomllib.loads(inst.codex_config.read_text())["notify"]
    payload = '{"type":"agent-turn-complete","thread-id":"t"}'
    subprocess.run(notify + [payload], text=True, env=env, check=True, timeout=10,
                   stdin=subprocess.DEVNULL)
    assert fired() == (["event", "--agent", "codex", "--kind", "notify", "--payload", "-"],
                       payload)


def test_empty_object_gets_the_usual_style_and_comments_are_named(inst):
    write(inst.gemini, "{}\n")
    inst.ok("gemini", "--yes")
    assert inst.gemini.read_text().startswith('{\n  "hooks": {\n')
    data = write(inst.gemini, '{\n  // my settings\n  "ui": {}\n}\n')
    res = inst.run("gemini", "--yes")
    assert res.rc == 1 and "comments are not supported" in res.err
    assert inst.gemini.read_bytes() == data

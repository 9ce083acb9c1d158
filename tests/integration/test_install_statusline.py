"""The chaining statusline shim (Claude, Cursor): installed, executed for real with
`sh -c`, declined, re-wrapped and restored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers.installs import Inst, dump, write
from tma.install import statusline

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build


@pytest.fixture
def inst(tmp_path, monkeypatch, capsys) -> Inst:
    return Inst(tmp_path, monkeypatch, capsys)


PAYLOAD = ('{"session_id":"s1","model":{"id":"claude-opus-4-8","display_name":"Opus"},'
           '"context_window":{"total_input_tokens":1200,"context_window_size":200000}}\n')
# A compound command reading stdin into a variable first: only works when the whole
# command, not just its first word, receives the payload.
USER_CMD = ("input=$(cat); printf 'model=%s ' \"$(printf '%s' \"$input\" | "
            "sed -n 's/.*\"id\":\"\\([^\"]*\\)\".*/\\1/p')\"; echo end")


def run_shim(command: str, env: dict, payload: str = PAYLOAD) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], input=payload, capture_output=True,
                          text=True, env=env, timeout=10)


def shim_env(inst: Inst, **extra) -> dict:
    env = {"PATH": os.environ["PATH"], "HOME": str(inst.home), "TMUX_PANE": "%7"}
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def wait_file(path, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path


def installed_command(path) -> str:
    return json.loads(path.read_text())["statusLine"]["command"]


@pytest.mark.parametrize("agent", ["claude", "cursor"])
def test_shim_runs_user_command_and_forwards(inst, agent):
    path = inst.claude if agent == "claude" else inst.cursor_cli
    write(path, dump({"statusLine": {"type": "command", "command": USER_CMD, "padding": 2}}))
    # the user's command alone, for reference
    plain = run_shim(USER_CMD, shim_env(inst))
    assert plain.stdout == "model=claude-opus-4-8 end\n"

    inst.ok(agent, "--yes")
    cmd = installed_command(path)
    assert json.loads(path.read_text())["statusLine"]["padding"] == 2
    res = run_shim(cmd, shim_env(inst))
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout == plain.stdout  # the status line renders exactly as before
    args = wait_file(inst.bin / "tma.args").read_text().splitlines()
    assert args == ["event", "--agent", agent, "--kind", "context", "--pane", "%7",
                    "--payload", "-"]
    assert (inst.bin / "tma.stdin").read_text() == PAYLOAD  # byte for byte


def test_shim_user_exit_status_passes_through(inst):
    write(inst.claude, dump({"statusLine": {"type": "command", "command": "echo hi; exit 3"}}))
    inst.ok("claude", "--yes")
    res = run_shim(installed_command(inst.claude), shim_env(inst))
    assert res.stdout == "hi\n" and res.returncode == 3


def test_shim_silent_when_tma_is_gone(inst):
    write(inst.claude, dump({"statusLine": {"type": "command", "command": "echo still here"}}))
    inst.ok("claude", "--yes")
    inst.tma.unlink()
    env = shim_env(inst, PATH="/usr/bin:/bin")  # no tma anywhere
    res = run_shim(installed_command(inst.claude), env)
    assert res.returncode == 0
    assert res.stdout == "still here\n" and res.stderr == ""


def test_shim_honours_tma_bin_and_skips_outside_tmux(inst, tmp_path):
    write(inst.claude, dump({"statusLine": {"type": "command", "command": "echo ok"}}))
    inst.ok("claude", "--yes")
    cmd = installed_command(inst.claude)
    # outside tmux nothing is forwarded (the user's command still runs)
    res = run_shim(cmd, shim_env(inst, TMUX_PANE=None))
    assert res.stdout == "ok\n"
    # $TMA_BIN wins over the recorded path
    other = tmp_path / "other"
    other.mkdir()
    (other / "tma").write_text(inst.tma.read_text())
    (other / "tma").chmod(0o755)
    res = run_shim(cmd, shim_env(inst, TMA_BIN=str(other / "tma")))
    assert res.stdout == "ok\n"
    wait_file(other / "tma.args")
    assert not (inst.bin / "tma.args").exists()


def test_shim_without_prior_command(inst):
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    assert data["statusLine"]["type"] == "command"
    res = run_shim(data["statusLine"]["command"], shim_env(inst))
    # its own minimal line (any statusLine replaces Claude's "? for shortcuts" hint)
    assert res.returncode == 0 and res.stdout == "Opus \u00b7 1% context\n"
    assert res.stderr == ""
    wait_file(inst.bin / "tma.args")
    assert (inst.bin / "tma.stdin").read_text() == PAYLOAD
    claude = ('{"model":{"display_name":"Opus 4.8 (1M context)"},"context_window":'
              '{"current_usage":{"input_tokens":9},"used_percentage":41.5},'
              '"rate_limits":{"five_hour":{"used_percentage":99}}}')
    res = run_shim(data["statusLine"]["command"], shim_env(inst), claude)
    assert res.stdout == "Opus 4.8 (1M context) \u00b7 42% context\n"
    res = run_shim(data["statusLine"]["command"], shim_env(inst),
                   '{"context_window":null,"rate_limits":{"five_hour":{"used_percentage":9}}}')
    assert res.returncode == 0 and res.stdout == ""
    inst.ok("claude", "--uninstall", "--yes")
    assert not inst.claude.exists()  # tma created it; with the shim gone nothing is left


def test_edited_inner_kept_on_reinstall_and_restored(inst):
    orig = {"statusLine": {"type": "command", "command": "echo one"}}
    write(inst.claude, dump(orig))
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    data["statusLine"]["command"] = data["statusLine"]["command"].replace("echo one",
                                                                          "echo two")
    inst.claude.write_text(dump(data))
    assert inst.ok("--check").out == "tma: hooks OK\n"
    res = inst.ok("claude", "--yes")
    assert "already wired" in res.out
    res = run_shim(installed_command(inst.claude), shim_env(inst))
    assert res.stdout == "two\n"
    inst.ok("claude", "--uninstall", "--yes")
    assert json.loads(inst.claude.read_text())["statusLine"] == {"type": "command",
                                                                 "command": "echo two"}


def test_stale_shim_repointed(inst, tmp_path, monkeypatch):
    write(inst.claude, dump({"statusLine": {"type": "command", "command": "echo a"}}))
    inst.ok("claude", "--yes")
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "tma").write_text(inst.tma.read_text())
    (moved / "tma").chmod(0o755)
    inst.tma.unlink()  # tma moved: the shim names a path that no longer exists
    monkeypatch.setenv("PATH", f"{moved}{os.pathsep}{inst.bin}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", [str(moved / "tma")])  # and the moved one runs now
    res = inst.run("--check")
    assert res.rc == 1 and "statusline shim" in res.err and "stale" in res.err
    inst.ok("claude", "--yes")
    cmd = installed_command(inst.claude)
    assert str(moved / "tma") in cmd
    assert statusline.parse(cmd, "claude") == (True, "echo a")
    assert inst.ok("--check").out == "tma: hooks OK\n"


def test_no_statusline_declines_and_is_remembered(inst):
    orig = write(inst.claude, dump({"model": "opus", "statusLine": {
        "type": "command", "command": "echo mine", "padding": 1}}))
    inst.ok("claude", "--yes")
    res = inst.ok("claude", "--yes", "--no-statusline")
    data = json.loads(inst.claude.read_text())
    assert data["statusLine"] == {"type": "command", "command": "echo mine", "padding": 1}
    state = inst.root / "config" / "tma" / statusline.STATE_FILE
    assert '"claude"' in state.read_text()
    assert "statusline-state.toml" in res.out  # shown in the diff
    # remembered: a plain install (and --all) does not put it back; check is happy
    inst.ok("claude", "--yes")
    inst.ok("--all", "--yes")
    assert json.loads(inst.claude.read_text())["statusLine"]["command"] == "echo mine"
    assert inst.ok("--check").out == "tma: hooks OK\n"
    # --check --statusline wants it there
    res = inst.run("--check", "--statusline")
    assert res.rc == 1 and "no statusline shim" not in res.err
    assert "not wrapped by the tma shim" in res.err
    # --statusline opts back in
    inst.ok("claude", "--yes", "--statusline")
    assert statusline.parse(installed_command(inst.claude), "claude") == (True, "echo mine")
    assert '"claude"' not in state.read_text()
    inst.ok("claude", "--uninstall", "--yes")
    assert inst.claude.read_bytes() == orig


def test_install_hooks_asks_about_the_shim_apart_as_init_does(inst):
    """`tma install-hooks claude` (what init says to run later) puts the shim into
    Claude's own status line only on its own question, init's: a "no" wires the hooks
    alone and is remembered (not asked again); a wired agent without the shim is asked
    on the next run, and a yes puts it in."""
    write(inst.claude, dump({"model": "opus"}))
    question = "Put the shim into Claude Code's status line? [y/N] "
    res = inst.run("claude", stdin="n\ny\n", tty=True)
    assert res.rc == 0, res
    assert res.out.count(question) == 1
    assert res.out.index(question) < res.out.index("Apply this change?")
    data = json.loads(inst.claude.read_text())
    assert "Stop" in data["hooks"] and "statusLine" not in data
    state = inst.root / "config" / "tma" / statusline.STATE_FILE
    assert '"claude"' in state.read_text()
    res = inst.run("claude", stdin="", tty=True)  # declined: kept to, nothing to ask
    assert res.rc == 0 and question not in res.out and "already wired" in res.out
    # the choice forgotten (another machine's state, say): asked again, and yes is yes
    state.unlink()
    res = inst.run("claude", stdin="y\ny\n", tty=True)
    assert res.rc == 0 and res.out.count(question) == 1, res
    assert statusline.parse(installed_command(inst.claude), "claude")[0] is True
    assert inst.ok("--check").out == "tma: hooks OK\n"


def test_statusline_only_counts_as_wiring(inst):
    write(inst.claude, dump({"statusLine": {"type": "command", "command": "echo a"}}))
    inst.ok("claude", "--yes")
    data = json.loads(inst.claude.read_text())
    del data["hooks"]
    inst.claude.write_text(dump(data))
    res = inst.run("--check")
    assert res.rc == 1 and "claude: SessionStart" in res.err
    inst.ok("--all", "--uninstall", "--yes")
    assert json.loads(inst.claude.read_text()) == {"statusLine": {"type": "command",
                                                                  "command": "echo a"}}

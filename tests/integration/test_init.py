"""`tma init`: detect the agents on PATH, wire each, advise on status-right, run doctor."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.machine import setup_machine

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build


LINE = "set -ga status-right ' #(tma status)'"
#: The tma `python -m tma` runs as: the script beside this interpreter.
VENV_TMA = str(Path(sys.executable).with_name("tma"))
#: This test run's tma is in a virtualenv that the PATH tmux has does not hold: named
#: by its absolute path.
FULL_LINE = f"set -ga status-right ' #({VENV_TMA} status)'"


def wired_commands(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    return [h["command"] for groups in data["hooks"].values() for g in groups
            for h in g["hooks"]]


def test_init_wires_detected_agents_and_ends_with_doctor(srv):
    paths = setup_machine(srv)
    srv.shell_pane()
    res = srv.tma("init", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    fake = srv.root / "agentbin"
    assert f"tma: init: found claude ({fake / 'claude'}), codex ({fake / 'codex'})" in out
    # both wired: one line each says what changes, no diff unless asked for
    assert "tma: claude: wired" in out and "tma: codex: wired" in out
    assert f"; create {paths['TMA_CLAUDE_SETTINGS']} (+" in out
    assert f"tma: claude: write the hook wrapper {srv.env['TMA_WRAPPER_PATH']}" in out
    assert f"tma: codex: create {paths['TMA_CODEX_CONFIG']} (+4 -0 lines); " in out
    assert "+++ " not in out and "@@ " not in out
    wrapper = srv.env["TMA_WRAPPER_PATH"]
    assert f"{wrapper} claude Stop" in wired_commands(paths["TMA_CLAUDE_SETTINGS"])
    assert f"{wrapper} codex Stop" in wired_commands(paths["TMA_CODEX_HOOKS"])
    assert f'notify = ["{wrapper}", "codex", "notify"]' in paths["TMA_CODEX_CONFIG"].read_text()
    assert not paths["TMA_GEMINI_SETTINGS"].exists()  # not on PATH: not touched
    # the status line: advice only, never edited
    assert "tma: init: status-right does not run `tma status`; add this line to " \
           "~/.tmux.conf" in out
    # once, in one wording, tma by its absolute path (install-keys' own reminder is
    # left out under init)
    steps = out[:out.index("tma: init: tma doctor\n")]
    assert steps.count("status-right") == 3 and steps.count(f"    {FULL_LINE}\n") == 1, out
    # tmux's own status-right fills most of its 40 columns: room for the segment
    assert steps.count("    set -g status-right-length ") == 1, out
    # tmux's default 15 s interval would leave the counts that far behind
    assert steps.count("    set -g status-interval 2\n") == 1, out
    assert "#(tma status)" not in steps and "@tma_status_segment" not in steps
    assert "then reload it: tmux source-file ~/.tmux.conf" in out
    assert "tma status" not in srv.tmux("show-options", "-gv", "status-right")
    # the keys: tmux.conf (none existed) holds just the line sourcing the managed file
    managed = paths["TMA_CONFIG_DIR"] / "tmux.conf"
    assert "tma: init: keys (tma install-keys)" in out
    assert (srv.home / ".tmux.conf").read_text() == \
        f'source-file -q "{managed}" # tma keys\n'
    assert "jump --attention" in srv.binding("prefix", "j")  # loaded
    # the daemon, started before doctor, which sees it: by init, or by the key file's
    # launcher that the keys step loaded a moment before (a race either side may win;
    # a busy machine lets the launcher win)
    assert ("tma: init: daemon running\n" in out
            or "tma: init: daemon already running (" in out), out
    # and doctor last
    tail = out[out.index("tma: init: tma doctor\n"):]
    assert "\ndaemon:  running, pid " in tail
    assert "\nwiring:  claude, codex wired; " in tail
    assert "\nhooks:   ✓ after-select-pane, ✓ session-window-changed\n" \
           "  - kept: in the managed key file" in tail
    assert tail.rstrip().endswith("panes (0):")


def test_init_wires_copilot_when_it_is_on_path(srv):
    """GitHub Copilot CLI on PATH (`copilot`): init offers it and writes tma's own hooks
    file, one entry per mapped event, the event on the command line; doctor lists it."""
    paths = setup_machine(srv, agents=("copilot",))
    srv.shell_pane()
    res = srv.tma("init", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert f"tma: init: found copilot ({srv.root / 'agentbin' / 'copilot'})" in out
    assert "tma: copilot: wired" in out
    data = json.loads(paths["TMA_COPILOT_HOOKS"].read_text())
    wrapper = srv.env["TMA_WRAPPER_PATH"]
    assert data["version"] == 1
    assert data["hooks"]["agentStop"] == [
        {"type": "command", "bash": f"{wrapper} copilot agentStop", "timeoutSec": 10}]
    tail = out[out.index("tma: init: tma doctor\n"):]
    assert "\nwiring:  copilot wired; " in tail, tail


def test_the_status_line_advice_keeps_the_status_right_there_is(srv, tmp_path):
    """init's line adds the segment to the user's status-right instead of replacing it
    (their clock, host and theme stay), and makes room for it where status-right-length
    would cut it off: run as advised, the server shows both."""
    setup_machine(srv, agents=())
    srv.shell_pane()
    mine = "#[fg=blue]#H #[default]%Y-%m-%d %H:%M #{=21:pane_title}"
    srv.tmux("set-option", "-g", "status-right", mine)
    # what the user's own part shows (measured before the segment joins it: how a `#()` not
    # yet run shows differs by release; 3.2a shows a long "<'...' not ready>")
    theirs = srv.tmux("display-message", "-p", "#{T:status-right}").rstrip("\n")
    theirs = theirs.replace("#[fg=blue]", "").replace("#[default]", "")
    res = srv.tma("init", "--yes", "--no-daemon", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    advice = [line.strip() for line in res.stdout.splitlines() if line.startswith("    set ")]
    assert f"{FULL_LINE}" in advice, res.stdout
    conf = tmp_path / "advised.conf"
    conf.write_text("\n".join(advice) + "\n")
    srv.tmux("source-file", str(conf))
    assert srv.tmux("show-options", "-gv", "status-right").rstrip("\n") == \
        f"{mine} #({VENV_TMA} status)"
    length = int(srv.tmux("show-options", "-gv", "status-right-length"))
    # the user's part, a space and the segment's room fit
    assert len(theirs) + 1 + 20 <= length, (theirs, length)
    # a status-right-length with room already is left alone
    srv.tmux("set-option", "-g", "status-right", "%H:%M", ";",
             "set-option", "-g", "status-right-length", "60")
    res = srv.tma("init", "--yes", "--no-daemon", manifests=False)
    assert "status-right-length" not in res.stdout and f"    {FULL_LINE}\n" in res.stdout


def test_status_right_already_running_tma_status(srv):
    setup_machine(srv, agents=("claude",))
    srv.shell_pane()
    srv.tmux("set-option", "-g", "status-right", "#(/opt/bin/tma status --x) %H:%M")
    conf = srv.home / ".config" / "tmux" / "tmux.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("# mine\n")
    res = srv.tma("init", "--yes", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "tma: init: status-right already runs `tma status`" in res.stdout
    assert LINE not in res.stdout and "add this line" not in res.stdout
    # doctor, run last, checks the program that status-right names
    assert "ambient: ✗ status-right runs `tma status`, but /opt/bin/tma is not found" \
        in res.stdout
    srv.tmux("set-option", "-g", "status-right", "%H:%M")
    res = srv.tma("init", "--yes", manifests=False)
    assert "add this line to ~/.config/tmux/tmux.conf" in res.stdout  # the existing file
    assert "tmux source-file ~/.config/tmux/tmux.conf" in res.stdout
    # install-keys added its one line to that file, and nothing else
    assert conf.read_text().startswith("# mine\n")
    assert conf.read_text().count("\n") == 2 and conf.read_text().endswith("# tma keys\n")


def test_declined_prompt_skips_the_agent_and_exits_1(srv):
    paths = setup_machine(srv)
    srv.shell_pane()
    res = srv.tma("init", manifests=False, input="")  # stdin is not a terminal: declines
    assert res.returncode == 1
    assert "tma: aborted; no changes written" in res.stderr
    assert "tma: init: claude was not wired" in res.stderr
    assert "tma: init: codex was not wired" in res.stderr
    assert "tma: init: the keys were not installed" in res.stderr
    assert res.stderr.rstrip().endswith("tma: init: incomplete: claude not wired; codex not "
                                        "wired; keys not installed")
    assert not (srv.home / ".tmux.conf").exists()
    assert not paths["TMA_CLAUDE_SETTINGS"].exists()
    assert not paths["TMA_CODEX_CONFIG"].exists()
    assert "tma: init: tma doctor" in res.stdout and "panes (0):" in res.stdout


def test_no_agent_on_path(srv):
    setup_machine(srv, agents=())
    srv.shell_pane()
    res = srv.tma("init", "--yes", manifests=False)
    assert res.returncode == 0, res.stderr
    assert "tma: init: no agent found on $PATH (looked for: aider, claude, " in res.stdout
    assert "panes (0):" in res.stdout


def test_status_line_names_tma_by_its_path_even_when_tmux_path_has_it(srv):
    """The status line, like the key file and the hooks, names tma by its absolute path:
    tmux's PATH today is not the PATH of the server started tomorrow."""
    setup_machine(srv, agents=())
    srv.env["PATH"] = os.pathsep.join([os.path.dirname(VENV_TMA), srv.env["PATH"]])
    srv.shell_pane()
    srv.tmux("set-environment", "-g", "PATH", srv.env["PATH"])
    res = srv.tma("init", "--yes", manifests=False)
    assert f"    {FULL_LINE}\n" in res.stdout and LINE not in res.stdout, res.stdout


def test_diff_on_request_the_shim_asked_apart_and_no_daemon(srv):
    """On a terminal: the shim that takes Claude's own status line is its own question
    (declined here), `d` at the wiring prompt shows the diff and asks again, and
    --no-daemon starts none and leaves the launcher out of the key file."""
    from tests.helpers.ptyclient import type_on_pty

    paths = setup_machine(srv, agents=("claude",))
    srv.shell_pane()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "init", "--no-daemon"]
    rc, out, prompts = type_on_pty(argv, srv.env, b"? [y/N",
                                   [b"n\n", b"d\n", b"y\n", b"y\n", b"y\n"])
    assert rc == 0, out
    assert "Put the shim into Claude Code's status line? [y/N] " in out
    assert out.count("Apply this change? [y/N/d=diff] ") == 3  # claude twice (d), keys
    assert out.count(f"+++ {paths['TMA_CLAUDE_SETTINGS']}") == 1  # the diff, once, on `d`
    settings = json.loads(paths["TMA_CLAUDE_SETTINGS"].read_text())
    assert "Stop" in settings["hooks"] and "statusLine" not in settings
    assert (paths["TMA_CONFIG_DIR"] / "statusline-state.toml").read_text().count("claude")
    managed = (paths["TMA_CONFIG_DIR"] / "tmux.conf").read_text()
    assert "daemon --ensure" not in managed.replace("# run-shell", "")
    assert "daemon not started (--no-daemon" in out
    assert "\ndaemon:  not running" in out
    r = srv.tma("init", "--daemon", "--no-daemon", manifests=False)
    assert r.returncode == 2


def test_a_running_daemon_is_not_asked_about_again(srv):
    """With this server's daemon already running (the key file's launcher starts one as
    soon as init loads the keys), init says so instead of asking to start one, and a
    "no" there could not contradict the doctor report below it."""
    from tests.helpers.ptyclient import type_on_pty

    setup_machine(srv, agents=("claude",))
    srv.shell_pane()
    assert srv.tma("daemon", "--ensure", manifests=False).returncode == 0
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "init"]
    rc, out, _prompts = type_on_pty(argv, srv.env, b"? [y/N", [b"y\n"] * 8)
    assert rc == 0, out
    assert "Start the daemon now?" not in out
    assert "tma: init: daemon already running (daemon pid " in out
    assert "\ndaemon:  running, pid " in out
    srv.tma("daemon", "--stop", manifests=False)


def test_ctrl_c_at_the_first_prompt_stops_init_at_once(srv):
    """One Ctrl-C (a \\x03 typed on init's controlling terminal) ends the whole command:
    exit 130, no second question, nothing written (not this agent's change, not the
    next agent's, not the keys)."""
    from tests.helpers.ptyclient import type_on_pty

    paths = setup_machine(srv)
    srv.shell_pane()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "init"]
    rc, out, prompts = type_on_pty(argv, srv.env, b"[y/N]", b"\x03")
    assert rc == 130, out
    assert prompts == 1, out
    assert "tma: interrupted" in out and "Traceback" not in out
    assert "tma: init: tma doctor" not in out
    assert not paths["TMA_CLAUDE_SETTINGS"].exists()
    assert not paths["TMA_CODEX_HOOKS"].exists() and not paths["TMA_CODEX_CONFIG"].exists()
    assert not (srv.home / ".tmux.conf").exists()
    assert not (paths["TMA_CONFIG_DIR"] / "tmux.conf").exists()


def test_init_offers_qwen_when_it_is_on_path(srv):
    """Qwen Code's `qwen` on PATH: init wires ~/.qwen/settings.json (observe-only hooks)
    after asking, and doctor lists it as wired."""
    paths = setup_machine(srv, agents=("qwen",))
    srv.shell_pane()
    res = srv.tma("init", "--yes", "--no-daemon", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert f"tma: init: found qwen ({srv.root / 'agentbin' / 'qwen'})" in out
    assert "tma: qwen: wired" in out
    wrapper = srv.env["TMA_WRAPPER_PATH"]
    commands = wired_commands(paths["TMA_QWEN_SETTINGS"])
    assert f"{wrapper} qwen PermissionRequest" in commands
    assert f"{wrapper} qwen Notification" in commands
    assert not paths["TMA_CLAUDE_SETTINGS"].exists()  # not on PATH: not touched
    tail = out[out.index("tma: init: tma doctor\n"):]
    assert "\nwiring:  qwen wired; " in tail


def test_init_offers_aider_when_it_is_on_path(srv):
    """aider on PATH: init wires ~/.aider.conf.yml (its notifications command) and doctor
    lists it as wired."""
    paths = setup_machine(srv, agents=("aider",))
    srv.shell_pane()
    res = srv.tma("init", "--yes", "--no-daemon", manifests=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert f"tma: init: found aider ({srv.root / 'agentbin' / 'aider'})" in out
    assert "tma: aider: wired" in out
    wrapper = srv.env["TMA_WRAPPER_PATH"]
    text = paths["TMA_AIDER_CONFIG"].read_text()
    assert f"{wrapper} aider notify '{{}}'" in text and "notifications: true" in text
    assert not paths["TMA_CLAUDE_SETTINGS"].exists()  # not on PATH: not touched
    tail = out[out.index("tma: init: tma doctor\n"):]
    assert "\nwiring:  aider wired; " in tail

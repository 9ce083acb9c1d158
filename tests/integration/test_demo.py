"""`tma demo`: the README's main job, end to end on its own private server.

Runs the real command (bundled manifests, isolated HOME and TMPDIR, the XDG cache and
state dirs left at their defaults under that HOME) and checks it shows blocked, working
and idle verdicts read back from real stamps, exits 0, and leaves nothing behind: no
server, no process, no temp dir, no socket, nothing in HOME (no cache either).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading

import pytest

from tests.helpers.tmux_sockets import require_tmux

# pane, agent, then the state after its glyph ("⚑ blocked")
ROW = re.compile(r"^\s+(%\d+)\s+(\S+)\s+\S (blocked|working|done|idle|unknown)\b", re.M)


def _env(root):
    # the cache and state dirs at their defaults, under HOME: where a person's are
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_CONFIG",
                        "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")}
    for d in ("home", "config", "tmp"):
        (root / d).mkdir()
    (root / "config.toml").touch()  # named by TMA_CONFIG: it must exist
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
               TMA_CONFIG=str(root / "config.toml"), TMPDIR=str(root / "tmp"),
               LANG="C.UTF-8")
    return env


def _leftovers(name: str) -> list[str]:
    res = subprocess.run(["pgrep", "-af", name], capture_output=True, text=True)
    return [line for line in res.stdout.splitlines()
            if re.search(re.escape(name) + r"(?![0-9])", line)]


@pytest.mark.tmux_contract
def test_demo_shows_every_state_and_cleans_up(tmp_path, tmux_build):
    tmux = tmux_build.path
    env = _env(tmp_path)
    # the demo finds tmux on PATH, as a user's shell does: this build
    env["PATH"] = tmux_build.bin_dir + os.pathsep + env.get("PATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "tma", "demo", "--seconds", "12"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path / "tmp")
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    name = f"tma-demo-{proc.pid}"
    assert proc.returncode == 0, out + err
    assert f"tmux -L {name} attach" in out

    rows = ROW.findall(out)
    agents = {agent for _, agent, _ in rows}
    assert agents == {"claude", "codex", "opencode", "pi"}, out
    states = {state for _, _, state in rows}
    assert {"blocked", "working", "idle"} <= states, out
    assert re.search(r"^\s+%\d+\s+\S+\s+⚑ blocked\s+permission\s+\d+[smhd]\s", out, re.M), out
    assert re.search(r"^\s+PANE\s+AGENT\s+STATE\s+", out, re.M), out  # a header names them
    assert "STATE says whose move it is:" in out and "⚑ blocked  yours" in out  # the legend
    assert not re.search(r"\b1\d{12}\b", out), out  # ages, never epoch milliseconds
    assert out.rstrip().splitlines()[-2].startswith("next: run `tma init`"), out
    assert "$ tma status --format plain" in out and "⚑" in out
    assert "verdicts seen: blocked, working" in out
    # one count of agents from the introduction to the end (processes said apart)
    told = re.search(r"^tma demo: (\d+) scripted fake agents \(([^)]*)\)", out, re.M)
    assert told and told.group(2) == "claude, codex, opencode, pi", out
    gone = re.search(r"^stopped: server \S+ killed, the (\d+) agents all gone \((\d+) "
                     r"processes\), temp dir removed$", out, re.M)
    assert gone and gone.group(1) == told.group(1) == "4" and gone.group(2) == "5", out

    # Nothing left: no server on the demo socket, no process, no temp dir, no socket file.
    res = subprocess.run([tmux, "-L", name, "list-sessions"], capture_output=True, text=True,
                         env=env)
    assert res.returncode != 0
    assert _leftovers(name) == []
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == []
    sock_dir = os.path.join(env.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}")
    assert not os.path.exists(os.path.join(sock_dir, name))
    # Nothing written into HOME (tma's cache, at its default under HOME, went with the
    # temp dir) or the config dir.
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "config").iterdir()) == []


def test_the_demo_borders_name_the_agent_and_its_state(tmp_path):
    """A pane's border says what `tma ls` says: the agent (codex, not the `node` its
    launcher runs as) and its state (done: idle with the attention mark). Read off the
    demo's own server, left running with --keep, then stopped as it says to."""
    tmux = require_tmux()
    env = _env(tmp_path)
    res = subprocess.run([sys.executable, "-m", "tma", "demo", "--seconds", "4", "--keep"],
                         capture_output=True, text=True, env=env, timeout=120,
                         cwd=tmp_path / "tmp")
    name = re.search(r"tmux -L (tma-demo-\d+) attach", res.stdout).group(1)
    try:
        assert res.returncode == 0, res.stdout + res.stderr

        def borders() -> dict[str, str]:
            out = subprocess.run(
                [tmux, "-L", name, "list-panes", "-a", "-F",
                 "#{@agent_name}|#{@agent_state}|#{@agent_attention}|#{E:pane-border-format}"],
                capture_output=True, text=True, env=env, timeout=10).stdout
            return {line.split("|")[0]: line for line in out.splitlines()}

        rows = borders()
        assert set(rows) == {"claude", "codex", "opencode", "pi"}, rows
        for agent, line in rows.items():
            _name, state, attention, border = line.split("|", 3)
            shown = "done" if state == "idle" and attention == "1" else state
            assert border.endswith(f" {agent} [{shown}] "), line
        assert "node" not in rows["codex"].split("|", 3)[3]
    finally:
        from tma.tmux import demo_server
        from tma.tmux.adapter import Server

        demo_server.kill(Server(tmux, socket_name=name))
        for line in _leftovers(name):  # the looping agents
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        left = [p for p in (tmp_path / "tmp").iterdir() if p.name.startswith(name)]
        for p in left:
            subprocess.run(["rm", "-rf", str(p)], check=False)


def test_demo_rejects_a_socket_flag(tmp_path):
    env = _env(tmp_path)
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", "x", "demo"],
                         capture_output=True, text=True, env=env, timeout=30)
    assert res.returncode == 2
    assert "private server" in res.stderr


def test_ctrl_c_stops_the_demo_and_cleans_up(tmp_path):
    tmux = require_tmux()
    env = _env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "tma", "demo", "--seconds", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path / "tmp")
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    try:
        lines = []
        for line in proc.stdout:  # the first listing means the server and agents are up
            lines.append(line)
            if line.startswith("[") and "$ tma ls" in line:
                break
        name = f"tma-demo-{proc.pid}"
        assert _leftovers(name), "the demo's agents should be running"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines) + out
    assert proc.returncode == 0, out + err
    assert "interrupted" in out and "temp dir removed" in out
    res = subprocess.run([tmux, "-L", name, "list-sessions"], capture_output=True, text=True,
                         env=env)
    assert res.returncode != 0
    assert _leftovers(name) == []
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == []


@pytest.mark.parametrize("cols", [80, 40])
def test_demo_fits_a_narrow_terminal(tmp_path, cols):
    from tests.helpers.ptyclient import run_on_pty

    env = _env(tmp_path)
    rc, out = run_on_pty([sys.executable, "-m", "tma", "demo", "--seconds", "5"], env,
                         cols=cols, timeout=90)
    assert rc == 0, out
    too_wide = [line for line in out.splitlines() if len(line) > cols]
    assert too_wide == [], out
    assert re.search(r"^\s+PANE\s+AGENT\s+STATE", out, re.M), out

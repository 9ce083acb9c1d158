"""Private tmux servers for integration tests.

Each test gets its own server (`tmux -L <unique> -f /dev/null`), an isolated HOME,
XDG dirs and config, and a bin dir of fake agents: symlinks named like an agent
that point at `sleep`, so the process tree and `pane_current_command` are real. A
test draws any screen into a pane by writing to its tty. The server is killed, every
process it started is reaped and its socket file removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tmux_sockets
from tmux_sockets import require_tmux

SLEEP = shutil.which("sleep") or "/bin/sleep"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"

TEST_MANIFEST = """
min_engine_version = "0.1"
[identity]
process_names = ["fakeagent"]
[hooks]
covers = ["working", "idle", "blocked", "lifecycle"]
[[hooks.map]]
event = "Start"
claim = { lifecycle = "start" }
[[hooks.map]]
event = "Work"
claim = { state = "working" }
[[hooks.map]]
event = "Ask"
claim = { state = "blocked", detail = "permission" }
[[hooks.map]]
event = "Stop"
claim = { state = "idle" }
turn_end = true
[[hooks.map]]
event = "Hint"
matcher = "VALID-7f3a"
claim = { state = "blocked", detail = "permission" }
[capture]
visible = ["working", "blocked"]
[[rules]]
state = "blocked"
detail = "permission"
priority = 100
region = "visible"
match = { contains = "FAKE-BLOCKED" }
[[rules]]
state = "working"
priority = 50
region = "visible"
match = { contains = "FAKE-WORKING" }
[[rules]]
state = "idle"
priority = 10
region = "visible"
match = { contains = "FAKE-IDLE" }
[[rules]]
state = "idle"
priority = 90
region = "visible"
skip_state_update = true
match = { contains = "FAKE-HISTORY" }
"""




class Server:
    def __init__(self, root: Path) -> None:
        self.tmux_bin = require_tmux()
        self.name = tmux_sockets.server_name("test")
        self.root = root
        self.home = root / "home"
        self.bin = root / "bin"
        self.manifests = root / "agents"
        for d in (self.home, self.bin, self.manifests, root / "config", root / "cache"):
            d.mkdir(parents=True, exist_ok=True)
        (self.manifests / "fake.toml").write_text(TEST_MANIFEST)
        self.config = root / "config.toml"
        self.config.touch()  # TMA_CONFIG names it: a named config must exist
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(root / "config"),
                        XDG_CACHE_HOME=str(root / "cache"), TMA_CONFIG=str(self.config),
                        LANG="C.UTF-8")
        self.env.pop("TMA_SOCKET_PATH", None)
        self.started = False

    # -- tmux
    def tmux(self, *args: str, check: bool = True) -> str:
        res = subprocess.run([self.tmux_bin, "-u", "-L", self.name, "-f", "/dev/null", *args],
                             capture_output=True, text=True, env=self.env, timeout=10)
        if check and res.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def fake(self, name: str) -> Path:
        """A fake agent binary: a symlink named like the agent, pointing at sleep."""
        link = self.bin / name
        if not link.exists():
            link.symlink_to(SLEEP)
        return link

    def new_pane(self, command: str, *, session: str = "s", width: int = 100,
                 height: int = 30) -> str:
        """A new pane (a new session the first time, then new windows) running command."""
        if not self.started:
            out = self.tmux("new-session", "-d", "-s", session, "-x", str(width), "-y",
                            str(height), "-P", "-F", "#{pane_id}", command)
            self.started = True
        elif session not in self.tmux("list-sessions", "-F", "#{session_name}").split():
            out = self.tmux("new-session", "-d", "-s", session, "-x", str(width), "-y",
                            str(height), "-P", "-F", "#{pane_id}", command)
        else:
            out = self.tmux("new-window", "-d", "-t", f"{session}:", "-P", "-F",
                            "#{pane_id}", command)
        return out.strip()

    def agent_pane(self, agent: str = "fakeagent", **kw) -> str:
        pane = self.new_pane(f"exec {self.fake(agent)} 100000", **kw)
        self.wait_for(lambda: self.display(pane, "#{pane_current_command}") == agent)
        return pane

    def shell_pane(self, **kw) -> str:
        return self.new_pane("exec sh", **kw)

    def display(self, pane: str, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", pane, fmt).rstrip("\n")

    def option(self, pane: str, key: str) -> str:
        return self.tmux("show-options", "-p", "-qv", "-t", pane, key).rstrip("\n")

    def options(self, pane: str) -> dict[str, str]:
        out = self.tmux("show-options", "-p", "-t", pane)
        result = {}
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]  # tmux quotes empty or spaced values
            result[key] = value
        return result

    def draw(self, pane: str, text: str, *, clear: bool = True) -> None:
        """Write a screen straight to the pane's tty (the agent process is `sleep`)."""
        tty = self.display(pane, "#{pane_tty}")
        data = ("\x1b[2J\x1b[H" if clear else "") + text.replace("\n", "\r\n")
        with open(tty, "w", encoding="utf-8") as fh:
            fh.write(data)
        marker = text.strip().splitlines()[-1][:20] if text.strip() else ""
        if marker:
            self.wait_for(lambda: marker in self.tmux("capture-pane", "-p", "-t", pane))

    @staticmethod
    def wait_for(pred, timeout: float = 10.0, interval: float = 0.05):
        deadline = time.monotonic() + timeout
        while True:
            value = pred()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError("condition not reached in time")
            time.sleep(interval)

    # -- tma
    def tma(self, *args: str, manifests: bool = True, check: bool = False,
            env: dict | None = None, input: str | None = None,
            timeout: float = 30) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "tma", "--socket-name", self.name]
        if manifests:
            argv += ["--manifest-dir", str(self.manifests)]
        res = subprocess.run(argv + list(args), capture_output=True, text=True,
                             env=dict(self.env, **(env or {})), input=input, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"tma {' '.join(args)} -> {res.returncode}\n{res.stderr}")
        return res

    def ls(self, *args: str, **kw) -> list[dict]:
        res = self.tma("ls", "--json", *args, check=True, **kw)
        return json.loads(res.stdout)["agents"]

    def row(self, pane: str, **kw) -> dict | None:
        for r in self.ls(**kw):
            if r["pane"] == pane:
                return r
        return None

    def next_second(self) -> None:
        """Sleep past the current epoch second (stampede guard, window_activity)."""
        now = time.time()
        time.sleep(int(now) + 1.05 - now)

    def kill(self) -> None:
        subprocess.run([self.tmux_bin, "-L", self.name, "kill-server"], capture_output=True,
                       env=self.env, timeout=10)
        # reap anything left that names our socket
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            res = subprocess.run(["pgrep", "-f", self.name], capture_output=True, text=True)
            if not res.stdout.strip():
                break
            time.sleep(0.05)
        subprocess.run(["pkill", "-9", "-f", self.name], capture_output=True)
        tmux_sockets.remove(self.name)  # tmux leaves its socket file behind


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path)
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def attach(srv):
    """Real clients attached to the test server (tests/integration/ptyclient.py): a PTY
    client by default, a control-mode one with control=True; closed afterwards."""
    from ptyclient import ControlClient, PtyClient

    clients: list = []

    def make(session: str = "s", control: bool = False, **kw):
        c = ControlClient(srv, session) if control else PtyClient(srv, session, **kw)
        clients.append(c)
        return c

    try:
        yield make
    finally:
        for c in clients:
            c.close()

"""Private tmux servers for integration tests.

Each test gets its own server (`tmux -L <unique> -f /dev/null`), an isolated HOME,
XDG dirs and config, and a bin dir of fake agents: symlinks named like an agent
that point at `sleep`, so the process tree and `pane_current_command` are real. A
test draws any screen into a pane by writing to its tty. The server is killed, every
process it started is reaped and its socket file removed afterwards.

The server's tmux is the fixture `tmux_build` (tests/helpers/tmux_matrix.py): the tmux on PATH,
or, for a test of the tmux contract suite (marker `tmux_contract`) while
TMA_TMUX_MATRIX names builds, each build in turn.
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

from tests.helpers import tmux_matrix, tmux_sockets
from tests.helpers.manifests import TEST_MANIFEST
from tests.helpers.tmux_sockets import require_tmux

SLEEP = shutil.which("sleep") or "/bin/sleep"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"





class Server:
    def __init__(self, root: Path, build: tmux_matrix.Build | None = None) -> None:
        self.build = build or tmux_matrix.Build("system", require_tmux())
        self.tmux_bin = self.build.path
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
        # every tmux this test's processes run is the build's: tma through TMA_TMUX_BIN,
        # a bare `tmux` (a hook's, a test helper's) through PATH
        self.env["TMA_TMUX_BIN"] = self.tmux_bin
        self.env["PATH"] = self.build.bin_dir + os.pathsep + self.env.get("PATH", "")
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
        """A new pane (a new session the first time, then new windows) running command.

        Every window has the size asked for on every release. 3.2a sizes a detached
        session's windows by default-size (80x24), whatever new-session's -x/-y say (3.3a
        and later make them the session's default-size): there the session's
        default-size is set for its later windows, and its first window resized (with
        its window-size left to the global `latest`, so a client still sizes it)."""
        if not self.started or session not in self.tmux("list-sessions", "-F",
                                                        "#{session_name}").split():
            out = self.tmux("new-session", "-d", "-s", session, "-x", str(width), "-y",
                            str(height), "-P", "-F", "#{pane_id}", command)
            self.started = True
            size = self.display(out.strip(), "#{window_width}x#{window_height}")
            if size != f"{width}x{height}":
                self.tmux("set-option", "-t", session, "default-size", f"{width}x{height}",
                          ";", "resize-window", "-t", out.strip(), "-x", str(width), "-y",
                          str(height), ";", "set-option", "-w", "-u", "-t", out.strip(),
                          "window-size")
        else:
            out = self.tmux("new-window", "-d", "-t", f"{session}:", "-P", "-F",
                            "#{pane_id}", command)
        return out.strip()

    def logging_tmux(self) -> tuple[Path, Path]:
        """(a tmux that logs each of its command lines, then runs the build's; the log):
        every tmux process tma starts is counted when TMA_TMUX_BIN names it."""
        log = self.root / "tmux-calls"
        log.touch()
        wrapper = self.bin / "tmux-logged"
        wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {self.tmux_bin} "$@"\n')
        wrapper.chmod(0o755)
        return wrapper, log

    def agent_pane(self, agent: str = "fakeagent", **kw) -> str:
        pane = self.new_pane(f"exec {self.fake(agent)} 100000", **kw)
        self.wait_for(lambda: self.display(pane, "#{pane_current_command}") == agent)
        return pane

    def shell_pane(self, **kw) -> str:
        return self.new_pane("exec sh", **kw)

    def display(self, pane: str, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", pane, fmt).rstrip("\n")

    def option(self, pane: str, key: str) -> str:
        """A pane option's value exactly as stored ("" when unset), on every release:
        show-options prints through vis(3) on 3.4 and 3.5a (`$HOME` as `\\$HOME`), so
        the value is read as tma reads free text (tma.tmux.frame). (A user option tma
        writes on panes is never set at window or global scope, where #{} would look.)"""
        from tma.tmux import frame

        return frame.untext(self.display(pane, frame.text(key)))

    def binding(self, table: str, key: str) -> str:
        """The command KEY runs in TABLE ("" when unbound). The whole table is read:
        `list-keys -T TABLE KEY` prints nothing on 3.7c when one binding matches."""
        from tma.tmux import keyfile
        from tma.tmux.adapter import Server as TmuxServer

        return keyfile.bindings(TmuxServer(self.tmux_bin, socket_name=self.name),
                                table).get(key, "")

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

    def refuses(self) -> bool:
        """The server's socket refuses a client (no server, or none listening). A dying
        server still accepts one and then drops it ("server exited unexpectedly"): a new
        server started then on the same socket fails the same way."""
        res = subprocess.run([self.tmux_bin, "-L", self.name, "list-sessions"],
                             capture_output=True, text=True, env=self.env)
        return res.returncode != 0 and "exited unexpectedly" not in res.stderr

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


def pytest_generate_tests(metafunc):
    """A contract test runs once per build of the matrix (when one is set)."""
    if "tmux_build" not in metafunc.fixturenames:
        return
    builds = tmux_matrix.matrix()
    if builds and metafunc.definition.get_closest_marker(tmux_matrix.MARK) is not None:
        tmux_matrix.parametrize(metafunc, builds)


@pytest.fixture
def tmux_build(request) -> tmux_matrix.Build:
    """This test's tmux: the matrix build it was parametrized with, else the one on PATH."""
    build = getattr(request, "param", None)
    return build if build is not None else tmux_matrix.Build("system", require_tmux())


@pytest.fixture
def srv(tmp_path, tmux_build, monkeypatch):
    # this process too: tma code a test calls in-process resolves the same build
    monkeypatch.setenv("TMA_TMUX_BIN", tmux_build.path)
    monkeypatch.setenv("PATH", tmux_build.bin_dir + os.pathsep + os.environ.get("PATH", ""))
    server = Server(tmp_path, tmux_build)
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def module_srv(tmp_path_factory):
    """One private server (the tmux on PATH) for a whole module: for tests that share a
    costly client started once per module (the browser tests' chromium and `tma web`)."""
    server = Server(tmp_path_factory.mktemp("srv"))
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def srv2(tmp_path, tmux_build):
    """A second private server with its own HOME and config: the other machine of a
    fleet test (this one, the device, when `srv` is the host)."""
    server = Server(tmp_path / "second", tmux_build)
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def attach(srv):
    """Real clients attached to the test server (tests/helpers/ptyclient.py): a PTY
    client by default, a control-mode one with control=True; closed afterwards."""
    from tests.helpers.ptyclient import ControlClient, PtyClient

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


@pytest.fixture
def sshd(tmp_path):
    """A real sshd on 127.0.0.1 (tests/helpers/sshd.py), closed after the test."""
    from tests.helpers import sshd as sshd_helper

    server = sshd_helper.Sshd(tmp_path / "sshd")
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture
def fleet_local(tmp_path, srv):
    """This machine in the fleet tests: its own tmux server (srv's build) with one shell
    pane, HOME and config with a short fleet keepalive (tests/helpers/fleet.py)."""
    from tests.helpers.fleet import KEEPALIVE_S, Here, config_text

    root = tmp_path / "local"
    root.mkdir()
    here = Here(root, srv.tmux_bin, config=config_text(root, KEEPALIVE_S), prefix="fleet")
    try:
        yield here
    finally:
        here.close()


@pytest.fixture
def fleet_daemon(fleet_local, tmp_path):
    """fleet_local's daemon, watched (tests/helpers/daemon.py); tma finds its socket."""
    from tests.helpers import daemon as daemon_helper

    with daemon_helper.watched(fleet_local, tmp_path) as d:
        fleet_local.env["XDG_RUNTIME_DIR"] = str(d.runtime)
        yield d

"""This machine in the fleet tests: its own HOME, XDG dirs and (optionally) config, a tma
that names its own tmux server, and with `tmux_bin` that server running one shell pane.
The hosts (a second tmux server behind a real sshd) are tests/helpers/sshd.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import tmux_sockets
from tests.helpers.schemas import _schema

LS_SCHEMA = _schema("ls.schema.json")
KEEPALIVE_S = 2  # [fleet] keepalive_secs in the tests: offline after 3 of them silent


def config_text(root: Path, keepalive_s: int) -> str:
    """Notifications to a log under root (no desktop), and a short fleet keepalive."""
    return (f"[notify]\nlog = \"{root / 'notify.jsonl'}\"\ndesktop = false\n"
            f"[fleet]\nkeepalive_secs = {keepalive_s}\n")


class Here:
    """`root` holds home/, config/, state/, cache/ and run/ (the runtime dir, 0700).
    `config`: the text of a config file (TMA_CONFIG) or None for none. Without
    `tmux_bin` no local tmux server runs (the hosts' rows alone)."""

    def __init__(self, root: Path, tmux_bin: str | None = None, *, config: str | None = None,
                 prefix: str = "fleet") -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root, self.tmux_bin = root, tmux_bin
        self.name = tmux_sockets.server_name(prefix)
        (root / "home").mkdir(exist_ok=True)
        (root / "run").mkdir(mode=0o700, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH")}
        self.env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
                        XDG_STATE_HOME=str(root / "state"), XDG_CACHE_HOME=str(root / "cache"),
                        XDG_RUNTIME_DIR=str(root / "run"), LANG="C.UTF-8")
        self.log = root / "notify.jsonl"
        self.config = root / "config.toml"
        if config is not None:
            self.config.write_text(config, encoding="utf-8")
            self.env["TMA_CONFIG"] = str(self.config)
        if tmux_bin is not None:
            self.env["TMA_TMUX_BIN"] = tmux_bin
            self.tmux("new-session", "-d", "-s", "here", "-x", "100", "-y", "30", "exec sh")

    def tmux(self, *args: str) -> str:
        assert self.tmux_bin is not None, "no local tmux server here"
        return subprocess.run([self.tmux_bin, "-L", self.name, "-f", "/dev/null", *args],
                              capture_output=True, text=True, env=self.env, timeout=10,
                              check=True).stdout

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tma", "--socket-name", self.name, *args]

    def tma(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    @staticmethod
    def wait_for(pred, timeout: float = 10.0, interval: float = 0.1):
        deadline = time.monotonic() + timeout
        while True:
            value = pred()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError("condition not reached in time")
            time.sleep(interval)

    def ls_hosts(self, *args: str) -> tuple[dict, str, float]:
        """`ls --hosts --json`: the document (schema-checked), stderr and the seconds."""
        import jsonschema

        start = time.monotonic()
        res = self.tma("ls", "--hosts", "--json", "--timeout", "5", *args)
        took = time.monotonic() - start
        assert res.returncode == 0, res.stderr
        assert "Traceback" not in res.stderr
        doc = json.loads(res.stdout)
        jsonschema.validate(doc, LS_SCHEMA)
        return doc, res.stderr, took

    def on_a_terminal(self, *args: str) -> str:
        """What a person sees: tma with its stdout on a PTY 200 columns wide."""
        import fcntl
        import pty
        import struct
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        proc = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", self.name,
                                 *args], stdout=slave, stderr=subprocess.DEVNULL,
                                env=self.env)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        proc.wait(timeout=30)
        return out.decode("utf-8", "replace")

    def host_state(self, host: str = "box") -> str | None:
        res = self.tma("ls", "--hosts", "--json", "--timeout", "5")
        doc = json.loads(res.stdout)
        return next((h["state"] for h in doc["hosts"] if h["name"] == host), None)

    def close(self) -> None:
        if self.tmux_bin is not None:
            subprocess.run([self.tmux_bin, "-L", self.name, "kill-server"],
                           capture_output=True, env=self.env, timeout=10)
            tmux_sockets.remove(self.name)

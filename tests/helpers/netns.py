"""A network namespace joined to this one by a veth pair, so a test can cut a host's
network and restore it: the far end (an sshd run under `wrap()`) listens on `far`, this
machine reaches it on the veth; `cut()` takes this end of the pair down (packets go
nowhere, nothing is closed or refused by the far side), `restore()` brings it back.

Needs root and iproute2 (`ip netns`); skips with the reason otherwise. Unix sockets
are not namespaced, so a process in it still reaches the test's tmux server.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess

import pytest


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10,
                          check=check)


class NetNs:
    def __init__(self) -> None:
        if shutil.which("ip") is None or os.geteuid() != 0:
            pytest.skip("needs root and iproute2 (ip netns) to cut a link")
        tag = f"{os.getpid() % 100000}{random.randrange(100):02d}"
        self.name = f"tma-ns{tag}"
        self.near_if, self.far_if = f"tmh{tag}", f"tmf{tag}"
        block = random.randrange(1, 16383) * 4  # a /30 in 10.213.0.0/16
        base = f"10.213.{block // 256}."
        self.near, self.far = base + str(block % 256 + 1), base + str(block % 256 + 2)
        made = _ip("netns", "add", self.name, check=False)
        if made.returncode != 0:
            pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
        try:
            _ip("link", "add", self.near_if, "type", "veth", "peer", "name", self.far_if)
            _ip("link", "set", self.far_if, "netns", self.name)
            _ip("addr", "add", f"{self.near}/30", "dev", self.near_if)
            _ip("link", "set", self.near_if, "up")
            self._in("addr", "add", f"{self.far}/30", "dev", self.far_if)
            self._in("link", "set", self.far_if, "up")
            self._in("link", "set", "lo", "up")
        except subprocess.CalledProcessError as exc:
            self.close()
            pytest.skip(f"cannot wire the namespace: {exc.stderr.strip()}")

    def _in(self, *args: str) -> None:
        _ip("netns", "exec", self.name, "ip", *args)

    def wrap(self) -> tuple[str, ...]:
        """The argv prefix that runs a command inside the namespace."""
        return ("ip", "netns", "exec", self.name)

    def cut(self) -> None:
        _ip("link", "set", self.near_if, "down")

    def restore(self) -> None:
        _ip("link", "set", self.near_if, "up")

    def close(self) -> None:
        _ip("link", "del", self.near_if, check=False)  # takes its peer with it
        _ip("netns", "delete", self.name, check=False)

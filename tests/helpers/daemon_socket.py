"""A daemon whose socket the tests talk to directly, and the raw requests they send it."""

from __future__ import annotations

import socket
import subprocess
import sys

from tests.helpers.daemon import Daemon


class SockDaemon(Daemon):
    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tma", "--socket-name", self.srv.name, "--manifest-dir",
                str(self.srv.manifests), "daemon", *args]

    def counts(self) -> dict:
        status = self.status()
        assert status is not None, "the daemon does not answer"
        return status

def hook(srv, env: dict, kind: str, pane: str, payload: str = '{"session_id":"s1"}',
         agent: str = "fake", **kw) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "event", "--agent", agent, "--kind", kind, "--pane", pane]
    return subprocess.run(argv, input=payload, capture_output=True, text=True,
                          env=dict(env, TMA_HOOK_STRICT="1"), timeout=30, **kw)

def _raw(path: str, data: bytes, wait: float = 2.0) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(wait)
        s.connect(path)
        s.sendall(data)
        out = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                out += chunk
        except TimeoutError:
            pass
    return out

def _field(value: bytes) -> bytes:
    return len(value).to_bytes(4, "little") + value

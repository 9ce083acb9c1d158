"""OpenCode launched with its HTTP API on a free port, and waits on its pane options."""

from __future__ import annotations

import dataclasses
import socket
import time

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.harness import Scenario

BASE = agents_mod.BY_KEY["opencode-1.18.33"]

@dataclasses.dataclass(frozen=True)
class LaunchedAgent(agents_mod.Agent):
    """The pinned OpenCode, launched with extra command-line words."""

    extra: str = ""

    def launch(self) -> str:
        return f"{self.binary} {self.extra}".strip()

def opencode(extra: str) -> LaunchedAgent:
    fields = {f.name: getattr(BASE, f.name) for f in dataclasses.fields(BASE)}
    return LaunchedAgent(**fields, extra=extra)

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def wait_option(sc: Scenario, name: str, pred, timeout: float = 30) -> str:
    deadline = time.time() + timeout
    value = sc.pane_option(name)
    while not pred(value):
        if time.time() > deadline:
            raise AssertionError(f"{name} never satisfied the test in {timeout:.0f}s "
                                 f"(last {value!r}); screen:\n{sc.screen()}")
        time.sleep(0.1)
        value = sc.pane_option(name)
    return value

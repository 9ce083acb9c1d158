"""Steps the live tests share: answering an agent's dialog and waiting for its screen to settle."""

from __future__ import annotations

import re
import time

from tests.helpers.live import agents as agents_mod
from tests.helpers.live.harness import (
    Scenario,
)


def settle(sc: Scenario, regex: str) -> None:
    """Wait until `regex` has stayed on screen for 0.5 s (six samples in a row): keys sent
    to a dialog that is still being drawn can be lost (codex's hook-trust dialog lost
    them in the lab)."""
    assert sc.monitor is not None
    rx = re.compile(regex)
    deadline = time.time() + 30
    while time.time() < deadline:
        recent = sc.monitor.snapshot()[-6:]
        if len(recent) == 6 and all(rx.search(s.screen) for s in recent):
            return
        time.sleep(0.05)
    raise AssertionError(f"{sc.agent.key}: /{regex}/ did not stay on screen for 0.5 s")

def answer_dialog(sc: Scenario, dialog: agents_mod.Dialog) -> float:
    sc.wait_regex(dialog.shows, 30)
    settle(sc, dialog.shows)
    rx = re.compile(dialog.selected)
    for key in dialog.select_keys:
        assert sc.monitor is not None
        before = sc.monitor.last()
        if before is not None and rx.search(before.screen):
            break
        t = time.time()
        sc.keys(key)
        old_screen = before.screen if before is not None else ""
        sc.wait_screen(lambda s, old=old_screen: s.screen != old, 10, f"a reaction to {key}", t)
    sc.wait_regex(dialog.selected, 10)
    t = time.time()
    sc.keys(*dialog.confirm)
    return t

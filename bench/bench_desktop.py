#!/usr/bin/env python3
"""Blocked -> the desktop notification, with the daemon (run by hand; results go to
bench/RESULTS.md).

  python bench/bench_desktop.py [--runs 21]

A private tmux server (`-L tma-bench-desk-<pid>`, killed afterwards) with one fake claude
pane (a process named `claude`, really `sleep`) whose screen this script draws from the
captured Claude screens; a foreground `tma daemon` whose session bus is a private
`dbus-daemon` with the test notification server on it (tests/helpers/notify_server.py:
it owns org.freedesktop.Notifications and records when each Notify call arrives); the
real notify-send. Each run draws the idle screen, waits for the idle stamp, draws the
permission prompt, and waits for the Notify call; then dismisses the notification.

Measured per run: stamp -> Notify (the Notify call's arrival, epoch ms, minus the
blocked stamp's @agent_since: what the daemon and the sink add once the state is
known), and draw -> Notify (from the moment the prompt is on the pane: detection too).
Goal: stamp -> Notify p95 <= 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench_daemon_event import option, sandbox, status, tmux  # noqa: E402

SMOKE = [["--runs", "2"]]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"


def screen(state: str) -> str:
    from tma.core import fixture

    cap = fixture.parse((CAPTURES / f"claude-2.1.332_{state}.txt").read_text(encoding="utf-8"))
    return "\n".join(cap.body.rstrip("\n").split("\n")[-(cap.height or 30):])


def draw(name: str, pane: str, body: str, env: dict) -> None:
    """Write the screen to the pane's tty and wait until tmux shows it."""
    tty = tmux(name, "display-message", "-p", "-t", pane, "#{pane_tty}", env=env).strip()
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))
    plain = [ln for ln in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", body).splitlines() if ln.strip()]
    marker = plain[-1].strip()[:20]
    until(lambda: marker in tmux(name, "capture-pane", "-p", "-t", pane, env=env), 10)


def until(pred, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting")
        time.sleep(0.005)


def pct(xs: list[float], q: int) -> float:
    if len(xs) < 2:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1]


def missing() -> str | None:
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return "jeepney (pip install -e '.[test]')"
    for tool in ("dbus-daemon", "notify-send"):
        if shutil.which(tool) is None:
            return tool
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    lack = missing()
    if lack is not None:
        print(f"0 runs: {lack} is missing")
        return 0
    from tests.helpers.notify_server import NotifyBus

    work, env, fake, _tma = sandbox("tma-bench-desk-")
    name = f"tma-bench-desk-{os.getpid()}"
    tma = [sys.executable, "-m", "tma", "--socket-name", name]
    daemon = None
    stamp_ms: list[float] = []
    draw_ms: list[float] = []
    idle, blocked = screen("idle"), screen("blocked")
    try:
        with NotifyBus() as bus:
            env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
                 f"exec {fake} 100000", env=env)
            pane = tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}", env=env).strip()
            draw(name, pane, idle, env)
            daemon = subprocess.Popen([*tma, "daemon"], env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            until(lambda: status(name, env) is not None, 10)
            for n in range(1, args.runs + 1):
                until(lambda: option(name, pane, "@agent_state", env) == "idle", 15)
                t0 = time.time() * 1000
                draw(name, pane, blocked, env)
                note = bus.wait_notify(n, timeout=15)
                since = int(option(name, pane, "@agent_since", env))
                stamp_ms.append(note.at_ms - since)
                draw_ms.append(note.at_ms - t0)
                bus.dismiss(note.id)
                draw(name, pane, idle, env)
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        subprocess.run(["tmux", "-L", name, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"blocked -> desktop Notify, {len(stamp_ms)} runs (ms): "
          f"stamp->Notify p50 {statistics.median(stamp_ms):.0f} p95 {pct(stamp_ms, 95):.0f} "
          f"max {max(stamp_ms):.0f}; draw->Notify p50 {statistics.median(draw_ms):.0f} "
          f"p95 {pct(draw_ms, 95):.0f} max {max(draw_ms):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

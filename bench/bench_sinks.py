#!/usr/bin/env python3
"""Every sink at once, with the daemon: blocked -> each ring, and what a hanging sink costs
the others (run by hand; results go to bench/RESULTS.md).

  python bench/bench_sinks.py [--runs 20]

One private tmux server (`-L tma-bench-sinks-<pid>`, killed afterwards, `allow-passthrough
on`) with one fake claude pane (a process named `claude`, really `sleep`); a `tmux attach`
on a pseudo-terminal this script owns (the person's terminal: the OSC 9 and the message
line are timed as their bytes arrive); a private session bus (a real dbus-daemon) with the
test notification server on it (tests/helpers/notify_server.py: the time of each Notify
call) and the real notify-send; two HTTP servers on 127.0.0.1 for the webhook and ntfy;
a foreground `tma daemon` with every sink on: desktop (with its buttons), terminal,
message line, ntfy, webhook (`quiet_if_active_s = 0`: the attached client counts as the
person's input, which would keep every ring away).

Each episode moves the pane to working (PostToolUse), then to blocked (Claude's
PermissionRequest hook through `tma event`, the reply lane off), each asking a different
command, and waits for every sink's ring. Latency = arrival (epoch ms) - @agent_since (the
blocked stamp). Three kinds of episode, interleaved round by round (the order rotates) so
load drifts hit them alike:
- healthy: every sink answers;
- webhook hangs: its server accepts and never answers (the sink's timeout_s = 1);
- desktop hangs: the notification server takes notify-send's Notify call and does not
  answer until the episode is over (notify-send waits on it).
A hanging sink's cost to the others: the median of each other sink's latency in the hang
episodes minus its median in the healthy ones (goal <= 50 ms). Goals from the stamp:
desktop and terminal p95 <= 500 ms, webhook p95 <= 1000 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from _sinkkit import Client, Endpoint, pct  # noqa: E402

# The smallest run (argv lists): CI runs it (tests/integration/test_bench_scripts.py).
SMOKE = [["--runs", "1"]]

MODES = ("healthy", "webhook hangs", "desktop hangs")
SINKS = ("desktop", "terminal", "message", "ntfy", "webhook")
HANG_TIMEOUT_S = 1  # the webhook's timeout_s: a hung request frees its worker after this

CONFIG = """[daemon]
sweep_secs = 1
[hooks]
claude_reply_lane = false
[notify]
desktop = true
message = true
log = "{log}"
quiet_if_active_s = 0  # the bench's attached client counts as the person's input
[notify.terminal]
enabled = true
[notify.ntfy]
url = "{ntfy}"
[notify.webhook]
url = "{webhook}"
secret = "bench"
timeout_s = {timeout}
retries = 0
"""


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
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20, help="rounds (one episode of each kind)")
    ap.add_argument("--tmux", default=shutil.which("tmux") or "tmux")
    args = ap.parse_args()
    lack = missing()
    if lack is not None:
        print(f"0 runs: {lack} is missing")
        return 0
    from tests.helpers.notify_server import NotifyBus

    work = Path(tempfile.mkdtemp(prefix="tma-bench-sinks-"))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    webhook, ntfy = Endpoint(), Endpoint()
    (work / "config.toml").write_text(CONFIG.format(ntfy=ntfy.url, webhook=webhook.url,
                                                    timeout=HANG_TIMEOUT_S,
                                                    log=work / "notify.jsonl"))
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime),
               TMA_CONFIG=str(work / "config.toml"), TMA_TMUX_BIN=args.tmux,
               TERM="xterm-256color", LANG="C.UTF-8")
    for key in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD",
                "TMA_NOTIFY_FROM_EVENT", "http_proxy", "HTTP_PROXY"):
        env.pop(key, None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep") or "/bin/sleep")
    tma = str(Path(sys.executable).parent / "tma")
    name = f"tma-bench-sinks-{os.getpid()}"

    def tmux(*a: str) -> str:
        return subprocess.run([args.tmux, "-u", "-L", name, "-f", "/dev/null", *a], env=env,
                              check=True, capture_output=True, text=True).stdout

    version = subprocess.run([args.tmux, "-V"], capture_output=True, text=True).stdout.strip()
    got: dict[str, dict[str, list[float]]] = {m: {s: [] for s in SINKS} for m in MODES}
    ring: dict[str, dict[str, list[float]]] = {m: {s: [] for s in SINKS} for m in MODES}
    daemon = client = None
    try:
        with NotifyBus() as bus:
            env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            tmux("new-session", "-d", "-s", "b", "-x", "120", "-y", "40", f"exec {fake} 100000")
            tmux("set-option", "-g", "allow-passthrough", "on")
            pane = tmux("display-message", "-p", "-t", "b", "#{pane_id}").strip()
            client = Client([args.tmux, "-u", "-L", name, "attach", "-t", "b"], env)
            daemon = subprocess.Popen([tma, "--socket-name", name, "daemon"], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)

            rig = Rig(tmux, [tma, "--socket-name", name, "event", "--agent", "claude",
                             "--pane", pane], env, pane, client, bus, webhook, ntfy,
                      work / "notify.jsonl")
            time.sleep(1.0)  # the daemon's first read; the client's first frame
            k = 0
            for rnd in range(args.runs):
                for mode in MODES[rnd % 3:] + MODES[:rnd % 3]:
                    k += 1
                    stamp, fired = rig.episode(mode, k)
                    for sink in SINKS:
                        got[mode][sink].append(stamp[sink])
                        ring[mode][sink].append(fired[sink])
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        if client is not None:
            client.close()
        subprocess.run([args.tmux, "-L", name, "kill-server"], capture_output=True, env=env)
        for ep in (webhook, ntfy):
            ep.close()
        shutil.rmtree(work, ignore_errors=True)
    report(got, ring, args.runs, version)
    return 0


class Rig:
    """What one episode drives: the pane's hooks, the client, the servers."""

    def __init__(self, tmux, event_argv, env, pane, client, bus, webhook, ntfy, log) -> None:
        self.tmux, self.event_argv, self.env, self.pane = tmux, event_argv, env, pane
        self.client, self.bus, self.webhook, self.ntfy, self.log = \
            client, bus, webhook, ntfy, log

    def event(self, kind: str, payload: str) -> None:
        subprocess.run([*self.event_argv, "--kind", kind], input=payload.encode(),
                       env=self.env, check=True, capture_output=True)

    def option(self, key: str) -> str:
        return self.tmux("show-options", "-p", "-qv", "-t", self.pane, key).strip()

    def wait(self, what: str, pred, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            time.sleep(0.002)

    def episode(self, mode: str, k: int) -> tuple[dict[str, float], dict[str, float]]:
        """One blocked episode: ms from the stamp, and from the daemon's ring, per sink."""
        client, bus, webhook, ntfy = self.client, self.bus, self.webhook, self.ntfy
        self.event("PostToolUse", '{"session_id":"bench","tool_name":"Bash"}')
        self.wait("working", lambda: self.option("@agent_state") == "working")
        time.sleep(0.3)  # the daemon's read sees the working run end the episode
        webhook.hang = mode == "webhook hangs"
        bus.hold = mode == "desktop hangs"
        cmd = f"make run-{k}"
        osc = f"\x1b]9;claude blocked: Bash: {cmd}\x07".encode()
        line = b"tma: claude blocked[^\x07\x1b]*Bash: " + cmd.encode() + b"\\b"
        client.expect(osc)
        client.expect(line, literal=False)
        seen = {"webhook": len(webhook.arrivals), "ntfy": len(ntfy.arrivals),
                "desktop": len(bus.notes)}
        self.event("PermissionRequest", '{"session_id":"bench","tool_name":"Bash",'
                   f'"tool_use_id":"t-{k}","tool_input":{{"command":"{cmd}"}}}}')
        at = {"terminal": client.arrived(osc, 10), "message": client.arrived(line, 10)}
        self.wait("webhook", lambda: len(webhook.arrivals) > seen["webhook"])
        self.wait("ntfy", lambda: len(ntfy.arrivals) > seen["ntfy"])
        note = bus.wait_notify(seen["desktop"] + 1, timeout=10)
        at["webhook"] = webhook.arrivals[seen["webhook"]]
        at["ntfy"] = ntfy.arrivals[seen["ntfy"]]
        at["desktop"] = note.at_ms / 1000
        since = int(self.option("@agent_since"))
        fired = json.loads(self.log.read_text().splitlines()[-1])
        assert fired["summary"] == f"Bash: {cmd}", fired
        # the episode over: let the hung ones go, the message line clear
        if bus.hold:
            bus.hold = False
            bus.release()
        bus.dismiss(note.id)
        if webhook.hang:
            time.sleep(max(0.0, at["webhook"] + HANG_TIMEOUT_S + 0.2 - time.time()))
            webhook.hang = False
            webhook.release()
        time.sleep(max(0.0, at["message"] + 0.8 - time.time()))
        return ({s: at[s] * 1000 - since for s in SINKS},
                {s: at[s] * 1000 - fired["at"] for s in SINKS})


def report(got: dict[str, dict[str, list[float]]], ring: dict[str, dict[str, list[float]]],
           runs: int, version: str) -> None:
    healthy = got["healthy"]
    print(f"## Every sink at once, {version}, {runs} rounds (one episode of each kind a "
          "round)\n")
    print("| from the blocked stamp (@agent_since) to … | n | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    label = {"desktop": "desktop: the Notify call (real notify-send)",
             "terminal": "terminal: OSC 9 at the attached client",
             "message": "message line at the attached client",
             "ntfy": "ntfy: the POST arrives", "webhook": "webhook: the POST arrives"}
    for sink in SINKS:
        xs = healthy[sink]
        print(f"| {label[sink]} | {len(xs)} | {statistics.median(xs):.0f} | "
              f"{pct(xs, 95):.0f} | {max(xs):.0f} |")
    print("\n| from the daemon's ring (the `[notify] log` line's `at`) to … | n | p50 ms | "
          "p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for sink in SINKS:
        xs = ring["healthy"][sink]
        print(f"| {label[sink]} | {len(xs)} | {statistics.median(xs):.0f} | "
              f"{pct(xs, 95):.0f} | {max(xs):.0f} |")
    print("\n| what hangs | sink | p50 ms from the stamp | p95 ms | p50 delay vs healthy ms | "
          "p50 delay vs healthy, from the ring ms |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for mode, hung in (("webhook hangs", "webhook"), ("desktop hangs", "desktop")):
        for sink in SINKS:
            if sink == hung:
                continue
            xs = got[mode][sink]
            delay = statistics.median(xs) - statistics.median(healthy[sink])
            own = statistics.median(ring[mode][sink]) - statistics.median(ring["healthy"][sink])
            worst = max(worst, delay)
            print(f"| {mode} | {sink} | {statistics.median(xs):.0f} | {pct(xs, 95):.0f} | "
                  f"{delay:+.0f} | {own:+.0f} |")
    goals = {"desktop": 500, "terminal": 500, "webhook": 1000}
    met = [f"{s} p95 {pct(healthy[s], 95):.0f} <= {g}: "
           f"{'met' if pct(healthy[s], 95) <= g else 'missed'}" for s, g in goals.items()]
    print(f"\n{'; '.join(met)}; worst delay a hanging sink adds to another {worst:+.0f} ms "
          f"(goal <= 50: {'met' if worst <= 50 else 'missed'}); load average "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    raise SystemExit(main())

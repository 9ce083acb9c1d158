#!/usr/bin/env python3
"""The terminal sink with the daemon: from the blocked stamp to the OSC bytes at a real
client's terminal (run by hand; results go to bench/RESULTS.md).

  python bench/bench_notify_terminal.py [--runs 30] [--tmux PATH]

A private tmux server (`-L tma-bench-osc-<pid>`, killed afterwards, `allow-passthrough
on`) with one fake claude pane (a process named `claude`, really `sleep`), a `tmux
attach` on a pseudo-terminal this script owns (the person's terminal emulator: every
byte its master reads is timed as it arrives), and a foreground `tma daemon` with
`[notify.terminal] enabled = true`. Each run moves the pane to working (PostToolUse)
and then to blocked (Claude's PermissionRequest hook, `tma event`, handed to the
daemon), each run asking a different command, and waits for that run's OSC 9 at the
client. Latency = arrival (wall clock, ms) - the pane's @agent_since (the blocked
stamp's instant, written by the same machine's clock); also from the hook's spawn, and
from the daemon's decision to ring (`at` of the `[notify] log` line the same dispatch
writes): the sink's own share.

Goal: p95 <= 0.5 s. tma as installed in this interpreter's environment.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sinkkit import Client, pct  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--runs", "1"]]

CONFIG = """[daemon]
sweep_secs = 1
[hooks]
claude_reply_lane = false
[notify]
desktop = false
message = false
log = "{log}"
quiet_if_active_s = 0  # the bench's attached client counts as the person's input
[notify.terminal]
enabled = true
"""


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--tmux", default=shutil.which("tmux") or "tmux")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-osc-"))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    log = work / "notify.jsonl"
    (work / "config.toml").write_text(CONFIG.format(log=log))
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime),
               TMA_CONFIG=str(work / "config.toml"), TMA_TMUX_BIN=args.tmux,
               TERM="xterm-256color", LANG="C.UTF-8")
    for key in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD",
                "TMA_NOTIFY_FROM_EVENT", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(key, None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep") or "/bin/sleep")
    tma = str(Path(sys.executable).parent / "tma")
    name = f"tma-bench-osc-{os.getpid()}"

    def tmux(*a: str) -> str:
        return subprocess.run([args.tmux, "-u", "-L", name, "-f", "/dev/null", *a], env=env,
                              check=True, capture_output=True, text=True).stdout

    version = subprocess.run([args.tmux, "-V"], capture_output=True, text=True).stdout.strip()
    daemon = client = None
    try:
        tmux("new-session", "-d", "-s", "b", "-x", "120", "-y", "40", f"exec {fake} 100000")
        tmux("set-option", "-g", "allow-passthrough", "on")
        pane = tmux("display-message", "-p", "-t", "b", "#{pane_id}").strip()
        client = Client([args.tmux, "-u", "-L", name, "attach", "-t", "b"], env)
        daemon = subprocess.Popen([tma, "--socket-name", name, "daemon"], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)

        def event(kind: str, payload: str) -> None:
            subprocess.run([tma, "--socket-name", name, "event", "--agent", "claude",
                            "--kind", kind, "--pane", pane], input=payload.encode(),
                           env=env, check=True, capture_output=True)

        def state() -> str:
            return tmux("show-options", "-p", "-qv", "-t", pane, "@agent_state").strip()

        def wait_state(want: str) -> None:
            deadline = time.monotonic() + 10
            while state() != want:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the pane never became {want}")
                time.sleep(0.02)

        time.sleep(1.0)  # the daemon's first read; the client's first frame
        from_stamp, from_spawn, from_fire = [], [], []
        for run in range(args.runs):
            event("PostToolUse", '{"session_id":"bench","tool_name":"Bash"}')
            wait_state("working")
            time.sleep(0.3)  # let the daemon's read see the working run end the episode
            cmd = f"make run-{run}"
            marker = f"\x1b]9;claude blocked: Bash: {cmd}\x07".encode()
            client.expect(marker)
            spawned = time.time()
            event("PermissionRequest", '{"session_id":"bench","tool_name":"Bash",'
                  f'"tool_use_id":"t-{run}","tool_input":{{"command":"{cmd}"}}}}')
            at = client.arrived(marker, 10)
            since = int(tmux("show-options", "-p", "-qv", "-t", pane, "@agent_since").strip())
            from_stamp.append(at * 1000 - since)
            from_spawn.append((at - spawned) * 1000)
            fired = json.loads(log.read_text().splitlines()[-1])
            assert fired["summary"] == f"Bash: {cmd}", fired
            from_fire.append(at * 1000 - fired["at"])
        print(f"## Terminal sink (OSC 9 through passthrough), {version}, {args.runs} runs\n")
        print("| measure | p50 ms | p95 ms | max ms |")
        print("|---|---|---|---|")
        for label, xs in (("blocked stamp (@agent_since) -> OSC 9 at the client", from_stamp),
                          ("hook spawned -> OSC 9 at the client", from_spawn),
                          ("the daemon fires (the log line's `at`) -> OSC 9 at the client",
                           from_fire)):
            print(f"| {label} | {statistics.median(xs):.0f} | {pct(xs, 95):.0f} | "
                  f"{max(xs):.0f} |")
        load = os.getloadavg()[0]
        ok = pct(from_stamp, 95) <= 500
        print(f"\nload average {load:.1f}; goal p95 <= 500 ms: {'met' if ok else 'missed'}")
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        if client is not None:
            client.close()
        subprocess.run([args.tmux, "-L", name, "kill-server"], capture_output=True, env=env)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

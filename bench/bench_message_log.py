#!/usr/bin/env python3
"""What fills tmux's message log (`show-messages`) while tma runs (run by hand; results
go to bench/RESULTS.md).

  python bench/bench_message_log.py [--secs 60] [--panes 3] [--status-every 5]

Every tmux release logs each command it runs once its config is loaded (cmd-queue.c
`cmdq_fire_command` -> `cmdq_add_message`, whoever sent it: a command-line client, a
control client, a hook or a binding), up to `message-limit` (1000) entries. This counts
the entries after a run of a private server (`-L tma-bench-msg-<pid>`, killed
afterwards) with N fake claude panes (a process named `claude`, really `sleep`), a
foreground `tma daemon`, and `tma status` every few seconds (a status line's
`#(tma status)`), and groups them by command name.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_daemon_event import sandbox, status, tmux  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--secs", "1", "--panes", "1", "--status-every", "0.5"],
         ["--secs", "1", "--panes", "1", "--status-every", "0", "--status-line"]]


def messages(name: str, env: dict) -> list[str]:
    """`show-messages` wants a client: run it from a short-lived control client."""
    out = subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", "-C", "attach", "-t",
                          "b"], input="show-messages\n", capture_output=True, text=True,
                         env=env, timeout=10).stdout
    blocks: list[list[str]] = []
    inside = False
    for ln in out.splitlines():
        if ln.startswith("%begin"):
            inside = True
            blocks.append([])
        elif ln.startswith(("%end", "%error")):
            inside = False
        elif inside:
            blocks[-1].append(ln)
    return blocks[-1] if blocks else []  # the first block is attach's own


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=60)
    ap.add_argument("--panes", type=int, default=3)
    ap.add_argument("--status-every", type=float, default=5,
                    help="seconds between `tma status` runs; 0: none (the daemon alone)")
    ap.add_argument("--status-line", action="store_true",
                    help="status-right reads the daemon's segment (init's daemon form)")
    args = ap.parse_args()
    work, env, fake, _tma = sandbox("tma-bench-msg-")
    name = f"tma-bench-msg-{os.getpid()}"
    tma = [sys.executable, "-m", "tma", "--socket-name", name]
    daemon = None
    try:
        tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
             f"exec {fake} 100000", env=env)
        for _ in range(args.panes - 1):
            tmux(name, "new-window", "-d", "-t", "b:", f"exec {fake} 100000", env=env)
        tmux(name, "set-option", "-g", "message-limit", "100000", env=env)
        if args.status_line:
            from tma.install import tmux_status

            tmux(name, "set-option", "-g", "status-right",
                 tmux_status.daemon_status_right(" ".join(tma)), env=env)
        base = len(messages(name, env))
        daemon = subprocess.Popen([*tma, "daemon"], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while status(name, env) is None:
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        start = len(messages(name, env))
        end = time.monotonic() + args.secs
        runs = 0
        while time.monotonic() < end:
            if args.status_every:
                subprocess.run([*tma, "status"], env=env, capture_output=True, check=True)
                runs += 1
            time.sleep(min(args.status_every or 1, max(0.0, end - time.monotonic())))
        lines = messages(name, env)
        # newest first (3.3a) or oldest first: the run's entries are the `len - start`
        # at the newest end, which is where this show-messages' own attach sits
        newest_first = "show-messages" in lines[0] or "attach-session" in lines[0]
        count = len(lines) - start
        new = lines[:count] if newest_first else lines[len(lines) - count:]
        kinds = collections.Counter()
        for ln in new:
            _, _, rest = ln.partition("command: ")
            kinds[rest.split(" ")[0] if rest else ln.split(": ")[0][-30:]] += 1
        per_min = len(new) * 60 / args.secs
        print(f"{'status-right reads the segment; ' if args.status_line else ''}"
              f"{args.panes} panes, {args.secs:g}s, tma status x{runs}: {len(new)} entries "
              f"({per_min:.0f}/min; {base} before the daemon, {start - base} at its start); "
              f"1000 (message-limit) in {1000 / per_min if per_min else 0:.1f} min")
        for kind, n in kinds.most_common():
            print(f"  {n:6d}  {kind}")
        if os.environ.get("TMA_BENCH_DUMP"):
            print("\n".join(new))
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        subprocess.run(["tmux", "-L", name, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

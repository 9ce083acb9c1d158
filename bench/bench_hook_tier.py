#!/usr/bin/env python3
"""Benchmark the hook tier (run by hand; results go to bench/RESULTS.md).

  python bench/bench_hook_tier.py [--runs 40]

1. whole-process `tma event` (a PostToolUse that really stamps: each run moves
   @agent_stamped_at, checked) against a bare `python -c pass` of the same interpreter,
   both timed the same way (spawn to exit), warm caches;
2. PermissionRequest-to-stamp: from spawning Claude's PermissionRequest hook to
   @agent_state reading blocked on the server (the hook then holds for a verdict).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--runs", "1"]]


def tmux(name, *args, env=None):
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def timed(argv, env, stdin=b"", runs=40):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, input=stdin, env=env, capture_output=True, check=False)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def p90(xs: list[float]) -> float:
    """The 90th percentile; a single run (a smoke run) is its own."""
    return statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(__file__).resolve().parents[1] / "src" / "tma")], check=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-hook-"))
    name = f"tma-bench-hook-{os.getpid()}"
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"))
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep"))
    tma = str(Path(sys.executable).parent / "tma")
    try:
        tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30", f"exec {fake} 100000",
             env=env)
        pane = tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}", env=env).strip()
        ev = [tma, "--socket-name", name, "event", "--agent", "claude", "--kind", "PostToolUse",
              "--pane", pane]
        payload = b'{"session_id":"bench","tool_name":"Bash","tool_use_id":"toolu_1"}'
        subprocess.run(ev, input=payload, env=env, check=True)  # warm the caches
        before = tmux(name, "show-options", "-p", "-qv", "-t", pane, "@agent_stamped_at",
                      env=env).strip()
        bare = timed([sys.executable, "-c", "pass"], env, runs=args.runs)
        event = timed(ev, env, payload, runs=args.runs)
        bare2 = timed([sys.executable, "-c", "pass"], env, runs=args.runs)
        after = tmux(name, "show-options", "-p", "-qv", "-t", pane, "@agent_stamped_at",
                     env=env).strip()
        assert after != before, "the timed runs did not stamp"
        state = tmux(name, "show-options", "-p", "-qv", "-t", pane, "@agent_state", env=env)
        assert state.strip() == "working", state
        b = statistics.median(bare + bare2)
        e = statistics.median(event)
        # PermissionRequest -> stamp visible on the server
        lat = []
        pr = [tma, "--socket-name", name, "event", "--agent", "claude", "--kind",
              "PermissionRequest", "--pane", pane]
        for i in range(max(10, args.runs // 4)):
            subprocess.run(ev, input=payload, env=env, check=True)  # back to working
            t0 = time.perf_counter()
            proc = subprocess.Popen(pr, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env)
            proc.stdin.write(b'{"session_id":"bench","tool_name":"Bash","tool_input":'
                             b'{"command":"echo hi"},"prompt_id":"p%d"}' % i)
            proc.stdin.close()
            while tmux(name, "show-options", "-p", "-qv", "-t", pane, "@agent_state",
                       env=env).strip() != "blocked":
                pass
            lat.append((time.perf_counter() - t0) * 1000)
            proc.kill()
            proc.wait()
        print(f"## Hook tier, median of {args.runs} runs (warm caches)\n")
        print("| measure | median | p90 |")
        print("|---|---|---|")
        print(f"| bare `python -c pass` | {b:.1f} ms | "
              f"{p90(bare + bare2):.1f} ms |")
        print(f"| `tma event` PostToolUse (stamps) | {e:.1f} ms | "
              f"{p90(event):.1f} ms |")
        print(f"| ratio | {e / b:.2f}× | |")
        print(f"| PermissionRequest spawn → blocked on the server | {statistics.median(lat):.1f} ms"
              f" | {p90(lat):.1f} ms |")
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

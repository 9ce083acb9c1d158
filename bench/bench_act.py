#!/usr/bin/env python3
"""Benchmark `tma act approve` (run by hand; results go to bench/RESULTS.md).

  python bench/bench_act.py [--runs 15]

A fake codex (a real process named `codex`, raw mode) draws Codex's captured permission
prompt; the byte it receives is timestamped, and it then draws Codex's idle screen. Per
run, on a fresh pane:

1. whole-process `tma act approve --pane P` (spawn to exit);
2. spawn to the key arriving at the agent's tty;
3. spawn to the pane leaving `blocked` as tma reads it (`tma ls --json` polled right
   after `act` returns; includes that read).
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

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--runs", "1"]]

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"

AGENT = r'''
import os, sys, termios, time, tty
from pathlib import Path
record, blocked, idle = sys.argv[1:4]
tty.setraw(0, termios.TCSANOW)
def draw(path):
    text = Path(path).read_text(encoding="utf-8")
    os.write(1, ("\x1b[2J\x1b[H" + text.replace("\n", "\r\n")).encode())
draw(blocked)
Path(record + ".ready").touch()
data = os.read(0, 64)
Path(record).write_text(f"{time.time_ns()} {data!r}")
draw(idle)
time.sleep(3600)
'''


def screen(path: Path, out: Path) -> Path:
    sys.path.insert(0, str(ROOT / "src"))
    from tma.core import fixture

    cap = fixture.parse(path.read_text(encoding="utf-8"))
    out.write_text("\n".join(cap.body.rstrip("\n").split("\n")[-(cap.height or 30):]),
                   encoding="utf-8")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "tma")],
                   check=True)
    work = Path(tempfile.mkdtemp(prefix="tma-bench-act-"))
    name = f"tma-bench-act-{os.getpid()}"
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"))
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    codex = work / "codex"
    codex.symlink_to(os.path.realpath(sys.executable))
    (work / "agent.py").write_text(AGENT)
    blocked = screen(CAPTURES / "codex-0.171.0_blocked.txt", work / "blocked.txt")
    idle = screen(CAPTURES / "codex-0.171.0_idle.txt", work / "idle.txt")
    tma = [sys.executable, "-m", "tma", "--socket-name", name]

    def tmux(*a):
        return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *a], env=env,
                              check=True, capture_output=True, text=True).stdout.strip()

    proc_ms, keys_ms, left_ms = [], [], []
    try:
        tmux("new-session", "-d", "-s", "b", "-x", "100", "-y", "30", "sleep 100000")
        for i in range(args.runs):
            record = work / f"rec-{i}"
            pane = tmux("new-window", "-d", "-P", "-F", "#{pane_id}",
                        f"exec {codex} {work / 'agent.py'} {record} {blocked} {idle}")
            while not Path(f"{record}.ready").exists():
                time.sleep(0.01)
            for _ in range(50):  # until tma reads the prompt
                ls = subprocess.run(tma + ["ls", "--json"], env=env, capture_output=True,
                                    text=True)
                rows = {r["pane"]: r for r in json.loads(ls.stdout)["agents"]}
                if rows.get(pane, {}).get("state") == "blocked":
                    break
                time.sleep(0.1)
            else:
                raise AssertionError(f"tma never read {pane} as blocked")
            time.sleep(1.1)  # past the stampede guard's second
            t0 = time.time_ns()
            res = subprocess.run(tma + ["act", "approve", "--pane", pane], env=env,
                                 capture_output=True, text=True)
            t1 = time.time_ns()
            assert res.returncode == 0, res.stderr
            while not record.exists() or not record.read_text():
                time.sleep(0.002)
            got = int(record.read_text().split()[0])
            while True:
                ls = subprocess.run(tma + ["ls", "--json"], env=env, capture_output=True,
                                    text=True)
                row = {r["pane"]: r for r in json.loads(ls.stdout)["agents"]}.get(pane)
                if row is not None and row["state"] != "blocked":
                    break
            t2 = time.time_ns()
            proc_ms.append((t1 - t0) / 1e6)
            keys_ms.append((got - t0) / 1e6)
            left_ms.append((t2 - t0) / 1e6)
            tmux("kill-pane", "-t", pane)
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    def row(label, xs):
        return (f"| {label} | {statistics.median(xs):.1f} | {min(xs):.1f} | {max(xs):.1f} |")

    print(f"## `tma act approve` on a Codex permission prompt, {args.runs} runs\n")
    print("| measure | median ms | min | max |\n|---|---|---|---|")
    print(row("whole process (spawn to exit)", proc_ms))
    print(row("spawn to the key at the agent's tty", keys_ms))
    print(row("spawn to the pane read as not blocked", left_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())

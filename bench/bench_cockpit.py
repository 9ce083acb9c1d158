#!/usr/bin/env python3
"""Benchmark the picker and watch (run by hand; results go to bench/RESULTS.md).

  python bench/bench_cockpit.py [--sizes 10,50] [--runs 21] [--secs 10]

On a private tmux server of fake agent panes (killed afterwards), with stamps made fresh
by one `tma ls` first:
  1. the picker's first frame: whole process, from just before the fork of `tma` on a
     pseudo-terminal (80x24) to the moment the frame's footer arrives on the terminal
     (goal: median <= 150 ms); Esc then closes it;
  2. the picker's and watch's CPU per refresh (they refresh once a second): CPU time of
     the process and the tmux children it reaped, and of the tmux server, over --secs
     seconds of running, divided by the refreshes in that time.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from bench_tmux_tier import MANIFEST, precompile, setup, tmux

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--sizes", "2", "--runs", "1", "--secs", "1"]]

FOOTERS = {"picker": b"esc quit", "watch": b"q quit"}


def spawn(argv: list[str], env: dict, cols: int = 80, rows: int = 24) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # the child
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid, fd


def read_until(fd: int, marker: bytes, timeout: float = 10.0) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while marker not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"no {marker!r} within {timeout}s: {buf[-400:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                raise RuntimeError(f"exited before {marker!r}: {buf[-400:]!r}") from None
            buf += chunk
    return buf


def drain(fd: int, secs: float) -> None:
    end = time.monotonic() + secs
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def close(pid: int, fd: int) -> None:
    try:
        os.write(fd, b"\x1b")
        drain(fd, 0.3)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)


def cpu_ms(pid: int, children: bool) -> float:
    """utime + stime (+ reaped children's) of a process, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def first_frames(base: list[str], env: dict, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid, fd = spawn(base, env)
        read_until(fd, FOOTERS["picker"])
        times.append((time.perf_counter() - t0) * 1000)
        close(pid, fd)
    return times


def cpu_per_refresh(argv: list[str], env: dict, server_pid: int, secs: float,
                    surface: str) -> tuple[float, float]:
    pid, fd = spawn(argv, env, cols=120, rows=40)
    try:
        read_until(fd, FOOTERS[surface])
        drain(fd, 2.0)  # past the first frame and the first full refresh
        own0, srv0, t0 = cpu_ms(pid, True), cpu_ms(server_pid, False), time.monotonic()
        drain(fd, secs)
        own1, srv1, t1 = cpu_ms(pid, True), cpu_ms(server_pid, False), time.monotonic()
    finally:
        close(pid, fd)
    refreshes = t1 - t0  # one refresh a second
    return (own1 - own0) / refreshes, (srv1 - srv0) / refreshes


def main() -> int:
    precompile()
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,50")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--secs", type=float, default=10.0)
    args = ap.parse_args()
    tma = str(Path(sys.executable).parent / "tma")
    if not os.path.exists(tma):
        raise SystemExit(f"no tma console script beside {sys.executable}")
    results = []
    with tempfile.TemporaryDirectory(prefix="tma-bench-cockpit-") as tmp:
        work = Path(tmp)
        (work / "agents").mkdir()
        (work / "agents" / "bench.toml").write_text(MANIFEST)
        (work / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE",
                                                                "NO_COLOR")}
        env.update(HOME=str(work / "home"), XDG_CACHE_HOME=str(work / "cache"),
                   XDG_CONFIG_HOME=str(work / "cfg"), TERM="xterm-256color")
        for n in (int(s) for s in args.sizes.split(",")):
            name = f"tma-bench-cockpit-{os.getpid()}-{n}"
            try:
                setup(name, n, work, env)
                base = [tma, "--socket-name", name, "--manifest-dir", str(work / "agents")]
                subprocess.run(base + ["ls"], env=env, check=True, capture_output=True)
                server_pid = int(tmux(name, "display-message", "-p", "#{pid}", env=env))
                frames = first_frames(base, env, args.runs)
                picker = cpu_per_refresh(base, env, server_pid, args.secs, "picker")
                watch = cpu_per_refresh(base + ["watch"], env, server_pid, args.secs, "watch")
                results.append((n, frames, picker, watch))
            finally:
                subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
    print(f"## Picker first frame (whole process on an 80x24 PTY), {args.runs} runs\n")
    print("| agent panes | median ms | min ms | max ms |")
    print("|---|---|---|---|")
    for n, frames, _p, _w in results:
        print(f"| {n} | {statistics.median(frames):.1f} | {min(frames):.1f} | "
              f"{max(frames):.1f} |")
    print(f"\n## CPU per refresh (one a second, {args.secs:g} s of running, 120x40)\n")
    print("| agent panes | picker: tma ms | picker: tmux server ms | watch: tma ms | "
          "watch: tmux server ms |")
    print("|---|---|---|---|---|")
    for n, _f, (p_own, p_srv), (w_own, w_srv) in results:
        print(f"| {n} | {p_own:.1f} | {p_srv:.1f} | {w_own:.1f} | {w_srv:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

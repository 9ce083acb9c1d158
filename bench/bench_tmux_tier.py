#!/usr/bin/env python3
"""Benchmark the tmux tier (run by hand; results go to bench/RESULTS.md).

  python bench/bench_tmux_tier.py [--sizes 10,50,100,200] [--runs 15]

Measures, on a private tmux server (killed afterwards):
  1. tmux spawns per cold cycle at each size (goal: the same number at every size);
  2. in-process cold cycle time at each size (goal: 100 agents <= 2x 10 agents);
  3. whole-process `tma status` over fresh stamps against a bare `python -c pass` in the
     same interpreter, with tma's cache warm and cold (goal <= 1.5x, must be <= 2x).
A cold cycle is one where every pane needs a capture (stamps removed beforehand).
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
SMOKE = [["--sizes", "2", "--runs", "1", "--status-runs", "2"]]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

MANIFEST = """
min_engine_version = "0.1"
[identity]
process_names = ["benchagent"]
[capture]
visible = ["working", "blocked"]
[[rules]]
state = "blocked"
detail = "permission"
priority = 100
region = "tail_lines(10)"
match = { all = [ { contains = "Do you want to proceed?" }, { line_regex = "^\\\\s*❯ 1\\\\. Yes" } ] }
[[rules]]
state = "working"
priority = 50
region = "tail_lines(10)"
match = { regex = "esc to interrupt" }
[[rules]]
state = "idle"
priority = 10
region = "tail_lines(6)"
match = { line_regex = "^❯ " }
"""

SCREEN = ("\x1b[1m● Working on it\x1b[0m\r\n" + "".join(f"line {i} of output\r\n" for i in range(20))
          + "\x1b[2m✻ Thinking… (3s · esc to interrupt)\x1b[0m\r\n❯ \r\n")


def tmux(name: str, *args: str, env=None) -> str:
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def setup(name: str, n: int, work: Path, env, agent: str = "benchagent") -> list[str]:
    fake = work / "bin" / agent
    fake.parent.mkdir(parents=True, exist_ok=True)
    if not fake.exists():
        fake.symlink_to(shutil.which("sleep"))
    panes = []
    tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30", f"exec {fake} 100000",
         env=env)
    panes.append(tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}", env=env).strip())
    for _ in range(n - 1):
        panes.append(tmux(name, "new-window", "-d", "-t", "b:", "-P", "-F", "#{pane_id}",
                          f"exec {fake} 100000", env=env).strip())
    for p in panes:
        tty = tmux(name, "display-message", "-p", "-t", p, "#{pane_tty}", env=env).strip()
        with open(tty, "w") as fh:
            fh.write("\x1b[2J\x1b[H" + SCREEN)
    time.sleep(0.5)
    return panes


def clear_stamps(server, panes) -> None:
    from tma.tmux import write

    server.source([write.remove(p) for p in panes])


def bench_cycles(sizes, runs, work: Path, env) -> list[tuple]:
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import Server

    rows = []
    mdir = work / "agents"
    mdir.mkdir(exist_ok=True)
    (mdir / "bench.toml").write_text(MANIFEST)
    for n in sizes:
        name = f"tma-bench-{os.getpid()}-{n}"
        try:
            panes = setup(name, n, work, env)
            server = Server(socket_name=name)
            times, spawns, captures = [], [], []
            clock = [int(time.time() * 1000)]
            for _ in range(runs):
                clear_stamps(server, panes)
                clock[0] += 5000  # past the stampede second
                cyc = Cycle(server, Config(), str(mdir), clock=lambda c=clock: c[0])
                t0 = time.perf_counter()
                res = cyc.run()
                times.append((time.perf_counter() - t0) * 1000)
                spawns.append(res.stats.spawns)
                captures.append(res.stats.captures)
                assert len(res.rows) == n, (len(res.rows), n)
            rows.append((n, statistics.median(spawns), min(spawns), max(spawns),
                         statistics.median(captures), statistics.median(times), min(times)))
        finally:
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
    return rows


def hyperfine(cmds: list[str], runs: int, prepare: str | None = None) -> list[float]:
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    argv = ["hyperfine", "-N", "-w", "5", "-r", str(runs), "--export-json", str(out)]
    if prepare:
        argv += ["--prepare", prepare]
    subprocess.run(argv + cmds, check=True, capture_output=True)
    import json

    data = json.loads(out.read_text())["results"]
    return [r["median"] * 1000 for r in data]


def bench_status(work: Path, runs: int) -> dict:
    """tma status over fresh stamps vs a bare interpreter start, same interpreter."""
    name = f"tma-bench-{os.getpid()}-status"
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"), XDG_CONFIG_HOME=str(work / "cfg"),
               HOME=str(work / "home"))
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    (work / "home").mkdir(exist_ok=True)
    try:
        # the bundled manifests, as a user runs it: six `claude` panes and a shell
        panes = setup(name, 6, work, env, agent="claude")
        tmux(name, "new-window", "-d", "-t", "b:", "exec sh", env=env)  # a plain shell pane
        tma = str(Path(sys.executable).parent / "tma")
        if not os.path.exists(tma):
            raise SystemExit(f"no tma console script beside {sys.executable}")
        base = f"{tma} --socket-name {name}"
        # Default config (no file). Every timed run reads stamps made fresh just before
        # it by an untimed `tma ls` (hyperfine --prepare); "cold" also empties tma's cache.
        os.environ.update({k: env[k] for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME")})
        subprocess.run(f"{base} ls".split(), env=env, check=True, capture_output=True)
        assert subprocess.run(f"{base} status --format plain".split(), env=env,
                              capture_output=True, text=True).stdout.strip()
        bare = f"{sys.executable} -c pass"
        refresh = f"{base} ls"
        warm = hyperfine([bare, f"{base} status"], runs, prepare=refresh)
        cold = hyperfine([bare, f"{base} status"], runs,
                         prepare=f"sh -c '{refresh} >/dev/null; rm -rf {work / 'cache'}'")
        return {"bare_warm": warm[0], "status_warm": warm[1], "bare_cold": cold[0],
                "status_cold": cold[1], "panes": len(panes)}
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


def precompile() -> None:
    """Measure an installed tma as users run it: with bytecode written (a session that
    sets PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "tma")],
                   check=True)


def main() -> int:
    precompile()
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,50,100,200")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--status-runs", type=int, default=60)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="tma-bench-") as tmp:
        work = Path(tmp)
        env = dict(os.environ)
        env.pop("TMUX", None)
        rows = bench_cycles(sizes, args.runs, work, env)
        st = None
        if shutil.which("hyperfine"):
            st = bench_status(work, args.status_runs)
        else:
            print("hyperfine is not installed: skipping the `tma status` measure "
                  "(bench/bench_peer.py times it without hyperfine)", file=sys.stderr)
    print(f"## Poll cycle (cold: every pane captured), median of {args.runs} runs\n")
    print("| agent panes | tmux spawns (median, min–max) | captures | cycle ms (median) | "
          "cycle ms (min) | vs 10 panes |")
    print("|---|---|---|---|---|---|")
    base = rows[0][5]
    for n, sp, spmin, spmax, cap, med, mn in rows:
        print(f"| {n} | {sp:g} ({spmin}–{spmax}) | {cap:g} | {med:.1f} | {mn:.1f} | "
              f"{med / base:.2f}× |")
    if st is None:
        return 0
    print(f"\n## `tma status` over fresh stamps ({st['panes']} agent panes + 1 shell pane), "
          f"hyperfine medians of {args.status_runs} runs\n")
    print("| cache | bare `python -c pass` | `tma status` | ratio |")
    print("|---|---|---|---|")
    for k in ("warm", "cold"):
        b, s = st[f"bare_{k}"], st[f"status_{k}"]
        print(f"| {k} | {b:.1f} ms | {s:.1f} ms | {s / b:.2f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

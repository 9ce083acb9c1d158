#!/usr/bin/env python3
"""What `tma daemon` costs (run by hand; the results go to bench/RESULTS.md "Daemon tier").

  python bench/bench_daemon.py cpu [--panes 20] [--secs 60] [--runs 3] [--rate 20]
  python bench/bench_daemon.py rss [--panes 20] [--minutes 10] [--every 30]

Each invocation starts ONE private tmux server (`-L tma-bench-daemon-<pid> -f /dev/null`,
killed and its socket removed afterwards) and fills it with fake agents from
bench_peer.py: real processes named like the agent (symlinks to `sleep`; codex is `node`
running `codex`, gemini is `node`), each pane drawn with a real captured screen of its
agent from tests/fixtures/captures (claude 2.1.332, codex 0.171.0, gemini 0.61.0,
opencode 1.18.33, pi 0.73.1), the panes going round the five agents. Then
`tma daemon --ensure` is started for that server (with a runtime dir of its own, the
default config), and nothing else runs tma: every stamp is the daemon's.

cpu  The daemon's CPU in three phases, --runs windows of --secs seconds each:
     quiet      every pane shows its agent's idle screen and prints nothing;
     streaming  every pane shows its agent's working screen and --rate times a second
                rewrites one line of it (a reply streaming in): the stamps say working,
                so the daemon only drains output until the quiet edge;
     moving     the same stream under the idle screens: the stamps say idle, so each
                burst is re-read (0.5 s, then backing off): the worst case of output
                that never reads as working.
     What is counted: utime + stime from /proc of the daemon process, of every live
     descendant (its `tmux -C` control clients, one per session) and of its reaped
     children (cutime + cstime: the `tmux` spawns of its reads). The tmux server's own
     CPU over the same window is given beside it, not in the figure (it runs for any
     client, and without the daemon too).
rss  20 panes each changing state every 2-5 s (idle -> working, streaming -> blocked
     -> idle after a tool -> ...) for --minutes; the daemon's VmRSS sampled every
     --every seconds. At the end, after the panes settle, every pane's stamp must be
     its screen's expected state (the daemon kept up the whole time).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cockpit import cpu_ms  # noqa: E402
from bench_peer import AGENTS, Tmux, load_screens  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["cpu", "--panes", "2", "--secs", "1", "--runs", "1"],
         ["rss", "--panes", "2", "--minutes", "0.05", "--every", "1"]]

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"quiet": 1.0, "streaming": 5.0}  # % of one core
RSS_GOAL_KB = 5 * 1024


def tma_argv() -> list[str]:
    script = Path(sys.executable).with_name("tma")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tma"]


# ------------------------------------------------------------------ /proc


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                kids.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_cpu_ms(pid: int) -> tuple[float, int]:
    """CPU ms of a process, its reaped children and its live descendants; and how many
    live descendants there were."""
    total = cpu_ms(pid, True)
    live = descendants(pid)
    for child in live:
        try:
            total += cpu_ms(child, True)
        except (OSError, IndexError):
            pass  # exited between the listing and the read: its time is in cutime now
    return total, len(live)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


# ------------------------------------------------------------------ the bench server


class Bench:
    def __init__(self, panes: int) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="tma-bench-daemon-"))
        runtime = self.work / "runtime"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items()
               if k not in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH")}
        env.update(HOME=str(self.work), XDG_CONFIG_HOME=str(self.work / "config"),
                   XDG_CACHE_HOME=str(self.work / "cache"), XDG_RUNTIME_DIR=str(runtime),
                   LANG="C.UTF-8")
        self.env = env
        self.tmux = Tmux(self.work, env)
        self.tmux.name = f"tma-bench-daemon-{os.getpid()}"
        by_agent: dict[str, dict[str, dict]] = {}
        for screen in load_screens():
            kind = screen["file"].split("_", 1)[1].removesuffix(".txt")
            by_agent.setdefault(screen["agent"], {})[kind] = screen
        self.screens = by_agent
        self.agents = [AGENTS[i % len(AGENTS)][0] for i in range(panes)]
        self.pid = 0
        self.server_pid = 0
        self.ttys: dict[str, str] = {}
        self.shown: dict[str, dict] = {}
        self.lock = threading.Lock()  # one writer on a tty at a time

    # -- panes
    def start(self, per_session: int = 5) -> None:
        """The panes in sessions of `per_session` windows (the daemon holds one control
        client per session)."""
        for i, agent in enumerate(self.agents):
            screen = self.screens[agent]["idle"]
            cmd = self.tmux.command_for(agent)
            session = f"b{i // per_session}"
            if i % per_session == 0:
                pane = self.tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                                 "-P", "-F", "#{pane_id}", cmd).strip()
            else:
                pane = self.tmux("new-window", "-d", "-t", f"{session}:", "-P", "-F",
                                 "#{pane_id}", cmd).strip()
            self.tmux.panes.append((pane, screen))
        self.tmux.draw_all()
        self.ttys = dict(line.split(" ", 1) for line in self.tmux(
            "list-panes", "-a", "-F", "#{pane_id} #{pane_tty}").splitlines())
        self.shown = {pane: screen for pane, screen in self.tmux.panes}
        self.server_pid = int(self.tmux("display-message", "-p", "#{pid}").strip())

    def draw(self, pane: str, screen: dict) -> None:
        title = screen["title"].replace("\x1b", "").replace("\x07", "")
        data = f"\x1b]2;{title}\x07\x1b[2J\x1b[H" + "\r\n".join(screen["lines"])
        with self.lock, open(self.ttys[pane], "w", encoding="utf-8") as fh:
            fh.write(data)
            self.shown[pane] = screen

    def draw_kind(self, kind: str) -> None:
        for pane, _s in self.tmux.panes:
            agent = self.agent_of(pane)
            self.draw(pane, self.screens[agent][kind])

    def agent_of(self, pane: str) -> str:
        return next(s["agent"] for p, s in self.tmux.panes if p == pane)

    def states(self) -> dict[str, str]:
        return dict(line.split(" ", 1) if " " in line else (line, "") for line in self.tmux(
            "list-panes", "-a", "-F", "#{pane_id} #{@agent_state}").splitlines())

    def settle(self, timeout: float = 20.0) -> dict[str, tuple[str, str]]:
        """Wait until every pane's stamp is its screen's expected state; the misses."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.states()
            bad = {p: (s["state"], got.get(p, "")) for p, s in self.shown.items()
                   if got.get(p, "") != s["state"]}
            if not bad or time.monotonic() > deadline:
                return bad
            time.sleep(0.2)

    # -- the daemon
    def start_daemon(self) -> None:
        from subprocess import run

        from tma.runtime import daemon_files

        res = run(tma_argv() + ["--socket-name", self.tmux.name, "daemon", "--ensure"],
                  env=self.env, capture_output=True, text=True, timeout=30)
        if res.returncode != 0:
            raise SystemExit(f"tma daemon --ensure: {res.stderr}")
        sock = self.tmux("display-message", "-p", "#{socket_path}").strip()
        files = daemon_files.Files(sock, self.env["XDG_RUNTIME_DIR"] + "/tma")
        deadline = time.monotonic() + 10
        status = None
        while status is None and time.monotonic() < deadline:
            status = daemon_files.read_status(files.sock)
            time.sleep(0.05)
        if status is None:
            raise SystemExit("the daemon never answered on its socket")
        self.files = files
        self.pid = int(status["pid"])

    def status(self) -> dict:
        from tma.runtime import daemon_files

        return daemon_files.read_status(self.files.sock) or {}

    def close(self) -> None:
        if self.pid:
            try:
                os.kill(self.pid, 15)
            except ProcessLookupError:
                pass
        self.tmux.kill()
        shutil.rmtree(self.work, ignore_errors=True)


class Streamer(threading.Thread):
    """Rewrites one line of every pane `rate` times a second (cursor saved and restored,
    so the rest of the screen stays what it was); with `only`, just the panes whose
    screen is that kind (an agent streams while it works, not at a prompt)."""

    def __init__(self, bench: Bench, rate: float, only: str | None = None) -> None:
        super().__init__(daemon=True)
        self.bench, self.period, self.only = bench, 1.0 / rate, only
        self.halt = threading.Event()
        self.lines = 0

    def run(self) -> None:
        handles = {p: open(self.bench.ttys[p], "w", encoding="utf-8")
                   for p, _s in self.bench.tmux.panes}
        try:
            nxt = time.monotonic()
            while not self.halt.is_set():
                with self.bench.lock:
                    for pane, fh in handles.items():
                        if self.only and not self.bench.shown[pane]["file"].endswith(
                                f"_{self.only}.txt"):
                            continue
                        fh.write(f"\x1b7\x1b[2;1H\x1b[2Kstreamed token line {self.lines} "
                                 f"{'x' * (self.lines % 60)}\x1b8")
                        fh.flush()
                self.lines += 1
                nxt += self.period
                self.halt.wait(max(0.0, nxt - time.monotonic()))
        finally:
            for fh in handles.values():
                fh.close()

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=5)


# ------------------------------------------------------------------ cpu


def window(bench: Bench, secs: float) -> dict:
    c0, n0 = tree_cpu_ms(bench.pid)
    s0, t0, st0 = cpu_ms(bench.server_pid, False), time.monotonic(), bench.status()
    time.sleep(secs)
    c1, n1 = tree_cpu_ms(bench.pid)
    s1, t1, st1 = cpu_ms(bench.server_pid, False), time.monotonic(), bench.status()
    wall = (t1 - t0) * 1000
    return {"daemon_pct": (c1 - c0) / wall * 100, "server_pct": (s1 - s0) / wall * 100,
            "reads": st1.get("reads", 0) - st0.get("reads", 0),
            "captures": st1.get("captures", 0) - st0.get("captures", 0),
            "clients": n1, "secs": round(wall / 1000, 1)}


def phase(bench: Bench, name: str, runs: int, secs: float) -> list[dict]:
    out = []
    for i in range(runs):
        w = window(bench, secs)
        print(f"  {name} {i + 1}/{runs}: daemon {w['daemon_pct']:.2f} % of a core, "
              f"server {w['server_pct']:.2f} %, {w['reads']} reads, "
              f"{w['captures']} captures, {w['clients']} live children", flush=True)
        out.append(w)
    return out


def bench_cpu(args) -> dict:
    bench = Bench(args.panes)
    try:
        bench.start()
        bench.start_daemon()
        bad = bench.settle()
        if bad:
            raise SystemExit(f"the daemon's first stamps are wrong: {bad}")
        time.sleep(3)  # the start-up sweep and every first edge are over
        res: dict = {"panes": args.panes, "secs": args.secs, "rate": args.rate}
        res["quiet"] = phase(bench, "quiet", args.runs, args.secs)

        bench.draw_kind("working")
        bad = bench.settle()
        if bad:
            raise SystemExit(f"working screens were not stamped working: {bad}")
        streamer = Streamer(bench, args.rate)
        streamer.start()
        try:
            time.sleep(2)
            res["streaming"] = phase(bench, "streaming", args.runs, args.secs)
            still = bench.states()
            res["streaming_states"] = sorted(set(still.values()) - {""})
        finally:
            streamer.stop()

        bench.draw_kind("idle")
        bad = bench.settle()
        if bad:
            raise SystemExit(f"idle screens were not stamped idle: {bad}")
        time.sleep(2)
        streamer = Streamer(bench, args.rate)
        streamer.start()
        try:
            time.sleep(2)
            res["moving"] = phase(bench, "moving", args.runs, args.secs)
        finally:
            streamer.stop()
        res["status"] = bench.status()
        return res
    finally:
        bench.close()


# ------------------------------------------------------------------ rss

CYCLE = ("working", "blocked", "idle_after", "working", "idle")


def bench_rss(args) -> dict:
    bench = Bench(args.panes)
    rng = random.Random(7)
    try:
        bench.start()
        bench.start_daemon()
        bad = bench.settle()
        if bad:
            raise SystemExit(f"the daemon's first stamps are wrong: {bad}")
        streamer = Streamer(bench, args.rate, only="working")  # a working pane streams
        step = {p: 0 for p, _s in bench.tmux.panes}
        due = {p: time.monotonic() + rng.uniform(2, 5) for p in step}
        samples = [(0.0, rss_kb(bench.pid))]
        t0 = time.monotonic()
        next_sample = t0 + args.every
        end = t0 + args.minutes * 60
        changes = 0
        streamer.start()
        try:
            while time.monotonic() < end:
                now = time.monotonic()
                for pane in step:
                    if now >= due[pane]:
                        agent = bench.agent_of(pane)
                        kinds = [k for k in CYCLE if k in bench.screens[agent]]
                        step[pane] = (step[pane] + 1) % len(kinds)
                        bench.draw(pane, bench.screens[agent][kinds[step[pane]]])
                        due[pane] = now + rng.uniform(2, 5)
                        changes += 1
                if now >= next_sample:
                    samples.append((round(now - t0, 1), rss_kb(bench.pid)))
                    print(f"  rss at {now - t0:5.0f} s: {samples[-1][1]} kB "
                          f"({changes} changes)", flush=True)
                    next_sample += args.every
                time.sleep(0.05)
        finally:
            streamer.stop()
        samples.append((round(time.monotonic() - t0, 1), rss_kb(bench.pid)))
        bad = bench.settle(timeout=15)
        return {"panes": args.panes, "minutes": args.minutes, "changes": changes,
                "samples": samples, "misses_after_settle": bad, "status": bench.status()}
    finally:
        bench.close()


# ------------------------------------------------------------------ report


def report_cpu(res: dict) -> None:
    print(f"\nCPU, {res['panes']} agent panes, {len(res['quiet'])} windows of {res['secs']} s "
          f"(% of one core: daemon + its tmux children; tmux server beside it)\n")
    print("| phase | daemon median | min | max | goal | met | server median | reads/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("quiet", "streaming", "moving"):
        ws = res[name]
        d = [w["daemon_pct"] for w in ws]
        goal = GOALS.get(name)
        met = "–" if goal is None else ("yes" if statistics.median(d) < goal else "NO")
        reads = statistics.median(w["reads"] / w["secs"] for w in ws)
        print(f"| {name} | {statistics.median(d):.2f} % | {min(d):.2f} % | {max(d):.2f} % | "
              f"{'< ' + str(goal) + ' %' if goal else '–'} | {met} | "
              f"{statistics.median(w['server_pct'] for w in ws):.2f} % | {reads:.2f} |")


def report_rss(res: dict) -> None:
    kb = [s[1] for s in res["samples"]]
    growth = kb[-1] - kb[0]
    print(f"\nRSS over {res['minutes']} min, {res['panes']} panes, {res['changes']} state "
          f"changes; samples (s, kB): {res['samples']}")
    print(f"start {kb[0]} kB, end {kb[-1]} kB, max {max(kb)} kB, growth {growth} kB "
          f"(goal < {RSS_GOAL_KB} kB: {'met' if growth < RSS_GOAL_KB else 'NOT met'}); "
          f"stamps wrong after settling: {res['misses_after_settle'] or 'none'}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("cpu", "rss"))
    ap.add_argument("--panes", type=int, default=20)
    ap.add_argument("--secs", type=float, default=60)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rate", type=float, default=20, help="lines a second per pane")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--every", type=float, default=30)
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    res = bench_cpu(args) if args.what == "cpu" else bench_rss(args)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    (report_cpu if args.what == "cpu" else report_rss)(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())

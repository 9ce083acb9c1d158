#!/usr/bin/env python3
"""The daemon soak (run by hand, not in CI; results go to bench/RESULTS.md).

  python bench/soak_daemon.py [--minutes 60] [--panes 50] [--restarts 5]
                              [--dwell 2:6] [--deadline 1.5]

One private tmux server (`-L tma-soak-<pid> -f /dev/null`, killed afterwards) with
`--panes` fake claude panes (processes named `claude`, really `sleep`), each one window
of 100x30. The soak redraws every pane on its own schedule with the real screens of
claude 2.1.332 (tests/fixtures/captures: idle, working, blocked), through its tty, with
its title, in the cycle idle -> working -> blocked -> working -> idle, each screen held a
random `--dwell` seconds. There are no hooks: only the daemon (`tma daemon --ensure`,
notifications to a JSON-lines log only) reads the screens and stamps.

`--restarts` times, spread through the run, it kills the daemon with SIGKILL 0.2 s after
a pane has drawn a permission prompt and starts a new one at once (`--ensure`).

Reported:
  * every blocked episode: stamped `blocked` within `--deadline` s of its screen (sampled
    every 0.1 s), and rung exactly once (the notification log); missed ones are listed;
  * the other episodes' latency (an idle composer waits out the turn-end dwell);
  * the daemon's RSS (VmRSS every 10 s; growth per daemon instance after a 30 s warm-up),
    its CPU (utime+stime over its life) and the tmux server's, per minute of run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hook_storm import proc_cpu  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--minutes", "0.05", "--panes", "2", "--restarts", "1"]]

CAPTURES = ROOT / "tests" / "fixtures" / "captures"
CYCLE = ("idle", "working", "blocked", "working")
WIDTH, HEIGHT = 100, 30


def screen(kind: str) -> tuple[str, list[str]]:
    text = (CAPTURES / f"claude-2.1.332_{kind}.txt").read_text(encoding="utf-8")
    head, _, body = text.partition("\n---\n")
    headers = dict(line[2:].split(": ", 1) for line in head.splitlines() if ": " in line)
    height = int(headers.get("height", HEIGHT))
    return headers.get("title", ""), body.rstrip("\n").split("\n")[-height:]


class Soak:
    def __init__(self, args, work: Path) -> None:
        self.args = args
        self.work = work
        self.name = f"tma-soak-{os.getpid()}"
        runtime = work / "rt"
        runtime.mkdir(mode=0o700)
        cfg = work / "cfg" / "tma"
        cfg.mkdir(parents=True)
        self.log = work / "notify.jsonl"
        (cfg / "config.toml").write_text(
            f'[notify]\ndesktop = false\nmessage = false\nlog = "{self.log}"\n')
        self.env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
                        XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime))
        for key in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD"):
            self.env.pop(key, None)
        self.tma = str(Path(sys.executable).parent / "tma")
        self.screens = {k: screen(k) for k in ("idle", "working", "blocked")}
        self.lock = threading.Lock()
        # per pane: the episode on screen {state, drawn, seen}
        self.current: dict[str, dict] = {}
        self.episodes: list[dict] = []
        self.rings: list[tuple[float, str]] = []
        self.rss: list[tuple[float, int, int]] = []  # (t, daemon pid, kB)
        self.instances: list[dict] = []
        self.stop = False

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-u", "-L", self.name, "-f", "/dev/null", *args],
                              check=True, capture_output=True, text=True,
                              env=self.env).stdout

    # ------------------------------------------------------------ setup
    def start_server(self) -> None:
        fake = self.work / "claude"
        fake.symlink_to(shutil.which("sleep"))
        self.tmux("new-session", "-d", "-s", "s", "-x", str(WIDTH), "-y", str(HEIGHT),
                  f"exec {fake} 1000000")
        for _ in range(self.args.panes - 1):
            self.tmux("new-window", "-d", "-t", "s:", f"exec {fake} 1000000")
        self.server_pid = int(self.tmux("display-message", "-p", "#{pid}"))
        self.ttys = dict(line.split(" ", 1) for line in self.tmux(
            "list-panes", "-a", "-F", "#{pane_id} #{pane_tty}").splitlines())

    def draw(self, pane: str, kind: str) -> None:
        title, lines = self.screens[kind]
        data = f"\x1b]2;{title}\x07\x1b[2J\x1b[H" + "\r\n".join(lines)
        with open(self.ttys[pane], "w", encoding="utf-8") as fh:
            fh.write(data)
        now = time.monotonic()
        with self.lock:
            ep = {"pane": pane, "state": kind, "drawn": now, "seen": None, "rings": 0,
                  "ended": None}
            old = self.current.get(pane)
            if old is not None:
                old["ended"] = now
            self.current[pane] = ep
            self.episodes.append(ep)

    # ------------------------------------------------------------ the daemon
    def daemon_pid(self) -> int | None:
        path = self.tmux("display-message", "-p", "#{socket_path}").strip()
        sys.path.insert(0, str(ROOT / "src"))
        from tma.runtime import daemon_files

        files = daemon_files.Files(path, os.path.join(self.env["XDG_RUNTIME_DIR"], "tma"))
        doc = daemon_files.read_status(files.sock)
        return doc.get("pid") if doc else None

    def ensure(self) -> int:
        subprocess.run([self.tma, "--socket-name", self.name, "daemon", "--ensure"],
                       env=self.env, check=True, capture_output=True)
        deadline = time.monotonic() + 10
        while True:
            pid = self.daemon_pid()
            if pid:
                self.instances.append({"pid": pid, "started": time.monotonic()})
                return pid
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)

    # ------------------------------------------------------------ threads
    def sampler(self) -> None:
        fmt = "#{pane_id}\t#{@agent_state}"
        seen_log = 0
        while not self.stop:
            now = time.monotonic()
            try:
                out = self.tmux("list-panes", "-a", "-F", fmt)
            except subprocess.CalledProcessError:
                out = ""
            with self.lock:
                for line in out.splitlines():
                    pane, _, state = line.partition("\t")
                    ep = self.current.get(pane)
                    if ep is not None and ep["seen"] is None and state == ep["state"]:
                        ep["seen"] = now
            try:
                with open(self.log, encoding="utf-8") as fh:
                    lines = fh.readlines()
            except FileNotFoundError:
                lines = []
            for raw in lines[seen_log:]:
                try:
                    note = json.loads(raw)
                except ValueError:
                    continue
                if note.get("state") == "blocked":
                    self.rings.append((now, note.get("pane", "")))
            seen_log = len(lines)
            time.sleep(0.1)

    def rss_watch(self) -> None:
        while not self.stop:
            pid = self.instances[-1]["pid"] if self.instances else None
            if pid:
                try:
                    with open(f"/proc/{pid}/status") as fh:
                        for line in fh:
                            if line.startswith("VmRSS:"):
                                self.rss.append((time.monotonic(), pid, int(line.split()[1])))
                except OSError:
                    pass
            for _ in range(100):
                if self.stop:
                    return
                time.sleep(0.1)

    # ------------------------------------------------------------ the run
    def run(self) -> dict:
        args = self.args
        lo, hi = (float(x) for x in args.dwell.split(":"))
        self.start_server()
        panes = list(self.ttys)
        phase = {p: random.randrange(len(CYCLE)) for p in panes}
        due = {p: time.monotonic() for p in panes}
        self.ensure()
        threads = [threading.Thread(target=self.sampler), threading.Thread(target=self.rss_watch)]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        end = t0 + args.minutes * 60
        kills = [t0 + (i + 1) * (end - t0) / (args.restarts + 1) for i in range(args.restarts)]
        cpu0 = proc_cpu(self.server_pid)
        try:
            while time.monotonic() < end:
                now = time.monotonic()
                for p in panes:
                    if due[p] <= now:
                        kind = CYCLE[phase[p] % len(CYCLE)]
                        phase[p] += 1
                        self.draw(p, kind)
                        due[p] = now + random.uniform(lo, hi)
                        if kind == "blocked" and kills and now >= kills[0]:
                            kills.pop(0)
                            threading.Timer(0.2, self.restart).start()
                time.sleep(0.02)
            time.sleep(max(args.deadline, 3.5) + 0.5)  # the last episodes' stamps
        finally:
            self.stop = True
            for t in threads:
                t.join()
        return self.report(t0, cpu0)

    def restart(self) -> None:
        inst = self.instances[-1]
        inst["cpu"] = proc_cpu(inst["pid"])
        inst["ended"] = time.monotonic()
        os.kill(inst["pid"], signal.SIGKILL)
        inst["killed"] = True
        self.ensure()

    def report(self, t0: float, cpu0: float) -> dict:
        args = self.args
        wall = time.monotonic() - t0
        last = self.instances[-1]
        if "cpu" not in last:
            last["cpu"] = proc_cpu(last["pid"])
            last["ended"] = time.monotonic()
        server_cpu = proc_cpu(self.server_pid) - cpu0
        # rings: each to the blocked episode of its pane on screen when it was heard
        by_pane: dict[str, list[dict]] = {}
        for ep in self.episodes:
            by_pane.setdefault(ep["pane"], []).append(ep)
        stray = 0
        for at, pane in self.rings:
            eps = [e for e in by_pane.get(pane, []) if e["state"] == "blocked"
                   and e["drawn"] <= at and (e["ended"] is None or at <= e["ended"] + 1.0)]
            if eps:
                eps[-1]["rings"] += 1
            else:
                stray += 1
        blocked = [e for e in self.episodes if e["state"] == "blocked" and e["ended"]]
        lat = [e["seen"] - e["drawn"] for e in blocked if e["seen"] is not None]
        missed = [e for e in blocked if e["seen"] is None or e["seen"] - e["drawn"] > args.deadline]
        wrong_rings = [e for e in blocked if e["rings"] != 1]
        others = {k: [e["seen"] - e["drawn"] for e in self.episodes
                      if e["state"] == k and e["seen"] is not None and e["ended"]]
                  for k in ("working", "idle")}
        growth = []
        for inst in self.instances:
            xs = [kb for t, pid, kb in self.rss if pid == inst["pid"]
                  and t >= inst["started"] + 30]
            if len(xs) >= 2:
                growth.append({"pid": inst["pid"], "first_kb": xs[0], "last_kb": xs[-1],
                               "growth_kb": xs[-1] - xs[0],
                               "minutes": (inst["ended"] - inst["started"]) / 60})
        daemon_cpu = sum(i.get("cpu", 0.0) for i in self.instances)
        return {
            "minutes": wall / 60, "panes": args.panes, "restarts": len(self.instances) - 1,
            "blocked_episodes": len(blocked), "missed": len(missed),
            "missed_list": [{"pane": e["pane"], "latency": (e["seen"] - e["drawn"])
                             if e["seen"] else None} for e in missed][:20],
            "blocked_p50": statistics.median(lat) if lat else None,
            "blocked_p99": statistics.quantiles(lat, n=100)[98] if len(lat) > 1 else None,
            "blocked_max": max(lat) if lat else None,
            "rung_not_once": len(wrong_rings), "stray_rings": stray,
            "working_p50": statistics.median(others["working"]) if others["working"] else None,
            "idle_p50": statistics.median(others["idle"]) if others["idle"] else None,
            "episodes": len(self.episodes), "rss": growth,
            "daemon_cpu_s": daemon_cpu, "daemon_cpu_pct": 100 * daemon_cpu / wall,
            "server_cpu_pct": 100 * server_cpu / wall,
            "load_avg": os.getloadavg()[0],
        }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--panes", type=int, default=50)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--dwell", default="2:6")
    ap.add_argument("--deadline", type=float, default=1.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    random.seed(args.seed)
    work = Path(tempfile.mkdtemp(prefix="tma-soak-"))
    soak = Soak(args, work)
    try:
        res = soak.run()
    finally:
        pid = soak.instances[-1]["pid"] if soak.instances else None
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        subprocess.run(["tmux", "-L", soak.name, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=1))
    return 0 if res["missed"] == 0 and res["rung_not_once"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

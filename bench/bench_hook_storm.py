#!/usr/bin/env python3
"""A hook storm: many agents' hooks firing at once (run by hand; results go to
bench/RESULTS.md).

  python bench/bench_hook_storm.py [--workers 50] [--panes 10] [--secs 30]
                                   [--mode daemon|direct|both]

Ten busy agents fire dozens of synchronous hooks a second, and every one of them waits
for `tma event` to exit. This starts one private tmux server per mode
(`-L tma-bench-storm-<pid>-<mode> -f /dev/null`, killed afterwards) with `--panes` fake
claude panes (processes named `claude`, really `sleep`), and `--workers` threads that
each run `tma event` processes back to back for `--secs` seconds, on the panes in
turn, cycling through a turn's hook kinds (UserPromptSubmit, PreToolUse, a
permission_prompt Notification, PostToolUse, Stop) with a payload of a few
hundred bytes. Mode `daemon` has a foreground `tma daemon` serving the server; mode
`direct` has none (every hook stamps the pane itself).

Reported per mode: events/s, p50/p90/p99 per event (spawn to exit), non-zero exits,
bytes printed on stdout/stderr, the CPU spent per event by the storm's own processes
(the hooks and what they spawned, the daemon, the tmux server: rusage and /proc/PID/stat,
so other load on the machine does not count; the whole machine's figure is in --json), and
"mixed tuples": pane reads (every pane, every 0.2 s through the storm, and at the end)
whose (state, detail) is not one event's whole claim, such as `working/permission`. With the daemon up, its own counters say how
many events it took and how many it refused.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_daemon_event import sandbox, tmux  # noqa: E402

from tma.runtime import daemon_files  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--workers", "2", "--panes", "2", "--secs", "1"]]

# a turn's hooks, and the (state, detail) each one stamps (claude's bundled hook map)
KINDS = (("UserPromptSubmit", ("working", "")),
         ("PreToolUse", ("working", "")),
         ("Notification", ("blocked", "permission")),
         ("PostToolUse", ("working", "")),
         ("Stop", ("idle", "")))
WHOLE = {claim for _, claim in KINDS}
QUIET = {("", ""), ("unknown", "")}
PAYLOAD = json.dumps({"session_id": "storm", "tool_name": "Bash", "tool_use_id": "toolu_1",
                      "notification_type": "permission_prompt",
                      "tool_input": {"command": "echo " + "x" * 200},
                      "transcript_path": "/nonexistent/storm.jsonl"}).encode()


def cpu_ticks() -> int:
    with open("/proc/stat") as fh:
        parts = fh.readline().split()[1:]
    user, nice, system = int(parts[0]), int(parts[1]), int(parts[2])
    irq, softirq = int(parts[5]), int(parts[6])
    return user + nice + system + irq + softirq


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process and its waited-for children (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def daemon_status(name: str, env: dict) -> dict | None:
    path = tmux(name, "display-message", "-p", "#{socket_path}", env=env).strip()
    files = daemon_files.Files(path, os.path.join(env["XDG_RUNTIME_DIR"], "tma"))
    return daemon_files.read_status(files.sock)


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def storm(mode: str, args, env: dict, tma: str, fake: Path) -> dict:
    name = f"tma-bench-storm-{os.getpid()}-{mode}"
    daemon = None
    try:
        tmux(name, "new-session", "-d", "-s", "s", "-x", "100", "-y", "30",
             f"exec {fake} 100000", env=env)
        for _ in range(args.panes - 1):
            tmux(name, "new-window", "-d", "-t", "s:", f"exec {fake} 100000", env=env)
        panes = tmux(name, "list-panes", "-s", "-t", "s", "-F", "#{pane_id}",
                     env=env).split()
        if mode == "daemon":
            log = open(os.environ.get("STORM_DAEMON_LOG", os.devnull), "ab")
            daemon = subprocess.Popen([tma, "--socket-name", name, "daemon"], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=log)
            log.close()
            deadline = time.monotonic() + 10
            while daemon_status(name, env) is None:
                if time.monotonic() > deadline:
                    raise SystemExit("the daemon did not start")
                time.sleep(0.05)
        # warm: bytecode, hook tables
        subprocess.run([tma, "--socket-name", name, "event", "--agent", "claude", "--kind",
                        "Stop", "--pane", panes[0]], input=PAYLOAD, env=env, check=True)
        before = daemon_status(name, env) if daemon else None
        lock = threading.Lock()
        times: list[float] = []
        bad_exit = [0]
        printed = [0]
        stop_at = time.monotonic() + args.secs

        def worker(w: int) -> None:
            i = w
            while time.monotonic() < stop_at:
                pane = panes[i % len(panes)]
                kind = KINDS[(i // len(panes)) % len(KINDS)][0]
                i += args.workers
                t0 = time.monotonic()
                r = subprocess.run([tma, "--socket-name", name, "event", "--agent",
                                    "claude", "--kind", kind, "--pane", pane],
                                   input=PAYLOAD, env=env, capture_output=True)
                dt = time.monotonic() - t0
                with lock:
                    times.append(dt)
                    if r.returncode:
                        bad_exit[0] += 1
                    printed[0] += len(r.stdout) + len(r.stderr)

        fmt = "#{pane_id}\t#{@agent_state}\t#{@agent_detail}"
        mixed = [0]
        reads = [0]
        seen: list[tuple[str, str]] = []

        def sample() -> None:
            for line in tmux(name, "list-panes", "-s", "-t", "s", "-F", fmt,
                             env=env).splitlines():
                _pane, state, detail = (line.split("\t") + ["", "", ""])[:3]
                reads[0] += 1
                # the daemon's own read may stamp the bare fake screen `unknown`
                if (state, detail) not in WHOLE and (state, detail) not in QUIET:
                    mixed[0] += 1
                    seen.append((state, detail))

        queued: list[int] = []

        def sampler() -> None:
            while time.monotonic() < stop_at:
                sample()
                if daemon is not None:
                    st = daemon_status(name, env)
                    if st is not None:
                        queued.append(st.get("queued", 0))
                time.sleep(0.2)

        server_pid = int(tmux(name, "display-message", "-p", "#{pid}", env=env))
        pids = [server_pid] + ([daemon.pid] if daemon else [])
        each0 = [proc_cpu(p) for p in pids]
        p0 = own_cpu() + sum(each0)
        c0, w0 = cpu_ticks(), time.monotonic()
        threads = [threading.Thread(target=worker, args=(w,)) for w in range(args.workers)]
        threads.append(threading.Thread(target=sampler))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - w0
        ticks = cpu_ticks() - c0
        each = [proc_cpu(p) - e for p, e in zip(pids, each0, strict=True)]
        ours = own_cpu() + sum(each) + sum(each0) - p0
        time.sleep(0.6)  # the daemon stamps right after its ACK
        after = daemon_status(name, env) if daemon else None
        sample()
        hz = os.sysconf("SC_CLK_TCK")
        out = {"mode": mode, "events": len(times), "wall": wall,
               "rate": len(times) / wall, "p50": pct(times, 50), "p90": pct(times, 90),
               "p99": pct(times, 99), "bad_exit": bad_exit[0], "printed": printed[0],
               "cpu_ms_per_event": 1000 * ours / max(1, len(times)),
               "machine_cpu_ms_per_event": 1000 * ticks / hz / max(1, len(times)),
               "tmux_server_cpu_ms_per_event": 1000 * each[0] / max(1, len(times)),
               "daemon_cpu_ms_per_event": (1000 * each[1] / max(1, len(times))
                                           if daemon else 0.0),
               "queued_max": max(queued, default=0),
               "queued_p50": statistics.median(queued) if queued else 0,
               "mixed": mixed[0], "mixed_seen": sorted(set(seen))[:5], "reads": reads[0], "panes": len(panes)}
        if before and after:
            out["taken"] = after["handoffs"] - before["handoffs"]
            out["naks"] = after["handoff_naks"] - before["handoff_naks"]
            out["abandoned"] = after["handoffs_abandoned"] - before["handoffs_abandoned"]
        return out
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, env=env)


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(__file__).resolve().parents[1] / "src" / "tma")], check=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=50)
    ap.add_argument("--panes", type=int, default=10)
    ap.add_argument("--secs", type=float, default=30)
    ap.add_argument("--mode", choices=("daemon", "direct", "both"), default="both")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work, env, fake, tma = sandbox("tma-bench-storm-")
    bare = []
    for _ in range(20):
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.monotonic() - t0)
    results = []
    try:
        modes = ("daemon", "direct") if args.mode == "both" else (args.mode,)
        for mode in modes:
            results.append(storm(mode, args, env, tma, fake))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"bare_ms": 1000 * statistics.median(bare), "results": results}))
        return 0
    print(f"## Hook storm: {args.workers} concurrent `tma event` on {args.panes} panes, "
          f"{args.secs:g} s, {os.cpu_count()} CPUs\n")
    print(f"bare `python -c pass` alone: {1000 * statistics.median(bare):.1f} ms median\n")
    print("| mode | events | events/s | p50 ms | p90 ms | p99 ms | CPU ms/event | "
          "non-zero exits | bytes printed | mixed tuples | daemon took / NAK / abandoned |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        took = (f"{r['taken']} / {r['naks']} / {r['abandoned']}" if "taken" in r else "—")
        print(f"| {r['mode']} | {r['events']} | {r['rate']:.1f} | {1000 * r['p50']:.0f} | "
              f"{1000 * r['p90']:.0f} | {1000 * r['p99']:.0f} | "
              f"{r['cpu_ms_per_event']:.1f} | {r['bad_exit']} | {r['printed']} | "
              f"{r['mixed']} of {r['reads']} | {took} |")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""A hook storm: many `tma event` processes at once (run by hand; results go to
bench/RESULTS.md). Issue 18: agents wait on synchronous hooks, and ten busy agents
fire dozens a second.

  python bench/bench_hook_storm.py [--workers 50] [--panes 10] [--seconds 30]

Two private tmux servers (`-L tma-bench-storm-<pid>-{a,b}`, killed afterwards), each
with `--panes` fake claude panes (a process named `claude`, really `sleep`); server a
has a foreground `tma daemon`, server b none. For each server in turn, `--workers`
threads each run `tma event` back to back for `--seconds` (worker i on pane i mod
panes, cycling through a turn: UserPromptSubmit, PreToolUse, PostToolUse, a
permission Notification, PostToolUse, Stop), and it reports:

  * events/s completed, p50 / p99 seconds per event (spawn to exit);
  * non-zero exits and bytes printed on stdout + stderr (both must be 0: a hook never
    prints and never fails);
  * mixed tuples afterwards: a pane whose stored tuple does not decode, is caught in
    flight (stamped_at older than since or evidence_at), pairs a state with another
    state's detail, or is not the hook's (all must be 0);
  * the one-at-a-time cost of the same event and of a bare interpreter, for scale,
    and the load average before and after (the machine must be otherwise quiet: the
    figures mean nothing under other load).

tma as installed in this interpreter's environment (PYTHONPATH decides which source),
bytecode compiled first, as bench_daemon_event.py does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tma.core import codec  # noqa: E402
from tma.runtime import daemon_files  # noqa: E402

TURN = (
    ("UserPromptSubmit", b'{"session_id":"S","prompt":"go"}'),
    ("PreToolUse", b'{"session_id":"S","tool_name":"Bash","tool_use_id":"toolu_1"}'),
    ("PostToolUse", b'{"session_id":"S","tool_name":"Bash","tool_use_id":"toolu_1"}'),
    ("Notification", b'{"session_id":"S","notification_type":"permission_prompt",'
                     b'"message":"Claude needs your permission to use Bash"}'),
    ("PostToolUse", b'{"session_id":"S","tool_name":"Bash","tool_use_id":"toolu_2"}'),
    ("Stop", b'{"session_id":"S"}'),
)
DETAIL_OF = {"blocked": {"permission"}, "working": {""}, "idle": {""}}


def tmux(name: str, *args: str, env: dict) -> str:
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def status(name: str, env: dict) -> dict | None:
    path = tmux(name, "display-message", "-p", "#{socket_path}", env=env).strip()
    files = daemon_files.Files(path, os.path.join(env["XDG_RUNTIME_DIR"], "tma"))
    return daemon_files.read_status(files.sock)


def pane_options(name: str, pane: str, env: dict) -> dict[str, str]:
    from tma.tmux import frame

    keys = ("@agent_state", "@agent_detail", "@agent_source", "@agent_since",
            "@agent_evidence_at", "@agent_stamped_at", "@agent_name")
    out = {}
    for key in keys:
        raw = tmux(name, "display-message", "-p", "-t", pane, frame.text(key), env=env)
        value = frame.untext(raw.rstrip("\n"))
        if value:
            out[key] = value
    return out


def mixed(opts: dict[str, str]) -> str:
    """Why this stored tuple is not one write's whole tuple ("" when it is)."""
    try:
        stamp = codec.decode(opts)
    except codec.DecodeError as exc:
        return f"does not decode: {exc}"
    if stamp is None:
        return "no stamp"
    if codec.in_progress(stamp):
        return "caught in flight (stamped_at older than since or evidence_at)"
    if stamp.detail not in DETAIL_OF.get(stamp.state, {stamp.detail}):
        return f"state {stamp.state} with detail {stamp.detail!r}"
    if stamp.source != "hook":
        return f"source {stamp.source}"
    return ""


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def storm(argv_of, panes: list[str], env: dict, workers: int, seconds: float) -> dict:
    times: list[float] = []
    bad_exit = [0]
    printed = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def worker(i: int) -> None:
        pane = panes[i % len(panes)]
        step = i  # workers on one pane start at different points of the turn
        while time.monotonic() < stop_at:
            kind, payload = TURN[step % len(TURN)]
            step += 1
            t0 = time.monotonic()
            res = subprocess.run(argv_of(pane, kind), input=payload, env=env,
                                 capture_output=True)
            dt = time.monotonic() - t0
            with lock:
                times.append(dt)
                bad_exit[0] += res.returncode != 0
                printed[0] += len(res.stdout) + len(res.stderr)

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    return {"events": len(times), "wall": wall, "rate": len(times) / wall,
            "p50": pct(times, 0.5), "p99": pct(times, 0.99), "bad_exit": bad_exit[0],
            "printed": printed[0]}


def one_at_a_time(argv: list[str], env: dict, payload: bytes, runs: int = 15) -> float:
    xs = []
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run(argv, input=payload, env=env, capture_output=True)
        xs.append(time.monotonic() - t0)
    return statistics.median(xs)


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "tma")],
                   check=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=50)
    ap.add_argument("--panes", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-storm-"))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime))
    for key in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD"):
        env.pop(key, None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep"))
    a, b = f"tma-bench-storm-{os.getpid()}-a", f"tma-bench-storm-{os.getpid()}-b"
    daemon = None
    load_before = os.getloadavg()
    try:
        panes: dict[str, list[str]] = {}
        for name in (a, b):
            tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
                 f"exec {fake} 100000", env=env)
            for _ in range(args.panes - 1):
                tmux(name, "new-window", "-d", "-t", "b:", f"exec {fake} 100000", env=env)
            panes[name] = tmux(name, "list-panes", "-s", "-t", "b", "-F", "#{pane_id}",
                               env=env).split()
        daemon = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", a, "daemon"],
                                  env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while status(a, env) is None:
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)

        def argv_for(name: str):
            def argv_of(pane: str, kind: str) -> list[str]:
                return [sys.executable, "-m", "tma", "--socket-name", name, "event",
                        "--agent", "claude", "--kind", kind, "--pane", pane]
            return argv_of

        for name in (a, b):  # warm the caches (hook tables, bytecode)
            subprocess.run(argv_for(name)(panes[name][0], "PostToolUse"),
                           input=TURN[2][1], env=env, check=True)
        bare = one_at_a_time([sys.executable, "-c", "pass"], env, b"")
        single = {name: one_at_a_time(argv_for(name)(panes[name][0], "PostToolUse"), env,
                                      TURN[2][1]) for name in (a, b)}
        handed0 = status(a, env)["handoffs"]
        results = {}
        for name in (a, b):
            results[name] = storm(argv_for(name), panes[name], env, args.workers,
                                  args.seconds)
        time.sleep(1.0)  # the daemon stamps right after its ACKs
        handed = status(a, env)["handoffs"] - handed0
        load_after = os.getloadavg()
        problems = {name: [(p, why) for p in panes[name]
                           if (why := mixed(pane_options(name, p, env)))]
                    for name in (a, b)}
        print(f"## Hook storm: {args.workers} concurrent `tma event` on {args.panes} panes, "
              f"{args.seconds:.0f} s\n")
        print("| server | events | events/s | p50 s | p99 s | non-zero exits | bytes printed "
              "| mixed tuples |")
        print("|---|---|---|---|---|---|---|---|")
        for name, label in ((a, "daemon up"), (b, "no daemon")):
            r = results[name]
            print(f"| {label} | {r['events']} | {r['rate']:.1f} | {r['p50']:.2f} | "
                  f"{r['p99']:.2f} | {r['bad_exit']} | {r['printed']} | "
                  f"{len(problems[name])} |")
        print(f"\none at a time: bare interpreter {bare * 1000:.0f} ms, `tma event` daemon up "
              f"{single[a] * 1000:.0f} ms, no daemon {single[b] * 1000:.0f} ms; the daemon "
              f"took {handed} of {results[a]['events']} storm events")
        print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} "
              f"({os.cpu_count()} CPUs)")
        for name in (a, b):
            for pane, why in problems[name]:
                print(f"  mixed: {name} {pane}: {why}")
        bad = any(results[n]["bad_exit"] or results[n]["printed"] or problems[n]
                  for n in (a, b))
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        for name in (a, b):
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, env=env)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

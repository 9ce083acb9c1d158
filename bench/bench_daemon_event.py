#!/usr/bin/env python3
"""`tma event` with the daemon up: the hook hands its event over (run by hand; results
go to bench/RESULTS.md).

  python bench/bench_daemon_event.py [--runs 40]

Two private tmux servers (`-L tma-bench-dev-<pid>-{a,b}`, killed afterwards), each with
one fake claude pane (a process named `claude`, really `sleep`); server a has a
foreground `tma daemon`, server b none. In interleaved rounds (bench_peer.interleaved:
one of each per round, the order rotating) it times, spawn to exit:

  * a bare `python -c pass` of the same interpreter;
  * the same interpreter importing only what a handed-off event imports (where the
    time goes: the rest is reading stdin and the exchange with the daemon);
  * `tma event --agent claude --kind PostToolUse` on server a (handed off: the daemon
    acknowledges, then stamps with the event's own time);
  * the same event on server b (no daemon: the hook stamps itself).

It checks that the timed runs on a were taken by the daemon (its status counters) and
stamped, and that those on b stamped. tma as installed in this interpreter's
environment, bytecode compiled first (as bench_hook_tier.py does).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_peer import BASELINE, PROBE, _imports_only, interleaved, med  # noqa: E402

from tma.runtime import daemon_files  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--runs", "1", "--panes", "2"]]

PAYLOAD = b'{"session_id":"bench","tool_name":"Bash","tool_use_id":"toolu_1"}'


def tmux(name: str, *args: str, env: dict) -> str:
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def sandbox(prefix: str) -> tuple[Path, dict, Path, str]:
    """A throwaway HOME and runtime dir, the environment for it (no tmux or tma of the
    caller's leaking in), a fake `claude` (really `sleep`) and this interpreter's `tma`."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime))
    for key in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD"):
        env.pop(key, None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep"))
    return work, env, fake, str(Path(sys.executable).parent / "tma")


def option(name: str, pane: str, key: str, env: dict) -> str:
    return tmux(name, "show-options", "-p", "-qv", "-t", pane, key, env=env).strip()


def status(name: str, env: dict) -> dict | None:
    path = tmux(name, "display-message", "-p", "#{socket_path}", env=env).strip()
    files = daemon_files.Files(path, os.path.join(env["XDG_RUNTIME_DIR"], "tma"))
    return daemon_files.read_status(files.sock)


def p90(xs: list[float]) -> float:
    """The 90th percentile; a single run (a smoke run) is its own."""
    return statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]


def hot_imports(argv: list[str], env: dict) -> list[str]:
    """What the handed-off event loads beyond a bare interpreter: read off one real run
    (python -m tma), so the list follows tma's modules wherever they move."""
    def loaded(*code: str, stdin: bytes | None = None) -> set[str]:
        out = subprocess.run([sys.executable, "-c", *code], input=stdin, env=env, check=True,
                             capture_output=True).stdout.decode()
        return set(out.rpartition("\n@@")[2].split())

    before = loaded(BASELINE)
    after = loaded(PROBE, *argv[1:], stdin=PAYLOAD)
    assert "tma.runtime.handoff" in after, "the imports probe handed nothing off"
    return sorted(after - before - {"__main__", "tma.__main__"})


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(__file__).resolve().parents[1] / "src" / "tma")], check=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--panes", type=int, default=38,
                    help="agent panes per server for the `tma status` measures")
    args = ap.parse_args()
    work, env, fake, tma = sandbox("tma-bench-dev-")
    a, b = f"tma-bench-dev-{os.getpid()}-a", f"tma-bench-dev-{os.getpid()}-b"
    daemon = None
    try:
        panes = {}
        for name in (a, b):
            tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
                 f"exec {fake} 100000", env=env)
            panes[name] = tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}",
                               env=env).strip()
            for _ in range(args.panes - 1):
                tmux(name, "new-window", "-d", "-t", "b:", f"exec {fake} 100000", env=env)
        daemon = subprocess.Popen([tma, "--socket-name", a, "daemon"], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while status(a, env) is None:
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        ev = {name: [tma, "--socket-name", name, "event", "--agent", "claude", "--kind",
                     "PostToolUse", "--pane", panes[name]] for name in (a, b)}
        for name in (a, b):  # warm the caches (hook tables, bytecode)
            subprocess.run(ev[name], input=PAYLOAD, env=env, check=True)
        imports = hot_imports(ev[a], env)
        st = {name: [tma, "--socket-name", name, "status"] for name in (a, b)}
        for _ in range(3):  # the first ask starts the daemon computing the segment
            subprocess.run(st[a], env=env, capture_output=True, check=True)
            time.sleep(0.3)
        answered = status(a, env)["segment_answers"]
        before = {name: option(name, panes[name], "@agent_stamped_at", env) for name in (a, b)}
        taken = status(a, env)["handoffs"]
        res = interleaved(args.runs, {
            "bare": ([sys.executable, "-c", "pass"], env, None, None),
            "imports": ([sys.executable, "-c", _imports_only(imports)], env, None, None),
            "daemon": (ev[a], env, PAYLOAD, None),
            "direct": (ev[b], env, PAYLOAD, None),
            "status_daemon": (st[a], env, None, None),
            "status_direct": (st[b], env, None, None),
        })
        time.sleep(0.3)  # the daemon stamps right after its ACK
        handed = status(a, env)["handoffs"] - taken
        assert handed == args.runs, f"the daemon took {handed} of {args.runs} events"
        for name in (a, b):
            assert option(name, panes[name], "@agent_stamped_at", env) != before[name], name
            assert option(name, panes[name], "@agent_state", env) == "working", name
        served = status(a, env)["segment_answers"] - answered
        assert served == args.runs, f"the daemon answered {served} of {args.runs} statuses"
        bare, dae, direct = med(res["bare"]), med(res["daemon"]), med(res["direct"])
        sd, sp = med(res["status_daemon"]), med(res["status_direct"])
        imp = med(res["imports"])
        print(f"## `tma event` with the daemon up, median of {args.runs} interleaved rounds\n")
        print("| measure | median ms | p90 ms | / bare |")
        print("|---|---|---|---|")
        print(f"| bare `python -c pass` | {bare:.1f} | {p90(res['bare']):.1f} | 1.00× |")
        print(f"| its imports alone (`python -c 'import …'`) | {imp:.1f} | "
              f"{p90(res['imports']):.1f} | {imp / bare:.2f}× |")
        print(f"| `tma event` PostToolUse, daemon up (handed off) | {dae:.1f} | "
              f"{p90(res['daemon']):.1f} | {dae / bare:.2f}× |")
        print(f"| `tma event` PostToolUse, no daemon (stamps itself) | {direct:.1f} | "
              f"{p90(res['direct']):.1f} | {direct / bare:.2f}× |")
        print(f"| `tma status`, {args.panes} agent panes, daemon up (answered by it) | "
              f"{sd:.1f} | {p90(res['status_daemon']):.1f} | {sd / bare:.2f}× |")
        print(f"| `tma status`, {args.panes} agent panes, no daemon (its own cycle) | "
              f"{sp:.1f} | {p90(res['status_direct']):.1f} | {sp / bare:.2f}× |")
        print("\nminima: bare {:.1f}, event handed off {:.1f} ({:.2f}×), status answered "
              "{:.1f} ({:.2f}×)".format(min(res["bare"]), min(res["daemon"]),
                                       min(res["daemon"]) / min(res["bare"]),
                                       min(res["status_daemon"]),
                                       min(res["status_daemon"]) / min(res["bare"])))
        load = os.getloadavg()[0]
        print(f"\nevents the daemon took: {handed}/{args.runs}; load average {load:.1f}; "
              "goal: daemon-up ratio <= 1.3")
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=10)
        for name in (a, b):
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, env=env)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

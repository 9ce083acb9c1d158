#!/usr/bin/env python3
"""The push sinks (ntfy, webhook) on the daemon path (run by hand; results go to
bench/RESULTS.md).

  python bench/bench_push.py [--runs 30]

A private tmux server (`-L tma-bench-push-<pid>`, killed afterwards) with one fake
claude pane (a process named `claude`, really `sleep`) and a foreground `tma daemon`;
two HTTP servers on 127.0.0.1 in this process stand for the webhook endpoint and the
ntfy server. Each run sends the pane back to working (`tma event PostToolUse`), then
blocked (`tma event PermissionRequest`, the reply lane off so the hook returns), and
measures from the blocked stamp (`@agent_stamped_at`, epoch ms) to the request's
arrival at each server (goal: webhook <= 1 s).

Phase 0 runs the same with no daemon and `from_event = true`: the hook stamps, fires
and hands the request to a detached child. Phase 2 restarts the daemon with the webhook pointed at a server that accepts and never
answers (timeout_s = 3, retries = 0): ntfy's latency then, against phase 1's, is what a
hanging sink costs the others (goal <= 50 ms). Phase 3, in this process: how long
`notify.dispatch` (the daemon's call) takes to return with the webhook hanging.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sinkkit import Endpoint, pct  # noqa: E402

from tma.runtime import config, daemon_files  # noqa: E402
from tma.runtime.notify import dispatch as notify
from tma.runtime.notify.note import Note  # noqa: E402
from tma.tmux import adapter  # noqa: E402

# The smallest run (argv lists): CI runs it (tests/integration/test_bench_scripts.py).
SMOKE = [["--runs", "2", "--dispatches", "5"]]

PAYLOAD = b'{"session_id":"bench","tool_name":"Bash","tool_use_id":"toolu_1"}'


def tmux(name: str, *args: str, env: dict) -> str:
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def option(name: str, pane: str, key: str, env: dict) -> str:
    return tmux(name, "show-options", "-p", "-qv", "-t", pane, key, env=env).strip()


def wait_for(pred, timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what or pred}")
        time.sleep(0.002)


def write_config(path: Path, webhook: str, ntfy: str, hang: bool, hook: bool = False) -> None:
    extra = "timeout_s = 3\nretries = 0\n" if hang else ""
    log = path.parent / "notify.jsonl"
    path.write_text(f'[hooks]\nclaude_reply_lane = false\n[notify]\ndesktop = false\n'
                    f'message = false\nfrom_event = {str(hook).lower()}\nlog = "{log}"\n'
                    f'[notify.webhook]\nurl = "{webhook}"\nsecret = "bench"\n'
                    f'{extra}[notify.ntfy]\nurl = "{ntfy}"\n')


def phase(name, pane, env, tma, runs, eps, log: Path) -> dict[str, list[float]]:
    """`runs` blocked episodes; ms from the stamp to each endpoint's arrival, and from
    the daemon's ring (the `[notify] log` line's `at`, written just before the push
    sinks fire) to each arrival (key `<name>_ring`)."""
    ev = [tma, "--socket-name", name, "event", "--agent", "claude", "--pane", pane, "--kind"]
    out: dict[str, list[float]] = {k: [] for k in eps}
    out.update({f"{k}_ring": [] for k in eps})
    for i in range(runs):
        subprocess.run([*ev, "PostToolUse"], input=PAYLOAD, env=env, check=True)
        wait_for(lambda: option(name, pane, "@agent_state", env) == "working",
                 what=f"run {i}: working")
        seen = {k: len(ep.arrivals) for k, ep in eps.items()}
        body = (b'{"session_id":"bench","tool_name":"Bash","tool_input":'
                b'{"command":"echo %d"},"prompt_id":"p%d"}' % (i, i))
        subprocess.run([*ev, "PermissionRequest"], input=body, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        for k, ep in eps.items():
            wait_for(lambda ep=ep, n=seen[k]: len(ep.arrivals) > n, what=f"run {i}: {k}")
        stamped = int(option(name, pane, "@agent_stamped_at", env)) / 1000
        rung = json.loads(log.read_text().splitlines()[-1])["at"] / 1000
        for k, ep in eps.items():
            out[k].append((ep.arrivals[seen[k]] - stamped) * 1000)
            out[f"{k}_ring"].append((ep.arrivals[seen[k]] - rung) * 1000)
    return out


def start_daemon(tma: str, name: str, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([tma, "--socket-name", name, "daemon"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    sock = Path(env["XDG_RUNTIME_DIR"]) / "tma"

    def answering() -> bool:
        found = list(sock.glob("*.sock")) if sock.exists() else []
        return bool(found) and daemon_files.read_status(str(found[0])) is not None

    # its first read done: the daemon answers only once its start-up sweep is over. A
    # hook sent before that waits out its deadline and stamps alone, a stamp the daemon
    # sees at its next read (a sweep away), so nothing rang (a guessed 0.5 s lost that
    # race on a loaded machine: "timed out waiting for run 0")
    wait_for(answering, timeout=30, what="the daemon's first read")
    return proc


def stop_daemon(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


def dispatch_times(cfg_path: Path, n: int) -> list[float]:
    """ms for notify.dispatch (daemon=True) to return with the webhook hanging."""
    cfg = config.load(str(cfg_path))
    server = adapter.Server("tmux", socket_name=f"tma-bench-push-none-{os.getpid()}")
    out = []
    for i in range(n):
        note = Note(trigger="blocked", agent="bench", pane="%1", locator="b:0.0",
                    summary=f"Bash: echo {i}")
        t0 = time.perf_counter()
        notify.dispatch(server, cfg, note, wait=False, daemon=True, clients=[])
        out.append((time.perf_counter() - t0) * 1000)
    return out


def row(label: str, xs: list[float]) -> str:
    return f"| {label} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, 95):.1f} | " \
           f"{max(xs):.1f} |"


def main() -> int:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure tma as installed (bytecode)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(__file__).resolve().parents[1] / "src" / "tma")], check=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--dispatches", type=int, default=200)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-push-"))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    cfg_path = work / "config.toml"
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_RUNTIME_DIR=str(runtime),
               TMA_CONFIG=str(cfg_path))
    for key in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD", "http_proxy",
                "HTTP_PROXY", "TMA_NOTIFY_FROM_EVENT", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(key, None)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # phase 3's failure records stay in here
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep"))
    tma = str(Path(sys.executable).parent / "tma")
    name = f"tma-bench-push-{os.getpid()}"
    hook, ntfy, hung = Endpoint(), Endpoint(), Endpoint(hang=True)
    daemon = None
    try:
        tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
             f"exec {fake} 100000", env=env)
        pane = tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}", env=env).strip()
        log = work / "notify.jsonl"
        write_config(cfg_path, hook.url, ntfy.url, hang=False, hook=True)
        direct = phase(name, pane, env, tma, args.runs, {"webhook": hook}, log)
        write_config(cfg_path, hook.url, ntfy.url, hang=False)
        daemon = start_daemon(tma, name, env)
        healthy = phase(name, pane, env, tma, args.runs, {"webhook": hook, "ntfy": ntfy}, log)
        stop_daemon(daemon)
        write_config(cfg_path, hung.url, ntfy.url, hang=True)
        daemon = start_daemon(tma, name, env)
        hanging = phase(name, pane, env, tma, args.runs, {"ntfy": ntfy, "hung": hung}, log)
        stop_daemon(daemon)
        daemon = None
        calls = dispatch_times(cfg_path, args.dispatches)
        delay = statistics.median(hanging["ntfy_ring"]) - statistics.median(healthy["ntfy_ring"])
        print(f"## Push sinks on the daemon path, {args.runs} blocked episodes per phase\n")
        print("| from the blocked stamp to … | n | median ms | p95 ms | max ms |")
        print("|---|---|---|---|---|")
        print(row("webhook received (all sinks healthy)", healthy["webhook"]))
        print(row("webhook received, no daemon (the hook fires: `from_event = true`)",
                  direct["webhook"]))
        print(row("ntfy received (all sinks healthy)", healthy["ntfy"]))
        print(row("ntfy received (webhook hangs, timeout 3 s)", hanging["ntfy"]))
        print(row("hanging webhook's request arrives (its worker is still waiting out the "
                  "previous one's 3 s)", hanging["hung"]))
        print("\n| from the daemon's ring (log line) to … | n | median ms | p95 ms | max ms |")
        print("|---|---|---|---|---|")
        print(row("webhook received (all sinks healthy)", healthy["webhook_ring"]))
        print(row("webhook received, no daemon (a detached child sends it)",
                  direct["webhook_ring"]))
        print(row("ntfy received (all sinks healthy)", healthy["ntfy_ring"]))
        print(row("ntfy received (webhook hangs)", hanging["ntfy_ring"]))
        print("\n| `notify.dispatch` returns, webhook hanging | n | median ms | p95 ms | "
              "max ms |\n|---|---|---|---|---|")
        print(row("daemon path (fire = enqueue)", calls))
        print(f"\nhanging webhook's cost to ntfy (median ring-to-arrival difference): "
              f"{delay:+.1f} ms "
              f"(goal <= 50); webhook p95 {pct(healthy['webhook'], 95):.0f} ms "
              f"(goal <= 1000); load average {os.getloadavg()[0]:.1f}")
    finally:
        stop_daemon(daemon)
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, env=env)
        for ep in (hook, ntfy, hung):
            ep.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

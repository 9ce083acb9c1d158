#!/usr/bin/env python3
"""`tma web` with a daemon: a blocked stamp to the SSE edge a browser sees, and what
N open streams cost (run by hand; results go to bench/RESULTS.md).

  python bench/bench_web.py [--runs 30] [--streams 20]

A private tmux server (`-L tma-bench-web-<pid>`, killed afterwards) with one fake claude
pane (a process named `claude`, really `sleep`), a foreground `tma daemon`, and a real
`tma web --port 0` whose tmux is a logging wrapper (TMA_TMUX_BIN): every tmux argv the
web process spawns lands in a file, so its reads are counted (the daemon runs the real
tmux and is not in the file). One device is paired over HTTP.

Each run sends the pane to working (`tma event PostToolUse`), then blocked (`tma event
PermissionRequest`, the reply lane off so the hook returns), and measures from the
blocked stamp (`@agent_stamped_at`, epoch ms) to the `edge` event's arrival on every
open stream (goal: p95 <= 0.5 s). Phase 1 holds one stream open, phase 2 `--streams`:
the web process's tmux spawns per run in each phase show whether more streams cost more
reads (they must not: one read per wake, shared). The web process's RSS is read from
/proc at the start, with the streams open, and at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sinkkit import pct  # noqa: E402

# The smallest run (argv lists): CI runs it (tests/integration/test_bench_scripts.py).
SMOKE = [["--runs", "2", "--streams", "3"]]

PAYLOAD = b'{"session_id":"bench","tool_name":"Bash","tool_use_id":"toolu_1"}'


def tmux(name: str, *args: str, env: dict) -> str:
    return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True, env=env).stdout


def option(name: str, pane: str, key: str, env: dict) -> str:
    return tmux(name, "show-options", "-p", "-qv", "-t", pane, key, env=env).strip()


def wait_for(pred, timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what or pred}")
        time.sleep(0.002)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Stream(threading.Thread):
    """One open `GET /api/stream`; records when each pane's edge to `blocked` arrived."""

    def __init__(self, port: int, cookie: str) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall((f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                           f"Cookie: tma_web={cookie}\r\nAccept: text/event-stream\r\n\r\n"
                           ).encode())
        self.blocked: list[float] = []
        self.opened = threading.Event()
        self.start()

    def run(self) -> None:
        f = self.sock.makefile("rb")
        data = b""
        try:
            for line in f:
                if line.startswith(b"HTTP/1.1 "):
                    assert b" 200 " in line, line
                if line.startswith(b"data: "):
                    data = line[6:]
                elif line == b"\n" and data:
                    doc = json.loads(data)
                    if doc["t"] == "snapshot":
                        self.opened.set()
                    elif doc["t"] == "edge" and doc["to"] == "blocked":
                        self.blocked.append(time.time())
                    data = b""
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def phase(name, pane, env, tma, runs, streams, log: Path) -> tuple[list[float], list[float],
                                                                   list[int]]:
    """`runs` blocked episodes: ms from the stamp to the first stream's edge and to the
    last stream's, and the web process's tmux spawns per run."""
    ev = [tma, "--socket-name", name, "event", "--agent", "claude", "--pane", pane, "--kind"]
    first, last, spawns = [], [], []
    for i in range(runs):
        subprocess.run([*ev, "PostToolUse"], input=PAYLOAD, env=env, check=True)
        wait_for(lambda: option(name, pane, "@agent_state", env) == "working",
                 what=f"run {i}: working")
        time.sleep(0.3)  # the working edge's read is over
        seen = [len(s.blocked) for s in streams]
        mark = len(log.read_text().splitlines())
        body = (b'{"session_id":"bench","tool_name":"Bash","tool_input":'
                b'{"command":"echo %d"},"prompt_id":"p%d"}' % (i, i))
        subprocess.run([*ev, "PermissionRequest"], input=body, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        wait_for(lambda seen=seen: all(len(s.blocked) > n
                                       for s, n in zip(streams, seen, strict=True)),
                 what=f"run {i}: every stream's edge")
        stamped = int(option(name, pane, "@agent_stamped_at", env)) / 1000
        got = [s.blocked[n] for s, n in zip(streams, seen, strict=True)]
        first.append((min(got) - stamped) * 1000)
        last.append((max(got) - stamped) * 1000)
        time.sleep(0.3)  # the same quiet after the edge in every run
        spawns.append(len(log.read_text().splitlines()) - mark)
    return first, last, spawns


def pair(tma: str, name: str, env: dict, port: int) -> str:
    out = subprocess.run([tma, "--socket-name", name, "web", "pair", "--port", str(port)],
                         env=env, check=True, capture_output=True, text=True).stdout
    code = re.search(r"pairing code: (\w+)", out).group(1)  # type: ignore[union-attr]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/api/pair", body=json.dumps({"code": code}),
                  headers={"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}",
                           "Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 200, resp.status
    return re.match(r"tma_web=([^;]+);", resp.headers["Set-Cookie"]).group(1)  # type: ignore


def row(label: str, xs: list[float]) -> str:
    return (f"| {label} | {len(xs)} | {statistics.median(xs):.0f} | {pct(xs, 95):.0f} | "
            f"{max(xs):.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--streams", type=int, default=20)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-web-"))
    runtime = work / "rt"
    runtime.mkdir(mode=0o700)
    cfg_path = work / "config.toml"
    cfg_path.write_text("[hooks]\nclaude_reply_lane = false\n[notify]\ndesktop = false\n"
                        "message = false\n")
    env = dict(os.environ, HOME=str(work), XDG_CACHE_HOME=str(work / "cache"),
               XDG_CONFIG_HOME=str(work / "cfg"), XDG_STATE_HOME=str(work / "state"),
               XDG_RUNTIME_DIR=str(runtime), TMA_CONFIG=str(cfg_path))
    for key in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_NOTIFY_CMD", "http_proxy",
                "HTTP_PROXY", "TMA_NOTIFY_FROM_EVENT", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(key, None)
    fake = work / "claude"
    fake.symlink_to(shutil.which("sleep"))
    tma = str(Path(sys.executable).parent / "tma")
    if not os.path.exists(tma):
        tma = str(work / "tma")
        Path(tma).write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m tma \"$@\"\n")
        os.chmod(tma, 0o755)
    real = env.get("TMA_TMUX_BIN") or shutil.which("tmux")
    assert real, "no tmux"
    log = work / "web-tmux.log"
    log.write_text("")
    wrapper = work / "tmux-logged"
    wrapper.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(log))}\n"
                       f"exec {shlex.quote(real)} \"$@\"\n")
    wrapper.chmod(0o755)
    name = f"tma-bench-web-{os.getpid()}"
    daemon = web = None
    streams: list[Stream] = []
    try:
        tmux(name, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
             f"exec {fake} 100000", env=env)
        pane = tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}", env=env).strip()
        daemon = subprocess.Popen([tma, "--socket-name", name, "daemon"], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        sock = runtime / "tma"
        wait_for(lambda: sock.exists() and any(sock.glob("*.sock")), timeout=30,
                 what="the daemon")
        time.sleep(1.0)  # its start-up sweep
        web = subprocess.Popen([tma, "--socket-name", name, "web", "--port", "0",
                                "--interval", "2000"],
                               env=dict(env, TMA_TMUX_BIN=str(wrapper)),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=open(work / "web.err", "wb"))  # noqa: SIM115
        line = web.stdout.readline().decode()  # type: ignore[union-attr]
        port = int(re.search(r":(\d+)/", line).group(1))  # type: ignore[union-attr]
        wait_for(lambda: "following this host's daemon" in (work / "web.err").read_text(),
                 what="tma web following the daemon")
        cookie = pair(tma, name, env, port)
        rss0 = rss_kb(web.pid)
        one = [Stream(port, cookie)]
        one[0].opened.wait(10)
        p1 = phase(name, pane, env, tma, args.runs, one, log)
        streams = one + [Stream(port, cookie) for _ in range(args.streams - 1)]
        for s in streams:
            assert s.opened.wait(10), "a stream opened no snapshot"
        rss1 = rss_kb(web.pid)
        p2 = phase(name, pane, env, tma, args.runs, streams, log)
        rss2 = rss_kb(web.pid)
        print(f"## tma web with a daemon: {args.runs} blocked episodes per phase\n")
        print("| from the blocked stamp to the SSE edge … | n | median ms | p95 ms | max ms |")
        print("|---|---|---|---|---|")
        print(row("1 stream open", p1[0]))
        print(row(f"{args.streams} streams open: the first stream's", p2[0]))
        print(row(f"{args.streams} streams open: the last stream's", p2[1]))
        print("\n| the web process's tmux spawns per blocked episode | n | median | max |")
        print("|---|---|---|---|")
        for label, xs in (("1 stream open", p1[2]), (f"{args.streams} streams open", p2[2])):
            print(f"| {label} | {len(xs)} | {statistics.median(xs):.0f} | {max(xs)} |")
        print(f"\nRSS of the web process: {rss0 / 1024:.1f} MiB at the start, "
              f"{rss1 / 1024:.1f} MiB with {args.streams} streams open, "
              f"{rss2 / 1024:.1f} MiB after {2 * args.runs} episodes.")
        print(f"load average at the end: {os.getloadavg()[0]:.1f} "
              f"({os.cpu_count()} CPUs)")
    finally:
        for s in streams:
            s.close()
        for proc in (web, daemon):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, env=env)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

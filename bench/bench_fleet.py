#!/usr/bin/env python3
"""The fleet: N hosts x M fake agent panes over loopback SSH, seen by one daemon (run by
hand; the results go to bench/RESULTS.md "The fleet").

  python bench/bench_fleet.py [--hosts 8] [--panes 25] [--ls-runs 21] [--runs 20]
                              [--idle-secs 60] [--intervals 2000] [--host-daemons on,off]

Every host is a machine of its own as far as tma can tell: a private tmux server
(`-L tma-bench-fleet-<pid>-hN -f /dev/null`, killed afterwards) with its own HOME, XDG
dirs and config, filled with M fake agents (real processes named like the agent:
symlinks to `sleep`, each pane drawn with its agent's captured idle screen, the agents
going round claude, codex, gemini, opencode, pi; pane 0 is always claude), and in front
of it a REAL sshd of its own on 127.0.0.1 (tests/helpers/sshd.py: its own host key, an
`authorized_keys` forced command `tma serve --stdio --interval MS`). This machine is one
more tmux server with M fake agents, its own HOME, a config whose notifications go to a
JSONL log only (`[notify] log`, message = false, desktop = false), the hosts added with
`tma host add hN tma-test --via 'ssh -F <that host's ssh_config> ...'` (tma's default ssh
argv, ControlMaster and all, plus -F), and a foreground `tma daemon` holding one link per
host. On the hosts: their tmux server, sshd, the `tma serve` each link runs, and (phase
`on` of --host-daemons, the realistic setup) a `tma daemon` of the host's own, which serve
follows (its push, then a stamps-only read); in phase `off` serve runs its own cycle
every interval. Each (interval, host daemon) pair is one phase: the links and daemons
restarted.

Measured, with the first phase's settings for ls:
1. `tma ls --json --hosts` (local rows + every host's, from the daemon's cache) against
   `tma ls --json` (the local M panes), spawn to exit, interleaved; p50/p95, the ratio
   of the p50s (goal <= 2x).
2. A remote pane blocked (Claude's PermissionRequest hook through the host's `tma event`,
   after a PostToolUse that made it working) -> the daemon's cache shows the row blocked
   (its fleet document, polled over the daemon's socket every 20 ms) and -> the local
   notification (the `[notify] log` line's `at`); ms from the host's blocked stamp
   (@agent_since, carried in the row). Goal p50 and p95 <= 1000 ms. Every phase.
3. Idle bytes per host per minute: TCP payload on each host's ssh connection (both
   directions, `ss -ti` bytes_sent + bytes_received of the client's socket) over a
   quiet window of --idle-secs (nothing changes on any host; nothing asks the daemon),
   every phase; the links must not reconnect in it (the keepalive is answered).
4. Over the same window: the daemon's CPU (utime + stime of its process, all threads)
   as % of one core (goal < 2 %), its VmRSS; beside it the ssh clients' CPU and the
   hosts' side (sshd sessions + tma serve, and the hosts' daemons when they run), which
   would be spread over N machines.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from _sinkkit import pct  # noqa: E402
from bench_cockpit import cpu_ms  # noqa: E402
from bench_daemon import descendants, rss_kb  # noqa: E402
from bench_peer import AGENTS, Tmux, load_screens  # noqa: E402

# The smallest run (argv lists): CI runs it (tests/integration/test_bench_scripts.py).
SMOKE = [["--hosts", "1", "--panes", "2", "--ls-runs", "3", "--runs", "2", "--idle-secs",
          "2", "--intervals", "500"]]

GOALS = {"ratio": 2.0, "latency_ms": 1000, "cpu_pct": 2.0}
HOST_CONFIG = """[hooks]
claude_reply_lane = false
[notify]
desktop = false
message = false
"""
LOCAL_CONFIG = """[notify]
log = "{log}"
desktop = false
message = false
"""


def tma_argv() -> list[str]:
    script = Path(sys.executable).with_name("tma")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tma"]


def missing() -> str | None:
    if not os.access("/usr/sbin/sshd", os.X_OK):
        return "sshd (apt-get install openssh-server)"
    for tool in ("ssh", "ssh-keygen", "ss", "tmux"):
        if shutil.which(tool) is None:
            return tool
    return None


def base_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "TMA_CONFIG", "TMA_SOCKET_PATH",
                        "TMA_NOTIFY_CMD", "TMA_NOTIFY_FROM_EVENT")}
    (root / "home").mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_STATE_HOME=str(root / "state"),
               TMA_CONFIG=str(root / "config.toml"), LANG="C.UTF-8")
    if "PYTHONPATH" not in env and (ROOT / "src" / "tma").is_dir():
        env["PYTHONPATH"] = str(ROOT / "src")  # a checkout run without an install
    return env


def fill(tmux: Tmux, panes: int, screens: dict[str, dict]) -> list[str]:
    """`panes` fake agents (pane 0 is claude), each drawn with its idle screen."""
    out = []
    for i in range(panes):
        agent = AGENTS[i % len(AGENTS)][0]
        out.append(tmux.add(screens[agent]))
    tmux.draw_all()
    return out



def _stop(daemon: subprocess.Popen | None) -> None:
    """A foreground `tma daemon` stopped: SIGTERM, then SIGKILL after 15 s."""
    if daemon is None:
        return
    daemon.terminate()
    try:
        daemon.wait(timeout=15)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()

class Host:
    """One host: its tmux server with fake agents, its HOME, its sshd."""

    def __init__(self, work: Path, n: int, panes: int, screens: dict[str, dict]) -> None:
        from tests.helpers.sshd import Sshd

        self.name = f"h{n}"
        self.root = work / self.name
        self.root.mkdir()
        self.env = base_env(self.root)
        (self.root / "rt").mkdir(mode=0o700)
        self.env["XDG_RUNTIME_DIR"] = str(self.root / "rt")
        (self.root / "config.toml").write_text(HOST_CONFIG)
        self.tmux = Tmux(self.root, self.env)
        self.tmux.name = f"tma-bench-fleet-{os.getpid()}-{self.name}"
        self.panes = fill(self.tmux, panes, screens)
        self.sshd = Sshd(self.root / "sshd")
        self.masters: set[int] = set()  # the ssh ControlMaster holding the connection
        self.daemon: subprocess.Popen | None = None
        self.event_argv = tma_argv() + ["--socket-name", self.tmux.name, "event",
                                        "--agent", "claude", "--pane", self.panes[0]]

    def serve(self, interval: int) -> None:
        """The forced command (read by sshd at each login: a new one needs new links)."""
        srv = types.SimpleNamespace(env=self.env, name=self.tmux.name)
        command = self.sshd.serve_command(srv, "--interval", str(interval))
        # sshd clears the environment and serve_command keeps HOME and config only: the
        # runtime dir (serve's connection seats, 4 a machine) and the state dir (its
        # ledger) would be one machine's for all hosts here
        own = " ".join(f"{k}={shlex.quote(self.env[k])}"
                       for k in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME"))
        assert command.startswith("exec env "), command
        self.sshd.set_command(command.replace("exec env ", f"exec env {own} ", 1))

    def start_daemon(self) -> None:
        """The host's own `tma daemon` (its runtime dir is the one serve is given)."""
        self.stop_daemon()
        self.daemon = subprocess.Popen(
            [*tma_argv(), "--socket-name", self.tmux.name, "daemon"], env=self.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.root / "daemon.log", "ab"))  # noqa: SIM115
        from tma.runtime import daemon_files

        sock = self.tmux("display-message", "-p", "#{socket_path}").strip()
        files = daemon_files.Files(sock, self.env["XDG_RUNTIME_DIR"] + "/tma")
        _wait(f"{self.name}'s daemon", lambda: daemon_files.read_status(files.sock)
              is not None, 30)

    def stop_daemon(self) -> None:
        _stop(self.daemon)
        self.daemon = None

    def event(self, kind: str, payload: str) -> None:
        subprocess.run([*self.event_argv, "--kind", kind], input=payload.encode(),
                       env=self.env, check=True, capture_output=True, timeout=30)

    def link_bytes(self) -> tuple[int, int] | None:
        """(TCP payload both ways on this host's ssh connection, as the client's socket
        counts it; the stream in the clear, both ways) or None when there is no link.
        The clear bytes: the daemon's ssh child is a ControlMaster mux client that hands
        its stdio to the master, so the master process moves them: its reads and writes
        (/proc/PID/io rchar + wchar) less what went on the socket."""
        res = subprocess.run(["ss", "-tinpH", "state", "established",
                              f"( dport = :{self.sshd.port} )"], capture_output=True,
                             text=True)
        sent = sum(int(x) for x in re.findall(r"bytes_sent:(\d+)", res.stdout))
        got = [int(x) for x in re.findall(r"bytes_received:(\d+)", res.stdout)]
        if res.returncode != 0 or not got:
            return None
        wire = sent + sum(got)
        moved = 0
        self.masters = {int(x) for x in re.findall(r"pid=(\d+)", res.stdout)}
        for pid in self.masters:
            try:
                io = Path(f"/proc/{pid}/io").read_text()
            except OSError:
                return wire, 0
            moved += sum(int(x) for x in re.findall(r"[rw]char: (\d+)", io))
        return wire, moved - wire

    def side_pids(self) -> list[int]:
        """sshd's session processes and the `tma serve` under them (not the listener)."""
        if self.sshd.proc is None:
            return []
        return descendants(self.sshd.proc.pid)

    def close(self) -> None:
        self.stop_daemon()
        self.sshd.close()
        self.tmux.kill()


class Fleet:
    def __init__(self, args) -> None:
        self.args = args
        self.work = Path(tempfile.mkdtemp(prefix="tma-bench-fleet-"))
        by_agent: dict[str, dict[str, dict]] = {}
        for screen in load_screens():
            kind = screen["file"].split("_", 1)[1].removesuffix(".txt")
            by_agent.setdefault(screen["agent"], {})[kind] = screen
        idle = {agent: kinds["idle"] for agent, kinds in by_agent.items()}
        self.hosts: list[Host] = []
        self.local_root = self.work / "local"
        self.local_root.mkdir()
        runtime = self.work / "rt"
        runtime.mkdir(mode=0o700)
        self.env = base_env(self.local_root)
        self.env["XDG_RUNTIME_DIR"] = str(runtime)
        self.log = self.local_root / "notify.jsonl"
        (self.local_root / "config.toml").write_text(LOCAL_CONFIG.format(log=self.log))
        self.tmux = Tmux(self.local_root, self.env)
        self.tmux.name = f"tma-bench-fleet-{os.getpid()}-local"
        self.daemon: subprocess.Popen | None = None
        self.pid = 0
        self.sock = ""
        try:
            fill(self.tmux, args.panes, idle)
            for n in range(args.hosts):
                self.hosts.append(Host(self.work, n, args.panes, idle))
        except BaseException:
            self.close()
            raise

    def tma(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*tma_argv(), "--socket-name", self.tmux.name, *args],
                              env=self.env, capture_output=True, text=True, timeout=60)

    # -- links
    def link(self, interval: int, first: bool, host_daemon: bool) -> float:
        """Every host's sshd (re)started with `--interval` (and its daemon started or
        stopped), the daemon (re)started; seconds until every host is online with all
        its rows."""
        self.stop_daemon()
        for h in self.hosts:
            h.sshd.kill()  # its sessions too: a ControlMaster's next session re-logs in
            if host_daemon:
                h.start_daemon()
            else:
                h.stop_daemon()
            h.serve(interval)
            h.sshd.start()
            if first:
                res = self.tma("host", "add", h.name, "tma-test", "--via", h.sshd.via())
                if res.returncode != 0:
                    raise SystemExit(f"tma host add: {res.stderr}")
        t0 = time.monotonic()
        self.daemon = subprocess.Popen([*tma_argv(), "--socket-name", self.tmux.name, "daemon"],
                                       env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL,
                                       stderr=open(self.work / "daemon.log", "ab"))  # noqa: SIM115
        from tma.runtime import daemon_files

        sock = self.tmux("display-message", "-p", "#{socket_path}").strip()
        files = daemon_files.Files(sock, self.env["XDG_RUNTIME_DIR"] + "/tma")
        self.sock = files.sock
        want = self.args.panes
        deadline = time.monotonic() + 60 + 5 * len(self.hosts)
        while True:
            doc = self.fleet()
            if doc is not None and len(doc["hosts"]) == len(self.hosts) and all(
                    h["state"] == "online" for h in doc["hosts"]) and len(
                    doc["agents"]) == want * len(self.hosts):
                break
            if time.monotonic() > deadline:
                said = doc and [(h["name"], h["state"], h["error"]) for h in doc["hosts"]]
                raise SystemExit(f"the hosts never came online: {said}")
            time.sleep(0.1)
        status = daemon_files.read_status(files.sock) or {}
        self.pid = int(status["pid"])
        return time.monotonic() - t0

    def fleet(self) -> dict | None:
        from tma.runtime import daemon_files

        return daemon_files.read_fleet(self.sock, timeout=2.0) if self.sock else None

    def stop_daemon(self) -> None:
        _stop(self.daemon)
        self.daemon = None

    def close(self) -> None:
        self.stop_daemon()
        for h in self.hosts:
            h.close()
        self.tmux.kill()
        shutil.rmtree(self.work, ignore_errors=True)


# ------------------------------------------------------------------ 1. ls


def bench_ls(fleet: Fleet, runs: int) -> dict:
    want_local = fleet.args.panes
    want_all = want_local * (1 + len(fleet.hosts))
    took: dict[str, list[float]] = {"local": [], "hosts": []}
    kinds = (("local", ()), ("hosts", ("--hosts",)))
    for r in range(runs + 1):
        for kind, extra in (kinds if r % 2 else kinds[::-1]):
            t0 = time.perf_counter()
            res = fleet.tma("ls", "--json", *extra)
            ms = (time.perf_counter() - t0) * 1000
            if res.returncode != 0:
                raise SystemExit(f"tma ls --json {' '.join(extra)}: {res.stderr}")
            doc = json.loads(res.stdout)
            rows = doc["agents"] if isinstance(doc, dict) else doc
            n = len(rows)
            if n != (want_all if extra else want_local):
                raise SystemExit(f"tma ls --json {' '.join(extra)}: {n} rows")
            if extra and not all(h.get("source") == "daemon" for h in doc["hosts"]):
                raise SystemExit(f"ls --hosts did not read the daemon: {doc['hosts']}")
            if r:  # the first round warms the caches
                took[kind].append(ms)
    return took


# ------------------------------------------------------------------ 2. latency


def _row(doc: dict | None, host: str, pane: str) -> dict | None:
    if doc is None:
        return None
    return next((r for r in doc["agents"] if r.get("host") == host and
                 r["pane"] == f"{host}:{pane}" or (r.get("host") == host and
                                                   r["pane"] == pane)), None)


def _log_lines(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def bench_latency(fleet: Fleet, runs: int, interval: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"row": [], "notify": [], "notify_seen": []}
    rng = random.Random(20)
    for k in range(runs):
        h = fleet.hosts[k % len(fleet.hosts)]
        pane = h.panes[0]
        h.event("PostToolUse", '{"session_id":"bench","tool_name":"Bash"}')
        _wait(f"{h.name}:{pane} working", lambda h=h, pane=pane: (
            (_row(fleet.fleet(), h.name, pane) or {}).get("state") == "working"), 20)
        rung = len(_log_lines(fleet.log))
        # the working row was seen just after one of serve's ticks: a pause anywhere in the
        # interval, so the blocked stamp falls at any phase of the next (as a person's does)
        time.sleep(rng.uniform(0, interval / 1000))
        h.event("PermissionRequest", '{"session_id":"bench","tool_name":"Bash",'
                f'"tool_use_id":"t-{k}","tool_input":{{"command":"make run-{k}"}}}}')
        seen_row = seen_note = None
        note = None
        deadline = time.monotonic() + 30
        while seen_row is None or note is None:
            now = time.time()
            if seen_row is None:
                row = _row(fleet.fleet(), h.name, pane)
                if row is not None and row["state"] == "blocked":
                    seen_row, since = now, row["since_ms"]
            if note is None:
                lines = _log_lines(fleet.log)[rung:]
                mine = [x for x in lines if x.get("pane") == f"{h.name}:{pane}"]
                if mine:
                    note, seen_note = mine[0], now
            if time.monotonic() > deadline:
                raise SystemExit(f"{h.name}:{pane}: blocked row {seen_row}, ring {note}")
            time.sleep(0.02)
        out["row"].append(seen_row * 1000 - since)
        out["notify"].append(note["at"] - since)
        out["notify_seen"].append(seen_note * 1000 - since)
        print(f"  episode {k + 1}/{runs} on {h.name}: row {out['row'][-1]:.0f} ms, ring "
              f"{out['notify'][-1]:.0f} ms after the host's stamp", flush=True)
    return out


def _wait(what: str, pred, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)


# ------------------------------------------------------------------ 3+4. idle


def bench_idle(fleet: Fleet, secs: float) -> dict:
    """A quiet window: nothing changes on any host and nothing asks the daemon."""
    time.sleep(min(10.0, secs))  # the last episode's frames and rings are over

    def side() -> float:
        total = 0.0
        for h in fleet.hosts:
            for pid in h.side_pids() + ([h.daemon.pid] if h.daemon is not None else []):
                try:
                    total += cpu_ms(pid, True)
                except (OSError, IndexError):
                    pass
        return total

    def clients() -> float:
        total = 0.0
        masters = {pid for h in fleet.hosts for pid in h.masters}
        for pid in set(descendants(fleet.pid)) | masters:
            try:
                total += cpu_ms(pid, True)
            except (OSError, IndexError):
                pass
        return total

    def connects() -> dict:
        return {h["name"]: h["connects"] for h in (fleet.fleet() or {}).get("hosts", [])}

    n0 = connects()
    b0 = [h.link_bytes() for h in fleet.hosts]  # first: it finds the masters
    d0, c0, s0, t0 = cpu_ms(fleet.pid, False), clients(), side(), time.monotonic()
    rss0 = rss_kb(fleet.pid)
    time.sleep(secs)
    b1 = [h.link_bytes() for h in fleet.hosts]
    d1, c1, s1, t1 = cpu_ms(fleet.pid, False), clients(), side(), time.monotonic()
    wall = (t1 - t0) * 1000
    if connects() != n0:
        raise SystemExit(f"a link reconnected in the quiet window: {n0} -> {connects()}")
    def per_min(i: int) -> list[float | None]:
        return [None if a is None or b is None else (b[i] - a[i]) * 60000 / wall
                for a, b in zip(b0, b1, strict=True)]

    return {"secs": round(wall / 1000, 1), "daemon_pct": (d1 - d0) / wall * 100,
            "clients_pct": (c1 - c0) / wall * 100, "hosts_pct": (s1 - s0) / wall * 100,
            "rss_kb": [rss0, rss_kb(fleet.pid)], "bytes_per_min": per_min(0),
            "app_bytes_per_min": per_min(1)}


def bench_alone(fleet: Fleet, secs: float) -> dict:
    """The same daemon with every host removed (`tma host remove`: it drops their links
    when it sees hosts.toml change): what it costs for this machine's panes alone."""
    for h in fleet.hosts:
        res = fleet.tma("host", "remove", h.name)
        if res.returncode != 0:
            raise SystemExit(f"tma host remove: {res.stderr}")
    _wait("the daemon to drop its links", lambda: (fleet.fleet() or {}).get("hosts") == [],
          30)
    _wait("the links' ssh to go", lambda: not descendants(fleet.pid) or all(
        "ssh" not in Path(f"/proc/{p}/comm").read_text() for p in descendants(fleet.pid)
        if Path(f"/proc/{p}").exists()), 30)
    time.sleep(min(10.0, secs))
    d0, t0 = cpu_ms(fleet.pid, False), time.monotonic()
    time.sleep(secs)
    d1, t1 = cpu_ms(fleet.pid, False), time.monotonic()
    return {"secs": round(t1 - t0, 1), "daemon_pct": (d1 - d0) / ((t1 - t0) * 1000) * 100,
            "rss_kb": rss_kb(fleet.pid)}


# ------------------------------------------------------------------ report


def _phase(ph: dict) -> str:
    how = "a daemon on each host (serve follows it)" if ph["host_daemon"] else \
        "no host daemon (serve's own cycle)"
    return f"interval {ph['interval']} ms, {how}"


def report(args, res: dict) -> None:
    print(f"\n## The fleet: {args.hosts} hosts x {args.panes} fake agent panes over loopback "
          f"ssh (a real sshd per host), {res['tmux']}\n")
    ls = res["ls"]
    loc, hst = statistics.median(ls["local"]), statistics.median(ls["hosts"])
    ratio = hst / loc
    print(f"1. `tma ls --json` ({args.panes} local panes) vs `tma ls --json --hosts` "
          f"({args.panes * (1 + args.hosts)} rows, the hosts' from the daemon), "
          f"{len(ls['local'])} runs each, spawn to exit ({_phase(res['phases'][0])}):\n")
    print("| command | p50 ms | p95 ms | min ms |")
    print("|---|---|---|---|")
    for kind, label in (("local", "`tma ls --json`"), ("hosts", "`tma ls --json --hosts`")):
        xs = ls[kind]
        print(f"| {label} | {statistics.median(xs):.0f} | {pct(xs, 95):.0f} | {min(xs):.0f} |")
    print(f"\nratio of the p50s {ratio:.2f}x (goal <= {GOALS['ratio']:g}x: "
          f"{'met' if ratio <= GOALS['ratio'] else 'missed'})\n")
    print(f"2. a remote pane blocked (host's `tma event` PermissionRequest) -> local, ms from "
          f"the host's blocked stamp, {args.runs} episodes per phase (hosts in turn):\n")
    print("| phase | to … | p50 ms | p95 ms | max ms | goal p50, p95 <= 1000 |")
    print("|---|---|---|---|---|---|")
    goal = GOALS["latency_ms"]
    for ph in res["phases"]:
        lat = ph["latency"]
        for key, label in (("row", "the daemon's cache shows it blocked"),
                           ("notify", "the notification (`[notify] log` line's `at`)")):
            xs = lat[key]
            ok = statistics.median(xs) <= goal and pct(xs, 95) <= goal
            print(f"| {_phase(ph)} | {label} | {statistics.median(xs):.0f} | "
                  f"{pct(xs, 95):.0f} | {max(xs):.0f} | {'met' if ok else 'missed'} |")
    print(f"\n3./4. idle, nothing changing, the daemon's keepalive every {res['keepalive']} s:\n")
    print("| phase | secs | KiB/host/min on the wire (median, min-max) | KiB/min in the clear "
          "| daemon CPU % (goal < 2) | its VmRSS kB | ssh clients CPU % | hosts' side CPU % |")
    print("|---|---|---|---|---|---|---|---|")
    for ph in res["phases"]:
        idle = ph["idle"]
        bpm = [b / 1024 for b in idle["bytes_per_min"] if b is not None]
        app = [b / 1024 for b in idle["app_bytes_per_min"] if b is not None]
        wire = (f"{statistics.median(bpm):.1f} ({min(bpm):.1f}-{max(bpm):.1f})"
                if bpm else "n/a")
        clear = f"{statistics.median(app):.1f}" if app else "n/a"
        met = "met" if idle["daemon_pct"] < GOALS["cpu_pct"] else "missed"
        print(f"| {_phase(ph)} | {idle['secs']} | {wire} | {clear} | "
              f"{idle['daemon_pct']:.2f} ({met}) | {idle['rss_kb'][0]} -> {idle['rss_kb'][1]} "
              f"| {idle['clients_pct']:.2f} | {idle['hosts_pct']:.2f} |")
    alone = res["alone"]
    print(f"\n- the same daemon after `tma host remove` of every host ({alone['secs']} s, this "
          f"machine's {args.panes} panes alone): {alone['daemon_pct']:.2f} %, VmRSS "
          f"{alone['rss_kb']} kB")
    print(f"\nlinks up in {res['link_s']:.1f} s; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--panes", type=int, default=25, help="fake agents per host (and local)")
    ap.add_argument("--ls-runs", type=int, default=21)
    ap.add_argument("--runs", type=int, default=20, help="blocked episodes per phase")
    ap.add_argument("--idle-secs", type=float, default=60)
    ap.add_argument("--intervals", default="2000",
                    help="the hosts' `tma serve --interval` (ms), one phase each per "
                         "--host-daemons mode")
    ap.add_argument("--host-daemons", default="on,off",
                    help="on: a `tma daemon` runs on each host (serve follows it); off: "
                         "none (serve's own cycle). The first phase also runs ls")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    lack = missing()
    if lack is not None:
        print(f"0 runs: {lack} is missing")
        return 0
    modes = [m.strip() for m in args.host_daemons.split(",") if m.strip()]
    if not modes or any(m not in ("on", "off") for m in modes):
        ap.error("--host-daemons takes on, off or both")
    phases = [(int(x), m == "on") for x in args.intervals.split(",") for m in modes]
    from tma.daemon.fleet import KEEPALIVE_S

    res: dict = {"phases": [], "keepalive": KEEPALIVE_S,
                 "tmux": subprocess.run(["tmux", "-V"], capture_output=True,
                                        text=True).stdout.strip()}
    t0 = time.monotonic()
    fleet = Fleet(args)
    try:
        print(f"  {args.hosts} hosts x {args.panes} panes up in {time.monotonic() - t0:.1f} s",
              flush=True)
        for i, (interval, host_daemon) in enumerate(phases):
            took = fleet.link(interval, first=i == 0, host_daemon=host_daemon)
            ph = {"interval": interval, "host_daemon": host_daemon, "link_s": took}
            print(f"  {_phase(ph)}: every host online in {took:.1f} s", flush=True)
            if i == 0:
                res["link_s"] = took
                res["ls"] = bench_ls(fleet, args.ls_runs)
            ph["latency"] = bench_latency(fleet, args.runs, interval)
            ph["idle"] = bench_idle(fleet, args.idle_secs)
            res["phases"].append(ph)
        res["alone"] = bench_alone(fleet, args.idle_secs)
    finally:
        fleet.close()
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    report(args, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What tma's everyday commands pay for their imports, this tree against others (run by
hand; results go to bench/RESULTS.md).

  python bench/bench_imports.py [--runs 21] [--panes 19] [--status-panes 38]
                                [--baseline DIR --baseline-label NAME]...

A tree is this checkout or a --baseline checkout (`git archive REV | tar -x -C DIR`); each
runs on this interpreter with PYTHONPATH at its src (bytecode written first), started as
its console script starts it (the [project.scripts] entry point of its pyproject.toml),
with a HOME, XDG dirs and runtime dir of its own: no hosts.toml, no daemon. In interleaved
rounds (the order rotates each round), medians and minima of:

1. `import tma.core.proto` alone: that line's cumulative time under `-X importtime`;
2. on a private tmux server per tree (its own caches and stamps: the trees' formats
   differ) holding --panes fake agent panes with fresh stamps (one blocked, one idle, the
   rest working) and one attached client: `ls`, `ls --json`, `jump --attention`,
   `act --list`, `wait --pane IDLE --until idle`, `card --pane BLOCKED`: how many of tma's
   modules the run imports, what the run's imports cost under `-X importtime` (the self
   times of every module imported after the interpreter's own start, summed) and tma's
   own share of that, and the whole run timed without `-X importtime`;
3. `tma status` over --status-panes fresh stamps, each run just after an untimed `tma ls`
   (as bench_peer.py measures it: every stamp consumed), against a bare `python -c pass`,
   and beside it the interpreter importing what that status run imports, and leaving
   without teardown as `tma status` does: what imports alone cost the status line.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import tomllib
from pathlib import Path

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--runs", "1", "--panes", "3", "--status-panes", "2"]]

ROOT = Path(__file__).resolve().parents[1]

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
region = "visible"
match = { contains = "BENCH-BLOCKED" }
[[rules]]
state = "working"
priority = 50
region = "visible"
match = { contains = "BENCH-WORKING" }
[[rules]]
state = "idle"
priority = 10
region = "visible"
match = { contains = "BENCH-IDLE" }
"""

COMMANDS = {
    "ls": ["ls"],
    "ls --json": ["ls", "--json"],
    "jump --attention": ["jump", "--attention"],
    "act --list": ["act", "--list"],
    "wait": ["wait", "--pane", "IDLE", "--until", "idle"],
    "card": ["card", "--pane", "BLOCKED"],
}
COLS, ROWS = 120, 40


def compile_tree(src: Path) -> None:
    """Bytecode written, as an installed tma has it (a session that sets
    PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "tma")], check=True,
                   env=env)


def startup_modules() -> set[str]:
    """What the interpreter imports before any statement of its own runs."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"],
                         capture_output=True, text=True, check=True)
    return {name for name, _self, _cum in importtimes(res.stderr)}


def importtimes(stderr: str) -> list[tuple[str, int, int]]:
    """(module, self µs, cumulative µs) from `-X importtime` lines."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and not line.endswith("imported package"):
            fields = line[len("import time:"):].split("|")
            if len(fields) == 3 and fields[0].strip().isdigit():
                out.append((fields[2].strip(), int(fields[0]), int(fields[1])))
    return out


class Tree:
    """One tma source tree, its launcher and its own machine (HOME, server, client)."""

    def __init__(self, label: str, checkout: Path, work: Path) -> None:
        self.label, self.src = label, checkout / "src"
        self.slug = "".join(c if c.isalnum() else "-" for c in label)
        compile_tree(self.src)
        script = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["scripts"]
        module, _, func = script["tma"].partition(":")
        self.root = work / self.slug
        for d in ("home", "config", "cache", "run", "agents", "bin"):
            (self.root / d).mkdir(parents=True)
        (self.root / "run").chmod(0o700)
        (self.root / "agents" / "bench.toml").write_text(MANIFEST)
        (self.root / "config.toml").write_text("[fold]\nfreshness_secs = 3600\n")
        (self.root / "bin" / "benchagent").symlink_to(shutil.which("sleep") or "/bin/sleep")
        # what pip writes for a console script
        self.launcher = self.root / "tma"
        self.launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\n"
                                 f"sys.exit({func}())\n")
        self.launcher.chmod(0o755)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "PYTHONDONTWRITEBYTECODE")}
        self.env.update(PYTHONPATH=str(self.src), HOME=str(self.root / "home"),
                        XDG_CONFIG_HOME=str(self.root / "config"),
                        XDG_CACHE_HOME=str(self.root / "cache"),
                        XDG_RUNTIME_DIR=str(self.root / "run"),
                        TMA_CONFIG=str(self.root / "config.toml"), LANG="C.UTF-8")
        self.servers: list[str] = []
        self.client: tuple[int, int] | None = None
        self.panes: dict[str, str] = {}

    def tmux(self, name: str, *args: str) -> str:
        return subprocess.run(["tmux", "-u", "-L", name, "-f", "/dev/null", *args], check=True,
                              capture_output=True, text=True, env=self.env).stdout

    def argv(self, name: str, *args: str) -> list[str]:
        return [str(self.launcher), "--socket-name", name, "--manifest-dir",
                str(self.root / "agents"), *args]

    def serve(self, kind: str, screens: list[str]) -> str:
        """A server of agent panes drawn with `screens`, stamped fresh by one `ls`."""
        # short: a socket path has room for ~100 bytes, TMUX_TMPDIR's included
        name = f"tma-bi-{os.getpid()}-{len(self.servers)}-{self.slug[:8]}"
        self.servers.append(name)
        agent = f"exec {self.root / 'bin' / 'benchagent'} 100000"
        self.tmux(name, "new-session", "-d", "-s", "b", "-x", str(COLS), "-y", str(ROWS), agent)
        # every window the client's size (no status line): a client moved by `jump`
        # resizes nothing, so no pane looks active and every later run consumes its stamp
        self.tmux(name, "set-option", "-g", "default-size", f"{COLS}x{ROWS}", ";",
                  "set-option", "-g", "status", "off")
        panes = [self.tmux(name, "display-message", "-p", "-t", "b", "#{pane_id}").strip()]
        for _ in screens[1:]:
            panes.append(self.tmux(name, "new-window", "-d", "-t", "b:", "-P", "-F",
                                   "#{pane_id}", agent).strip())
        time.sleep(0.3)
        for pane, screen in zip(panes, screens, strict=True):
            tty = self.tmux(name, "display-message", "-p", "-t", pane, "#{pane_tty}").strip()
            with open(tty, "w", encoding="utf-8") as fh:
                fh.write(f"\x1b[2J\x1b[H{screen}\r\n")
        next_second()  # window_activity counts seconds: a stamp in the drawing's is stale
        subprocess.run(self.argv(name, "ls", "--json"), env=self.env, check=True,
                       capture_output=True)
        return name

    def attach(self, name: str) -> None:
        pid, fd = pty.fork()
        if pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
                os.execvpe("tmux", ["tmux", "-u", "-L", name, "-f", "/dev/null", "attach",
                                    "-t", "b"], dict(self.env, TERM="xterm-256color"))
            finally:
                os._exit(127)
        self.client = (pid, fd)
        deadline = time.monotonic() + 10
        while not self.tmux(name, "list-clients", "-F", "#{client_name}").strip():
            assert time.monotonic() < deadline, "the bench's client never attached"
            time.sleep(0.05)

    def close(self) -> None:
        if self.client is not None:
            pid, fd = self.client
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        sockets = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        for name in self.servers:
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
            (sockets / name).unlink(missing_ok=True)  # tmux leaves its socket file behind


def next_second() -> None:
    now = time.time()
    time.sleep(int(now) + 1.05 - now)


def timed(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000


def import_cost(argv: list[str], env: dict, startup: set[str]) -> tuple[int, float, float] | None:
    """(tma modules, ms of every import after start-up, ms of tma's own) of one run, or
    None when the command does not exist in that tree."""
    res = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env,
                         capture_output=True, text=True)
    if res.returncode != 0:
        return None
    rows = [(n, s) for n, s, _c in importtimes(res.stderr) if n not in startup]
    tma = [s for n, s in rows if n == "tma" or n.startswith("tma.")]
    return len(tma), sum(s for _n, s in rows) / 1000, sum(tma) / 1000


def rotate(runs: int, cases: dict, each) -> None:
    """One call of each(case) per case per round, the order rotating every round."""
    names = list(cases)
    for r in range(runs):
        for i in range(len(names)):
            each(names[(r + i) % len(names)])


def proto_import(trees: list[Tree], runs: int) -> dict[str, list[float]]:
    """Per tree, the cumulative ms of `import tma.core.proto` (none: no such module)."""
    out: dict[str, list[float]] = {t.label: [] for t in trees}
    by = {t.label: t for t in trees}

    def each(label: str) -> None:
        res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tma.core.proto"],
                             env=by[label].env, capture_output=True, text=True)
        if res.returncode == 0:
            cum = next(c for n, _s, c in importtimes(res.stderr) if n == "tma.core.proto")
            out[label].append(cum / 1000)

    rotate(runs, by, each)
    return out


def commands(trees: list[Tree], runs: int, panes: int, startup: set[str]) -> dict:
    screens = ["BENCH-BLOCKED", "BENCH-IDLE"] + ["BENCH-WORKING"] * max(0, panes - 2)
    cases = {}
    for t in trees:
        name = t.serve("rows", screens)
        t.attach(name)
        blocked, idle = t.tmux(name, "list-panes", "-s", "-t", "b", "-F",
                               "#{pane_id}").split()[:2]
        for label, words in COMMANDS.items():
            words = [{"BLOCKED": blocked, "IDLE": idle}.get(w, w) for w in words]
            cases[(t.label, label)] = (t.argv(name, *words), t.env)
    cost: dict = {k: [] for k in cases}
    wall: dict = {k: [] for k in cases}

    def each(key) -> None:
        argv, env = cases[key]
        cost[key].append(import_cost(argv, env, startup))
        wall[key].append(timed(argv, env))

    rotate(runs, cases, each)
    return {"cost": cost, "wall": wall}


def status_ratio(trees: list[Tree], runs: int, panes: int,
                 startup: set[str]) -> dict[str, list[float]]:
    """`tma status` per tree, its imports alone (the modules a status run imports, leaving
    as the hot commands leave: os._exit, no teardown) and a bare interpreter."""
    cases = {"bare": ([sys.executable, "-c", "pass"], dict(os.environ), None)}
    for t in trees:
        name = t.serve("status", ["BENCH-WORKING"] * panes)
        refresh = (t.argv(name, "ls"), t.env)
        timing = subprocess.run(t.argv(name, "--debug-timing", "ls"), env=t.env,
                                capture_output=True, text=True)
        check = subprocess.run(t.argv(name, "--debug-timing", "status"), env=t.env,
                               capture_output=True, text=True)
        assert f"{panes} consumed, 0 captures" in check.stderr, (timing.stderr, check.stderr)
        cases[t.label] = (t.argv(name, "status"), t.env, refresh)
        subprocess.run(refresh[0], env=t.env, capture_output=True)
        res = subprocess.run([sys.executable, "-X", "importtime", *t.argv(name, "status")],
                             env=t.env, capture_output=True, text=True)
        mods = [n for n, _s, _c in importtimes(res.stderr) if n not in startup]
        code = f"for m in {mods!r}:\n    __import__(m)\nimport os\nos._exit(0)\n"
        cases[f"{t.label} imports"] = ([sys.executable, "-c", code], t.env, None)
    out: dict[str, list[float]] = {k: [] for k in cases}

    def each(key: str) -> None:
        argv, env, refresh = cases[key]
        if refresh is not None:
            subprocess.run(refresh[0], env=refresh[1], capture_output=True)
        out[key].append(timed(argv, env))

    rotate(runs, cases, each)
    return out


def fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} ms (min {min(xs):.1f})"


def report(args, trees: list[Tree], proto: dict, cmds: dict, status: dict) -> None:
    labels = [t.label for t in trees]
    print(f"## Imports — `python bench/bench_imports.py --runs {args.runs} --panes "
          f"{args.panes} --status-panes {args.status_panes}`\n")
    print(f"Python {sys.version.split()[0]}, "
          f"{subprocess.run(['tmux', '-V'], capture_output=True, text=True).stdout.strip()}; "
          f"medians of {args.runs} interleaved rounds (fastest run in brackets).\n")
    print("| `import tma.core.proto` (cumulative, -X importtime) | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    print("| | " + " | ".join(fmt(proto[x]) if proto[x] else "–" for x in labels) + " |\n")
    print(f"Commands over {args.panes} fresh agent panes, no host configured: tma modules "
          "imported / the run's imports (-X importtime, summed self times after the "
          "interpreter's start) / of which tma's own / the whole run:\n")
    print("| command | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for command in COMMANDS:
        cells = []
        for x in labels:
            costs = cmds["cost"][(x, command)]
            if any(c is None for c in costs):
                cells.append("–")
                continue
            n = statistics.median(c[0] for c in costs)
            cells.append(f"{n:.0f} / {statistics.median(c[1] for c in costs):.1f} / "
                         f"{statistics.median(c[2] for c in costs):.1f} / "
                         f"{fmt(cmds['wall'][(x, command)])}")
        print(f"| `tma {command}` | " + " | ".join(cells) + " |")
    bare = statistics.median(status["bare"])
    print(f"\n`tma status` over {args.status_panes} fresh stamps, no daemon, against a bare "
          f"`python -c pass` ({fmt(status['bare'])}):\n")
    print("| tree | `tma status` | / bare (medians) | / bare (minima) | its imports alone "
          "(no teardown) | / bare (medians) |")
    print("|---|---|---|---|---|---|")
    for x in labels:
        xs, imp = status[x], status[f"{x} imports"]
        print(f"| {x} | {fmt(xs)} | {statistics.median(xs) / bare:.2f}× | "
              f"{min(xs) / min(status['bare']):.2f}× | {fmt(imp)} | "
              f"{statistics.median(imp) / bare:.2f}× |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--panes", type=int, default=19)
    ap.add_argument("--status-panes", type=int, default=38)
    ap.add_argument("--baseline", action="append", default=[],
                    help="another checkout (git archive REV | tar -x -C DIR), measured in "
                         "the same rounds")
    ap.add_argument("--baseline-label", action="append", default=[])
    args = ap.parse_args()
    labels = args.baseline_label + [f"baseline {i + 1}" for i in
                                    range(len(args.baseline_label), len(args.baseline))]
    startup = startup_modules()
    with tempfile.TemporaryDirectory(prefix="tma-bench-imports-") as tmp:
        work = Path(tmp)
        trees: list[Tree] = []
        try:
            trees.append(Tree("this tree", ROOT, work))
            for label, checkout in zip(labels, args.baseline, strict=False):
                trees.append(Tree(label, Path(checkout), work))
            proto = proto_import(trees, args.runs)
            cmds = commands(trees, args.runs, args.panes, startup)
            status = status_ratio(trees, args.runs, args.status_panes, startup)
        finally:
            for t in trees:
                t.close()
    report(args, trees, proto, cmds, status)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

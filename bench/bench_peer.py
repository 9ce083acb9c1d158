#!/usr/bin/env python3
"""tma against what a user would pick instead, on the same panes in the same run.

  python bench/bench_peer.py [--runs 61] [--nice -10] [--venv ~/.cache/tma-bench/venv]
                             [--source DIR] [--baseline DIR --baseline-label NAME]
  python bench/bench_peer.py --smoke        # CI: one round, no virtualenv, no peer

Run by hand; the results go to bench/RESULTS.md. The script

* keeps its own virtualenv outside the repo (default ~/.cache/tma-bench/venv, a current
  pip) holding claude-tmux-status 0.4.1 (the peer, from PyPI) and tma installed from
  this checkout (or --source) as a user installs it: a wheel, bytecode written by pip,
  default config (no file); --baseline installs another checkout into a second
  virtualenv and times it in the same rounds;
* starts ONE private tmux server (`-L tma-bench-peer-<pid> -f /dev/null`, killed and its
  socket removed afterwards) and fills it with real panes: fake agents that are real
  processes named like the agent (symlinks to `sleep`; codex is `node` running `codex`,
  gemini is `node`, as the real CLIs are), each pane drawn with one of 19 captured
  screens of five real agents (tests/fixtures/captures: claude 2.1.332, codex 0.171.0,
  gemini 0.61.0, opencode 1.18.33, pi 0.73.1; idle, working, blocked, idle after a tool;
  pi has no permission dialog of its own, so it has no blocked screen) with its title;
* measures whole processes (spawn to exit) in interleaved rounds (the order rotates),
  reporting medians and minima:
  1. a cold refresh (no tma stamps, no recent poll) of 19 and of 76 agent panes:
     `tma status` against `claude-tmux-status <every window>`, and how many of the 19
     screens each reads right against tests/fixtures/captures/expectations.tsv;
  2. `tma status` over fresh stamps with 38 agent panes / a bare `python -c pass`, and
     where that time goes (imports alone, one tmux round trip, the pane read);
  3. `tma event` (a PostToolUse that stamps; checked) / a bare `python -c pass`;
  4. `tma status` in the steady state of a status line over idle agents (stamps past the
     freshness window, screens quiet, each run past the stampede second).

claude-tmux-status takes tmux window targets and prints `window<TAB>icon` per window
(⏳ working, ⚡ idle, ❓ blocked in a question widget, blank for no agent); it calls
plain `tmux`, so it reaches the private server through $TMUX, as it would inside tmux.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import json
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
SMOKE = [["--smoke"]]

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
PEER = "claude-tmux-status==0.4.1"
AGENTS = (("claude", "2.1.332"), ("codex", "0.171.0"), ("gemini", "0.61.0"),
          ("opencode", "1.18.33"), ("pi", "0.73.1"))
KINDS = ("idle", "working", "blocked", "idle_after")
NO_BLOCKED = {"pi"}  # pi-0.73.1_blocked.txt is the lab extension's dialog, not pi's
PEER_STATES = {"⏳": "working", "⚡": "idle", "❓": "blocked"}
GOALS = {"cold19": 0.8, "cold76": 0.4, "status": 1.5, "event": 1.5}
WIDTH, HEIGHT = 100, 30


# ------------------------------------------------------------------ the bench's virtualenv


def run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def prepare_venv(venv: Path, source: Path) -> Path:
    """The bench's own virtualenv with the peer and the checkout's tma (a wheel)."""
    py = venv / "bin" / "python"
    if not py.exists():
        run([sys.executable, "-m", "venv", str(venv)])
        # a current pip, as pipx keeps: the pip bundled with Python 3.11 (23.2) writes
        # console scripts that `import re` (~3 ms on every run of either tool)
        run([str(py), "-m", "pip", "install", "-q", "-U", "pip"])
    probe = ("import importlib.metadata as m\n"
             "try: print(m.version('claude-tmux-status'))\n"
             "except m.PackageNotFoundError: print('')")
    if run([str(py), "-c", probe]).stdout.strip() != PEER.split("==")[1]:
        run([str(py), "-m", "pip", "install", "-q", PEER])
    # Reinstalled on every run so the figures are this checkout's, as a user installs it
    # (the distribution was renamed once: whichever name owns tma/ goes first).
    subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", "tma", "tmux-agent-state"],
                   capture_output=True)
    run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(source)])
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run([str(py), "-m", "compileall", "-q", str(site_packages(py) / "tma")], env=env)
    return py


def smoke_tools() -> tuple[Path, str, str]:
    """--smoke's stand-ins: this interpreter, its tma run as `python -m tma` (no wheel, no
    virtualenv) and a peer that reads nothing (nothing is fetched from PyPI)."""
    bin_dir = Path(tempfile.mkdtemp(prefix="tma-bench-smoke-"))
    atexit.register(shutil.rmtree, bin_dir, True)
    tma, peer = bin_dir / "tma", bin_dir / "claude-tmux-status"
    tma.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tma "$@"\n')
    peer.write_text("#!/bin/sh\nexit 0\n")
    for p in (tma, peer):
        p.chmod(0o755)
    return Path(sys.executable), str(tma), str(peer)


def add_smoke(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--smoke", action="store_true",
                    help="the smallest run, as CI does it so the script cannot rot: one "
                         "round, this interpreter's tma, no virtualenv, nothing from PyPI "
                         "(the figures mean nothing)")


def site_packages(py: Path) -> Path:
    return Path(run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                    ).stdout.strip())


# ------------------------------------------------------------------ screens and panes


def load_screens() -> list[dict]:
    """The 19 screens: file, agent, expected state/detail, title and visible lines."""
    with open(CAPTURES / "expectations.tsv", encoding="utf-8") as fh:
        rows = {r["file"]: r for r in csv.DictReader(fh, delimiter="\t")}
    screens = []
    for agent, version in AGENTS:
        for kind in KINDS:
            if kind == "blocked" and agent in NO_BLOCKED:
                continue
            name = f"{agent}-{version}_{kind}.txt"
            text = (CAPTURES / name).read_text(encoding="utf-8")
            head, _, body = text.partition("\n---\n")
            headers = dict(line[2:].split(": ", 1) if ": " in line else (line[2:-1], "")
                           for line in head.splitlines())
            height = int(headers.get("height", HEIGHT))
            lines = body.rstrip("\n").split("\n")[-height:]
            screens.append({"file": name, "agent": agent, "title": headers.get("title", ""),
                            "lines": lines, "state": rows[name]["expected_state"],
                            "detail": rows[name]["expected_detail"]})
    return screens


class Tmux:
    def __init__(self, work: Path, env: dict) -> None:
        self.name = f"tma-bench-peer-{os.getpid()}"
        self.env = env
        self.bin = work / "bin"
        self.bin.mkdir()
        sleep = shutil.which("sleep")
        for name in ("claude", "codex", "opencode", "pi"):
            (self.bin / name).symlink_to(sleep)
        (self.bin / "node").symlink_to(shutil.which("sh"))  # node for codex and gemini
        self.panes: list[tuple[str, dict]] = []

    def __call__(self, *args: str) -> str:
        return run(["tmux", "-u", "-L", self.name, "-f", "/dev/null", *args], env=self.env).stdout

    def command_for(self, agent: str) -> str:
        if agent == "codex":  # node (the npm wrapper) -> codex, like the real CLI
            return f"exec {self.bin}/node -c '{self.bin}/codex 100000; :'"
        if agent == "gemini":  # the gemini CLI is a node process
            node = self.bin / "gemini-node" / "node"
            if not node.exists():
                node.parent.mkdir()
                node.symlink_to(shutil.which("sleep"))
            return f"exec {node} 100000"
        return f"exec {self.bin}/{agent} 100000"

    def add(self, screen: dict) -> str:
        cmd = self.command_for(screen["agent"])
        if not self.panes:
            pane = self("new-session", "-d", "-s", "b", "-x", str(WIDTH), "-y", str(HEIGHT),
                        "-P", "-F", "#{pane_id}", cmd).strip()
        else:
            pane = self("new-window", "-d", "-t", "b:", "-P", "-F", "#{pane_id}", cmd).strip()
        self.panes.append((pane, screen))
        return pane

    def draw_all(self, only: str | None = None) -> None:
        """Write every pane's screen and title to its tty (only those expecting `only`, if
        given), then wait until tmux shows them."""
        ttys = dict(line.split(" ", 1) for line in
                    self("list-panes", "-a", "-F", "#{pane_id} #{pane_tty}").splitlines())
        for pane, screen in self.panes:
            if only is not None and screen["state"] != only:
                continue
            title = screen["title"].replace("\x1b", "").replace("\x07", "")
            data = f"\x1b]2;{title}\x07\x1b[2J\x1b[H" + "\r\n".join(screen["lines"])
            with open(ttys[pane], "w", encoding="utf-8") as fh:
                fh.write(data)
        want = {pane: screen["title"] for pane, screen in self.panes}
        deadline = time.monotonic() + 20
        while True:
            shown = dict(line.split(" ", 1) for line in self(
                "list-panes", "-a", "-F", "#{pane_id} #{pane_title}").splitlines())
            if all(shown.get(p) == t for p, t in want.items()):
                break
            if time.monotonic() > deadline:
                bad = [p for p, t in want.items() if shown.get(p) != t]
                raise SystemExit(f"panes never showed their titles: {bad}")
            time.sleep(0.1)
        # the agent processes must be up under their names before anything identifies them
        while len([c for c in self("list-panes", "-a", "-F", "#{pane_current_command}").split()
                   if c in ("claude", "codex", "node", "opencode", "pi")]) < len(self.panes):
            if time.monotonic() > deadline:
                raise SystemExit("agent processes did not start")
            time.sleep(0.1)
        if only is None:
            self.drawn_at = time.time()

    def reset_lines(self) -> list[str]:
        """Every tma option on every pane, window, session and the server: a cold start."""
        sys.path.insert(0, str(ROOT / "src"))
        from tma.core import options

        out = []
        for line in self("list-panes", "-a", "-F",
                         "#{pane_id} #{window_id} #{session_id}").splitlines():
            pane, window, session = line.split()
            out += [f"set-option -p -u -t {pane} {n}" for n in options.UNINSTALL_PANE_OPTIONS]
            out.append(f"set-option -w -u -t {window} {options.ROLLUP_WINDOW}")
            out.append(f"set-option -u -t {session} {options.ROLLUP_SESSION}")
        out.append("set-option -s -u @tma_last_poll")
        return out

    def kill(self) -> None:
        sock = subprocess.run(["tmux", "-L", self.name, "display-message", "-p",
                               "#{socket_path}"], capture_output=True, text=True, env=self.env)
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True,
                       env=self.env)
        if sock.returncode == 0 and sock.stdout.strip():
            Path(sock.stdout.strip()).unlink(missing_ok=True)


# ------------------------------------------------------------------ timing


def timed(argv, env, stdin: bytes | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1000


def interleaved(runs: int, cases: dict) -> dict[str, list[float]]:
    """cases: name -> (argv, env, stdin, prepare-or-None); one of each per round, the
    order rotating so no case always runs first."""
    names = list(cases)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(runs):
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            argv, env, stdin, prepare = cases[name]
            if prepare is not None:
                prepare()
            out[name].append(timed(argv, env, stdin))
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


# Where the fresh status run's time goes: the interpreter with the path's imports only
# (leaving as tma's hot commands leave, without the interpreter's teardown), one tmux
# client round trip, the cycle's pane read as `tma status` sends it, and the same read
# with only the options a stamp decodes from.
STAMP_OPTIONS = ("@agent_state", "@agent_detail", "@agent_source", "@agent_evidence_at",
                 "@agent_since", "@agent_stamped_at", "@agent_attention", "@agent_name",
                 "@agent_pid", "@agent_hash", "@agent_session", "@agent_notified_at",
                 "@agent_turn_at", "@agent_subagents", "@agent_ignore", "@agent_mute_until")
# `python -m tma ARGS` run as the console script runs it, reporting the modules it loaded
# when it leaves (a hot command leaves through os._exit, so that is where it is caught).
# Through the CLI's public door only: the bench outlives any rearrangement of the cli package.
PROBE = """
import os, runpy, sys
leave = os._exit
def report(rc=0):
    sys.stdout.write("\\n@@" + " ".join(sorted(sys.modules)))
    sys.stdout.flush()
    leave(0)
os._exit = report
sys.argv = ["tma", *sys.argv[1:]]
try:
    runpy.run_module("tma", run_name="__main__")
except SystemExit:
    pass
report()
"""
# the probe's own machinery (runpy) is not tma's cost
BASELINE = "import os, runpy, sys; print(\"\\n@@\" + \" \".join(sorted(sys.modules)))"
READ_ARGS = """
from tma.tmux import read
if hasattr(read, "Listing"):  # the framed read (every tmux release prints it alike)
    args, kept = read.Listing(lean=True).args(), len(read.CYCLE_OPTIONS)
else:
  try:
    args = read.listing_args(lean=True)  # what `tma status` sends
    kept = len(read.CYCLE_OPTIONS)
  except TypeError:
    args, kept = read.listing_args(), len(read.OPTION_FIELDS)
print("\\x1e".join(args))
print("\\x1e".join(read.PANE_FIELDS))
print(kept)
"""
HOOK_READ = """
import sys
from tma.tmux import read
from tma.tmux.adapter import Server
calls = []
class Spy(Server):
    def run(self, *args):
        calls.append(args)
        return Server.run(self, *args)
hook_read = getattr(read, "hook_panes", None) or read.session_panes  # as tma event reads
hook_read(Spy(socket_name=sys.argv[1]), sys.argv[2])
print("\\x1e".join(calls[0]))
"""


def _imports_only(mods: list[str]) -> str:
    return f"for m in {mods!r}: __import__(m)\nimport os; os._exit(0)"


def breakdown(runs: int, py: Path, tmux: Tmux, env: dict, refresh, event) -> dict | None:
    base = ["--socket-name", tmux.name]
    refresh()
    out = run([str(py), "-c", PROBE, *base, "status"], env=env).stdout
    after = set(out.rpartition("\n@@")[2].split())
    assert "tma.runtime.cycle" in after, "the breakdown probe ran no cycle"
    before = set(run([str(py), "-c", BASELINE], env=env).stdout.rpartition("\n@@")[2].split())
    imports = sorted(m for m in after - before - {"__main__"} if m != "tma.__main__")
    ev_argv, payload, pane = event
    ev_out = run([str(py), "-c", PROBE, *ev_argv[1:]], env=env, input=payload.decode()).stdout
    ev_imports = sorted(set(ev_out.rpartition("\n@@")[2].split()) - before
                        - {"__main__", "tma.__main__"})
    assert "tma.runtime.hook" in ev_imports, "the breakdown's event probe handled nothing"
    try:
        lines = run([str(py), "-c", READ_ARGS], env=env).stdout.split("\n")  # not splitlines: \x1e
        hook_read = run([str(py), "-c", HOOK_READ, tmux.name, pane], env=env).stdout
    except subprocess.CalledProcessError:
        return None  # the read moved: no breakdown for this checkout
    full = lines[0].split("\x1e")
    fields = lines[1].split("\x1e")
    lean_fmt = "\x1f".join([f"#{{{f}}}" for f in fields] + [f"#{{{o}}}" for o in STAMP_OPTIONS]
                           + ["#{pane_title}"])
    lean = list(full)
    lean[lean.index("-F") + 1] = lean_fmt
    tm = ["tmux", "-u", "-L", tmux.name]
    cases = {
        "bare": ([str(py), "-c", "pass"], env, None, None),
        "imports": ([str(py), "-c", _imports_only(imports)], env, None, None),
        "ev_imports": ([str(py), "-c", _imports_only(ev_imports)], env, None, None),
        "tmux_noop": (tm + ["display-message", "-p", "x"], env, None, None),
        "tmux_read": (tm + full, env, None, None),
        "tmux_read_lean": (tm + lean, env, None, None),
        "hook_read": (tm + hook_read.rstrip("\n").split("\x1e"), env, None, None),
    }
    res = interleaved(runs, cases)
    res["n_imports"] = len(imports)
    res["n_ev_imports"] = len(ev_imports)
    res["n_options"] = int(lines[2])
    return res


# ------------------------------------------------------------------ correctness


def tma_verdicts(tmux: Tmux) -> dict[str, tuple[str, str]]:
    out = {}
    for line in tmux("list-panes", "-a", "-F",
                     "#{pane_id}\t#{@agent_state}\t#{@agent_detail}").splitlines():
        pane, state, detail = line.split("\t")
        out[pane] = (state, detail)
    return out


def peer_verdicts(peer_argv, env, panes) -> dict[str, str]:
    res = run(peer_argv, env=env)
    icons = {}
    for line in res.stdout.splitlines():
        window, _, icon = line.partition("\t")
        icons[int(window)] = PEER_STATES.get(icon.strip(), "none")
    return {pane: icons.get(i, "none") for i, (pane, _s) in enumerate(panes)}


# ------------------------------------------------------------------ the run


def contenders(args) -> tuple[Path, str, str, str | None]:
    """The interpreter, tma, the peer and the baseline's tma (or None) the run times."""
    if args.smoke:
        args.runs = 1
        py, tma, peer = smoke_tools()
    else:
        py = prepare_venv(Path(args.venv).expanduser(), Path(args.source))
        tma, peer = str(py.parent / "tma"), str(py.parent / "claude-tmux-status")
    btma = None
    if args.baseline:
        bpy = prepare_venv(Path(args.venv + "-baseline").expanduser(), Path(args.baseline))
        btma = str(bpy.parent / "tma")
    return py, tma, peer, btma


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--venv", default=str(Path.home() / ".cache" / "tma-bench" / "venv"))
    ap.add_argument("--source", default=str(ROOT),
                    help="the checkout whose tma is installed and measured (default: this one)")
    ap.add_argument("--baseline", help="another checkout (say, main before a change) measured "
                    "in the same rounds, from its own virtualenv beside --venv")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--json", help="also write the raw timings here")
    ap.add_argument("--nice", type=int, default=0,
                    help="run the bench (and the tmux server it starts) at this niceness; "
                         "on a machine shared with other work, -10 keeps their load off the "
                         "figures")
    add_smoke(ap)
    args = ap.parse_args()
    if args.nice:
        os.nice(args.nice)
    py, tma, peer, btma = contenders(args)
    screens = load_screens()
    assert len(screens) == 19, len(screens)
    work = Path(tempfile.mkdtemp(prefix="tma-bench-peer-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE", "TMA_CONFIG")}
    env.update(HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "config"),
               XDG_CACHE_HOME=str(work / "cache"), LANG="C.UTF-8",
               XDG_RUNTIME_DIR=str(work / "run"))
    (work / "home").mkdir()
    (work / "run").mkdir(mode=0o700)
    tmux = Tmux(work, env)
    res: dict = {"runs": args.runs, "baseline": args.baseline_label if btma else None}
    # the baseline keeps its own cache: both versions call themselves 0.1.0, and one cache
    # for both would be rewritten by each in turn
    benv = dict(env, XDG_CACHE_HOME=str(work / "cache-baseline"))

    def with_base(cases: dict) -> dict:
        if btma is not None:
            argv, _env, stdin, prepare = cases["tma"]
            cases["base"] = ([btma, *argv[1:]], benv, stdin, prepare)
        return cases

    try:
        for s in screens:
            tmux.add(s)
        tmux.draw_all()
        sock, spid = tmux("display-message", "-p", "#{socket_path} #{pid}").split()
        peer_env = dict(env, TMUX=f"{sock},{spid},0")  # as inside the server's session
        base = [tma, "--socket-name", tmux.name]
        bare = ([str(py), "-c", "pass"], env, None, None)

        def reset() -> None:
            lines = tmux.reset_lines()
            path = work / "reset.tmux"
            path.write_text("\n".join(lines) + "\n")
            tmux("source-file", str(path))

        def cold_cases(n: int) -> dict:
            windows = [str(i) for i in range(n)]
            return with_base({"tma": (base + ["status"], env, None, reset),
                              "peer": ([peer, *windows], peer_env, None, None), "bare": bare})

        run(base + ["ls"], env=env)  # warm tma's caches (a user's second run on)
        if btma is not None:
            run([btma, *base[1:], "ls"], env=benv)
        res["cold19"] = interleaved(args.runs, cold_cases(19))
        # correctness on the 19: a cold tma refresh, then the peer. The peer reads a codex
        # pane idle only after 10 s without output, so both look when the screens are that
        # old, except the working ones: those are repainted just before, as a working agent
        # keeps repainting (its spinner), so the peer's activity rule sees what it would live.
        if not args.smoke:  # the stand-in peer reads nothing: no need to wait for it
            time.sleep(max(0.0, tmux.drawn_at + 11 - time.time()))
        tmux.draw_all(only="working")
        reset()
        run(base + ["status"], env=env)
        tv = tma_verdicts(tmux)
        pv = peer_verdicts([peer, *[str(i) for i in range(19)]], peer_env, tmux.panes)
        res["right"] = [(s["file"], s["state"], s["detail"], tv[p], pv[p])
                        for p, s in tmux.panes]

        # tma event that stamps: a PostToolUse on the first claude pane
        pane = next(p for p, s in tmux.panes if s["agent"] == "claude")
        ev = base + ["event", "--agent", "claude", "--kind", "PostToolUse", "--pane", pane]
        payload = b'{"session_id":"bench","tool_name":"Bash","tool_use_id":"toolu_1"}'
        run(ev, env=env, input=payload.decode())
        before = tmux("show-options", "-p", "-qv", "-t", pane, "@agent_stamped_at")
        res["event"] = interleaved(args.runs, with_base({"tma": (ev, env, payload, None),
                                                         "bare": bare}))
        after = tmux("show-options", "-p", "-qv", "-t", pane, "@agent_stamped_at")
        assert after != before, "the timed tma event runs did not stamp"
        assert tmux("show-options", "-p", "-qv", "-t", pane, "@agent_state").strip() == "working"

        # 38 agent panes, status over fresh stamps (an untimed `tma ls` just before each)
        for s in screens:
            tmux.add(s)
        tmux.draw_all()

        def refresh() -> None:
            # a cold `ls` stamps every pane now: a stale pane whose screen stayed quiet is
            # otherwise reused as it is, keeping its old stamp (never fresh again)
            reset()
            run(base + ["ls"], env=env)

        res["status"] = interleaved(args.runs, with_base({
            "tma": (base + ["status"], env, None, refresh), "bare": bare}))
        refresh()
        timing = run(base + ["--debug-timing", "status", "--format", "plain"], env=env)
        assert timing.stdout.strip(), "tma status printed nothing over 38 agent panes"
        assert "38 consumed, 0 captures" in timing.stderr, timing.stderr  # the fresh path
        res["parts"] = breakdown(args.runs, py, tmux, env, refresh, (ev, payload, pane))
        # the steady state of a status line over idle agents: stamps older than the
        # freshness window, screens quiet since, so every pane is identified again and
        # reused without a capture (working panes are re-read whenever they go stale)
        # Each run is placed past the stampede second, as a status line's runs are a
        # status-interval apart (back to back, a run in the same second only consumes),
        # and without the last run's answer (tma.runtime.status_memo, which would answer
        # with no cycle: bench_status_line.py --time times that)
        def next_tick() -> None:
            tmux("set-option", "-s", "-u", "@tma_last_poll")
            for memo in (work / "run").glob("tma/*.status"):
                memo.unlink()

        refresh()
        time.sleep(3.5)
        res["quiet"] = interleaved(args.runs, with_base({
            "tma": (base + ["status"], env, None, next_tick), "bare": bare}))
        next_tick()
        timing = run(base + ["--debug-timing", "status"], env=env)
        res["quiet_line"] = timing.stderr.strip()
        next_tick()
        mods = run([str(py), "-c", PROBE, *base[1:], "status"], env=env).stdout
        mods = set(mods.rpartition("\n@@")[2].split())
        assert "tma.runtime.cycle" in mods, "the steady-state probe ran no cycle"
        res["quiet_loads"] = [m for m in ("tma.core.manifest", "re", "tma.core.rules")
                              if m in mods]

        # 76 agent panes, cold
        for s in screens + screens:
            tmux.add(s)
        tmux.draw_all()
        res["cold76"] = interleaved(args.runs, cold_cases(76))
        versions = run([str(py), "-c", "import importlib.metadata as m, sys, tma\n"
                        "try: peer = m.version('claude-tmux-status')\n"
                        "except m.PackageNotFoundError: peer = 'absent'\n"
                        "print(tma.__version__, peer, sys.version.split()[0])"],
                       env=env).stdout.split()
        res["versions"] = versions + [tmux("display-message", "-p", "#{version}").strip()]
    finally:
        tmux.kill()
        shutil.rmtree(work, ignore_errors=True)
    report(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res))
    return 0


def report(res: dict) -> None:
    tma_v, peer_v, py_v, tmux_v = res["versions"]
    print(f"tma {tma_v} (wheel), claude-tmux-status {peer_v}, Python {py_v}, tmux {tmux_v}; "
          f"{res['runs']} interleaved rounds per measure. Medians over all rounds; the last "
          "column gives the fastest run of each (the figure other load on the machine "
          "cannot inflate) and their ratio.\n")
    right = res["right"]
    tma_ok = sum(t[0] == s for _f, s, _d, t, _p in right)
    tma_detail = sum(t == (s, d) for _f, s, d, t, _p in right)
    peer_ok = sum(p == s for _f, s, _d, _t, p in right)
    print("| measure | tma | other | ratio | goal | met | minima: tma / other = ratio |")
    print("|---|---|---|---|---|---|---|")

    def line(key, label, other, tma_note="", other_note="", goal=None):
        case = res[key]
        t, o = med(case["tma"]), med(case[other])
        lt, lo = min(case["tma"]), min(case[other])
        name = "claude-tmux-status" if other == "peer" else "bare `python -c pass`"
        met = ("yes" if t / o <= goal else "no") if goal else ""
        print(f"| {label} | {t:.1f} ms{tma_note} | {name} {o:.1f} ms{other_note} | "
              f"{t / o:.2f}× | {f'≤ {goal}×' if goal else '—'} | {met} | "
              f"{lt:.1f} / {lo:.1f} ms = {lt / lo:.2f}× |")

    line("cold19", "cold refresh, 19 agent panes", "peer", f" ({tma_ok}/19 right)",
         f" ({peer_ok}/19 right)", GOALS["cold19"])
    line("cold76", "cold refresh, 76 agent panes", "peer", goal=GOALS["cold76"])
    line("status", "`tma status`, fresh stamps, 38 agent panes", "bare", goal=GOALS["status"])
    line("event", "`tma event` PostToolUse (stamps), 19-pane session", "bare",
         goal=GOALS["event"])
    line("quiet", "`tma status`, steady state: 38 panes, stamps past the freshness window",
         "bare")
    if res.get("baseline"):
        print(f"\nThe same rounds with {res['baseline']}'s tma (own virtualenv, own cache):\n")
        print(f"| measure | {res['baseline']} median | this tree median | change | "
              f"{res['baseline']} min | this tree min | change |")
        print("|---|---|---|---|---|---|---|")
        for key, label in (("cold19", "cold refresh, 19 panes"), ("cold76", "cold refresh, 76"),
                           ("status", "`tma status`, fresh, 38"), ("event", "`tma event`"),
                           ("quiet", "`tma status`, steady state, 38")):
            c = res[key]
            bm, tm, bl, tl = med(c["base"]), med(c["tma"]), min(c["base"]), min(c["tma"])
            print(f"| {label} | {bm:.1f} ms | {tm:.1f} ms | {100 * (tm / bm - 1):+.0f} % | "
                  f"{bl:.1f} ms | {tl:.1f} ms | {100 * (tl / bl - 1):+.0f} % |")
    loads = ", ".join(res["quiet_loads"]) or "none of tma.core.manifest, re, tma.core.rules"
    print(f"\nsteady-state cycle: `{res['quiet_line']}`; it loads {loads}. tma state and "
          f"detail both right: {tma_detail}/19\n")
    parts = res.get("parts")
    if parts:
        print("Where the fresh `tma status` time goes (38 agent panes, same run):\n")
        print("| part | median | min |")
        print("|---|---|---|")

        def row(label: str, xs: list[float]) -> None:
            print(f"| {label} | {med(xs):.1f} ms | {min(xs):.1f} ms |")

        row("bare `python -c pass`", parts["bare"])
        row(f"interpreter + the path's {parts['n_imports']} modules, imported only "
            "(no teardown)", parts["imports"])
        row("one tmux client round trip (`display-message`)", parts["tmux_noop"])
        row(f"the cycle's read as `tma status` sends it ({parts['n_options']} options per "
            "pane)", parts["tmux_read"])
        row(f"the same read, the {len(STAMP_OPTIONS)} stamp options only (all pane fields)",
            parts["tmux_read_lean"])
        row("`tma status` (the fresh-stamp rounds above)", res["status"]["tma"])
        print()
        print("Where the `tma event` time goes (same run):\n")
        print("| part | median | min |")
        print("|---|---|---|")
        row("bare `python -c pass`", parts["bare"])
        row(f"interpreter + the hook path's {parts['n_ev_imports']} modules, imported only "
            "(no teardown)", parts["ev_imports"])
        row("one tmux client round trip (`display-message`)", parts["tmux_noop"])
        row("the hook's read of the session as sent", parts["hook_read"])
        row("`tma event` (the rounds above)", res["event"]["tma"])
        print()
    print("| screen | expected | tma | claude-tmux-status |")
    print("|---|---|---|---|")
    for f, s, d, t, p in right:
        exp = f"{s}/{d}" if d else s
        got = f"{t[0]}/{t[1]}" if t[1] else t[0]
        mark_t = "" if t[0] == s else " ✗"
        mark_p = "" if p == s else " ✗"
        print(f"| {f} | {exp} | {got}{mark_t} | {p}{mark_p} |")


if __name__ == "__main__":
    raise SystemExit(main())

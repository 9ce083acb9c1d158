#!/usr/bin/env python3
"""A cold `tma ls --json` against claude-tmux-status and against other trees of tma,
each installed as a user's pipx installs it (run by hand; results go to bench/RESULTS.md).

  python bench/bench_cold_ls.py [--runs 41] [--sizes 19,76] [--nice 0]
                                [--home ~/.cache/tma-bench/pipx]
                                [--baseline DIR --baseline-label NAME]...
  python bench/bench_cold_ls.py --smoke     # CI: one round, no pipx, no PyPI

* Every contender is installed with `pipx install --force` into a PIPX_HOME of its own
  under --home (bench/_pipx.py): this checkout, each --baseline checkout (`git archive
  REV | tar -x -C DIR`, or a worktree) and claude-tmux-status 0.4.1 from PyPI. Each is a
  non-editable install (pip builds the wheel and writes the bytecode) run through pip's
  console script, by its absolute path, on one interpreter (the one under this venv).
* ONE private tmux server (bench_peer.Tmux: `-L tma-bench-peer-<pid> -f /dev/null`,
  killed afterwards) holds fake agent panes drawn with the 19 captured screens of five
  real agents (bench_peer.load_screens); 76 panes are the same 19 four times. The panes'
  cwd is one small git checkout the bench makes (ls --json names the repo and branch).
* Before every tma run every tma option on every pane, window, session and the server is
  unset (every `@` option the contenders were seen to write), so each run is a cold
  refresh: identify, capture, fold and stamp every pane. tma's file caches stay warm (a
  user's second run on); each tree has its own. claude-tmux-status is run as its README
  says, with every window to report (`claude-tmux-status 0 1 …`), through $TMUX.
* Whole processes, spawn to exit, in interleaved rounds (the order rotates each round),
  with a bare `python -c pass` of the same interpreter beside them; medians, minima and
  the ratios the issue sets goals for: this tree ≤ 0.8× claude-tmux-status at 19 panes,
  ≤ 0.4× at 76, and ≤ 1.0× each baseline at both.
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

import _pipx
from bench_peer import PEER, Tmux, interleaved, load_screens, smoke_tools

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--smoke"]]

ROOT = Path(__file__).resolve().parents[1]
GOALS = {("peer", 19): 0.8, ("peer", 76): 0.4}  # and ≤ 1.0 against every baseline


def contenders(args) -> tuple[dict[str, str], str, str]:
    """label -> tma's console script; the peer's; the interpreter for the bare start."""
    if args.smoke:
        py, tma, peer = smoke_tools()
        return {"this tree": tma}, peer, str(py)
    home = Path(args.home).expanduser()
    how = _pipx.pipx_command(home)
    trees = {"this tree": Path(args.source)}
    for label, path in zip(args.baseline_label, args.baseline, strict=True):
        trees[label] = Path(path)
    tmas = {}
    for label, path in trees.items():
        slug = "".join(c if c.isalnum() else "-" for c in label)
        tmas[label] = str(_pipx.install(str(path.resolve()), home / f"tma-{slug}", "tma", how))
    peer = _pipx.install(PEER, home / "peer", "claude-tmux-status", how)
    return tmas, str(peer), str(_pipx.python_of(Path(tmas["this tree"])))


def git_checkout(where: Path) -> None:
    """A one-commit repository: the panes' cwd, so ls names a repo and a branch."""
    where.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", "-C", str(where), *argv], check=True, env=env,
                       capture_output=True)


def tma_options(tmux: Tmux) -> set[tuple[str, str, str]]:
    """(scope flag, target, option) for every `@` option set anywhere on the server."""
    found = set()
    listing = tmux("list-panes", "-a", "-F", "#{pane_id} #{window_id} #{session_id}")
    panes, windows, sessions = set(), set(), set()
    for line in listing.splitlines():
        p, w, s = line.split()
        panes.add(p)
        windows.add(w)
        sessions.add(s)
    scopes = ([("-p", t) for t in panes] + [("-w", t) for t in windows]
              + [("", t) for t in sessions] + [("-s", ""), ("-g", ""), ("-gw", "")])
    for flag, target in scopes:
        argv = ["show-options", *([flag] if flag else []), *(["-t", target] if target else [])]
        for line in tmux(*argv).splitlines():
            name = line.split(" ", 1)[0]
            if name.startswith("@"):
                found.add((flag, target, name))
    return found


class Cold:
    """Unsets every stamp the contenders were seen to write: each pane's options, the
    window and session rollups and the server's last-poll mark, so the next run is a
    cold refresh. What describes the server itself stays (`@tma_setpf_ok`, whether this
    tmux expands `set-option -F`: probed once per server, not per agent)."""

    KEEP = ("@tma_setpf_ok",)

    def __init__(self, tmux: Tmux, work: Path) -> None:
        self.tmux, self.path = tmux, work / "cold.tmux"
        self.names: dict[str, set[str]] = {}  # scope flag -> option names

    def learn(self) -> None:
        for flag, _target, name in tma_options(self.tmux):
            if name not in self.KEEP:
                self.names.setdefault(flag, set()).add(name)

    def write(self) -> None:
        listing = self.tmux("list-panes", "-a", "-F", "#{pane_id} #{window_id} #{session_id}")
        targets = {"-p": set(), "-w": set(), "": set()}
        for line in listing.splitlines():
            p, w, s = line.split()
            targets["-p"].add(p)
            targets["-w"].add(w)
            targets[""].add(s)
        lines = []
        for flag, names in sorted(self.names.items()):
            for name in sorted(names):
                if flag in targets:
                    lines += [f"set-option {flag} -u -t {t} {name}".replace("  ", " ")
                              for t in sorted(targets[flag])]
                else:
                    lines.append(f"set-option {flag} -u {name}")
        self.path.write_text("\n".join(lines) + "\n")

    def __call__(self) -> None:
        self.tmux("source-file", str(self.path))


def check(tmas: dict[str, str], tmux: Tmux, cold: Cold, env_of: dict, n: int) -> dict:
    """Each tree's cold `ls --json` verdicts on the 19 screens: right / looked at."""
    out = {}
    expected = {p: s for p, s in tmux.panes[:n]}
    for label, exe in tmas.items():
        cold()
        res = subprocess.run([exe, "--socket-name", tmux.name, "ls", "--json"],
                             env=env_of[label], capture_output=True, text=True, check=True)
        rows = {r["pane"]: r for r in json.loads(res.stdout)["agents"]}
        right = sum(1 for p, s in expected.items()
                    if p in rows and rows[p]["state"] == s["state"]
                    and (rows[p]["detail"] or "") == s["detail"])
        out[label] = (right, len(expected), len(rows))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--sizes", default="19,76",
                    help="agent panes, multiples of 19 in increasing order")
    ap.add_argument("--home", default=str(Path.home() / ".cache" / "tma-bench" / "pipx"),
                    help="where the pipx homes live (one per contender)")
    ap.add_argument("--source", default=str(ROOT),
                    help="the checkout measured as 'this tree' (default: this one)")
    ap.add_argument("--baseline", action="append", default=[],
                    help="another checkout measured in the same rounds (repeatable)")
    ap.add_argument("--baseline-label", action="append", default=[])
    ap.add_argument("--nice", type=int, default=0,
                    help="run the bench and its tmux server at this niceness (-10 keeps "
                         "other work's load off the figures)")
    ap.add_argument("--json", help="also write the raw timings here")
    ap.add_argument("--smoke", action="store_true",
                    help="the smallest run, as CI does it: one round of 19 panes, this "
                         "interpreter's tma, a stand-in peer, nothing installed (the "
                         "figures mean nothing)")
    args = ap.parse_args()
    args.baseline_label += [f"baseline {i + 1}" for i in
                            range(len(args.baseline_label), len(args.baseline))]
    if args.smoke:
        args.runs, args.sizes, args.baseline, args.baseline_label = 1, "19", [], []
    sizes = [int(s) for s in args.sizes.split(",")]
    assert all(s % 19 == 0 for s in sizes) and sizes == sorted(sizes), sizes
    if args.nice:
        os.nice(args.nice)
    tmas, peer, py = contenders(args)
    screens = load_screens()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-cold-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE", "TMA_CONFIG",
                        "VIRTUAL_ENV", "PYTHONPATH")}
    env.update(HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "config"), LANG="C.UTF-8")
    (work / "home").mkdir()
    env_of = {}
    for i, label in enumerate(tmas):
        # each tree its own cache and runtime dir: two trees calling themselves 0.1.0
        # would otherwise rewrite one cache in turn
        rt = work / f"run-{i}"
        rt.mkdir(mode=0o700)
        env_of[label] = dict(env, XDG_CACHE_HOME=str(work / f"cache-{i}"),
                             XDG_RUNTIME_DIR=str(rt))
    git_checkout(work / "repo")
    here = os.getcwd()
    os.chdir(work / "repo")  # the tmux server and its panes start here
    tmux = Tmux(work, env)
    cold = Cold(tmux, work)
    res: dict = {"runs": args.runs, "sizes": {}, "right": {}}
    try:
        for n in sizes:
            while len(tmux.panes) < n:
                for s in screens:
                    tmux.add(s)
            tmux.draw_all()
            sock, spid = tmux("display-message", "-p", "#{socket_path} #{pid}").split()
            peer_env = dict(env, TMUX=f"{sock},{spid},0")  # as inside the server's session
            for label, exe in tmas.items():  # warm each tree's caches; learn its options
                subprocess.run([exe, "--socket-name", tmux.name, "ls", "--json"],
                               env=env_of[label], capture_output=True, check=True)
                cold.learn()
            cold.write()
            if n == sizes[0]:
                res["right"] = check(tmas, tmux, cold, env_of, 19)
            cases = {label: ([exe, "--socket-name", tmux.name, "ls", "--json"],
                             env_of[label], None, cold) for label, exe in tmas.items()}
            cases["claude-tmux-status"] = ([peer, *map(str, range(n))], peer_env, None, None)
            cases["bare"] = ([py, "-c", "pass"], env, None, None)
            res["sizes"][n] = interleaved(args.runs, cases)
        res["versions"] = [sys.version.split()[0],
                           tmux("display-message", "-p", "#{version}").strip()]
    finally:
        os.chdir(here)
        tmux.kill()
        shutil.rmtree(work, ignore_errors=True)
    report(res, list(tmas))
    if args.json:
        Path(args.json).write_text(json.dumps(res))
    return 0


def report(res: dict, labels: list[str]) -> None:
    py_v, tmux_v = res["versions"]
    print(f"Python {py_v}, tmux {tmux_v}; {res['runs']} interleaved rounds; "
          f"{time.strftime('%Y-%m-%d')}; load average {os.getloadavg()[0]:.1f} at the end.\n")
    print("| agent panes | " + " | ".join(f"`tma ls --json` {x}" for x in labels)
          + " | claude-tmux-status | bare `python -c pass` |")
    print("|---|" + "---|" * (len(labels) + 2))
    for n, case in res["sizes"].items():
        cells = [f"{statistics.median(case[k]):.1f} ms (min {min(case[k]):.1f})"
                 for k in [*labels, "claude-tmux-status", "bare"]]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("\n| ratio (medians; minima in brackets) | agent panes | ratio | goal | met |")
    print("|---|---|---|---|---|")
    for n, case in res["sizes"].items():
        t, tl = statistics.median(case["this tree"]), min(case["this tree"])
        for other in ["claude-tmux-status", *labels[1:]]:
            o, ol = statistics.median(case[other]), min(case[other])
            goal = GOALS.get(("peer", n)) if other == "claude-tmux-status" else 1.0
            met = "" if goal is None else ("yes" if t / o <= goal else "**no**")
            print(f"| this tree / {other} | {n} | {t / o:.2f}× ({tl / ol:.2f}×) | "
                  f"{'≤ ' + str(goal) + '×' if goal else '—'} | {met} |")
    print("\nCold `ls --json` verdicts on the 19 screens (state and detail right / screens; "
          "rows):", ", ".join(f"{x} {r}/{m} ({rows} rows)"
                              for x, (r, m, rows) in res["right"].items()))


if __name__ == "__main__":
    raise SystemExit(main())

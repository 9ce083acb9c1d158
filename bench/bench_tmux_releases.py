#!/usr/bin/env python3
"""tma on every tmux release of the matrix: right verdicts and the status line's cost.

  python bench/bench_tmux_releases.py [--runs 21] [--nice -10]
                                      [--baseline DIR --baseline-label NAME]
  python bench/bench_tmux_releases.py --smoke       # CI: the system tmux, one round

Run by hand; the results go to bench/RESULTS.md. For each build TMA_TMUX_MATRIX names
(else tools/tmux_matrix.sh builds them), one private tmux server of that build holds the
38 agent panes bench_peer.py uses (19 captured screens of five real agents, twice), and,
in interleaved rounds, whole processes are timed (medians and minima):

  1. a cold `tma status` (every stamp removed first: every pane captured and stamped);
  2. `tma status` over fresh stamps (an untimed cold `tma ls` just before);
  3. a bare `python -c pass` in the same interpreter.

After the rounds one cold `tma ls --json` is checked against the captures'
expectations: how many of the 38 panes it lists, and with the right state and detail.
With --baseline, another checkout (say, main before a change) is installed into its own
virtualenv and measured in the same rounds: the figures of the release-dependent read
before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from bench_peer import Tmux, add_smoke, interleaved, load_screens, prepare_venv, run, smoke_tools

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--smoke"]]

ROOT = Path(__file__).resolve().parents[1]


def matrix(smoke: bool = False) -> list[tuple[str, str]]:
    if smoke:  # one release, the one on PATH: nothing to build
        return [("system", shutil.which("tmux") or "tmux")]
    raw = os.environ.get("TMA_TMUX_MATRIX") or run([str(ROOT / "tools" / "tmux_matrix.sh")]
                                                   ).stdout
    return [tuple(e.split("=", 1)) for e in raw.split()]  # type: ignore[misc]


def listed_right(tma: str, tmux: Tmux, env: dict) -> tuple[int, int]:
    """(panes listed, panes listed with the expected state and detail) by one cold ls."""
    doc = json.loads(run([tma, "--socket-name", tmux.name, "ls", "--json"], env=env).stdout)
    rows = {r["pane"]: r for r in doc["agents"]}
    right = sum(1 for pane, s in tmux.panes if pane in rows
                and (rows[pane]["state"], rows[pane]["detail"] or "") ==
                (s["state"], "" if s["detail"] in ("", "-") else s["detail"]))
    return len(rows), right


def one_release(version: str, binary: str, args, tma: str, btma: str | None, py: Path,
                screens: list[dict]) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"tma-bench-rel-{version}-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE", "TMA_CONFIG")}
    env.update(HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "config"),
               XDG_CACHE_HOME=str(work / "cache"), LANG="C.UTF-8", TMA_TMUX_BIN=binary,
               PATH=os.path.dirname(binary) + os.pathsep + os.environ["PATH"])
    (work / "home").mkdir()
    benv = dict(env, XDG_CACHE_HOME=str(work / "cache-baseline"))
    tmux = Tmux(work, env)
    out: dict = {"version": version}
    try:
        for s in screens + screens:
            tmux.add(s)
        tmux.draw_all()

        def reset() -> None:
            path = work / "reset.tmux"
            path.write_text("\n".join(tmux.reset_lines()) + "\n")
            tmux("source-file", str(path))

        def fresh(which: str) -> None:
            reset()
            run([which, "--socket-name", tmux.name, "ls"], env=benv if which == btma else env)

        cases = {"cold": ([tma, "--socket-name", tmux.name, "status"], env, None, reset),
                 "fresh": ([tma, "--socket-name", tmux.name, "status"], env, None,
                           lambda: fresh(tma)),
                 "bare": ([str(py), "-c", "pass"], env, None, None)}
        if btma is not None:
            cases["base_cold"] = ([btma, "--socket-name", tmux.name, "status"], benv, None,
                                  reset)
            cases["base_fresh"] = ([btma, "--socket-name", tmux.name, "status"], benv, None,
                                   lambda: fresh(btma))
        run([tma, "--socket-name", tmux.name, "ls"], env=env)  # warm the caches
        if btma is not None:
            run([btma, "--socket-name", tmux.name, "ls"], env=benv)
        out["times"] = interleaved(args.runs, cases)
        reset()
        out["listed"], out["right"] = listed_right(tma, tmux, env)
        if btma is not None:
            reset()
            out["base_listed"], out["base_right"] = listed_right(btma, tmux, benv)
        out["reported"] = run([binary, "-V"]).stdout.strip()
    finally:
        tmux.kill()
        shutil.rmtree(work, ignore_errors=True)
    return out


def fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} ms (min {min(xs):.1f})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--venv", default=str(Path.home() / ".cache" / "tma-bench" / "venv"))
    ap.add_argument("--baseline")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--json", help="also write the raw timings here")
    add_smoke(ap)
    args = ap.parse_args()
    if args.nice:
        os.nice(args.nice)
    if args.smoke:
        args.runs = 1
        py, tma, _peer = smoke_tools()
    else:
        py = prepare_venv(Path(args.venv).expanduser(), ROOT)
        tma = str(py.parent / "tma")
    btma = None
    if args.baseline:
        bpy = prepare_venv(Path(args.venv + "-baseline").expanduser(), Path(args.baseline))
        btma = str(bpy.parent / "tma")
    screens = load_screens()
    results = [one_release(v, b, args, tma, btma, py, screens) for v, b in matrix(args.smoke)]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    n = 2 * len(screens)
    head = f"| tmux | listed, right (of {n}) | cold `tma status` | fresh `tma status` | bare python |"
    if btma:
        head += f" {args.baseline_label}: listed, right | cold | fresh |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in results:
        t = r["times"]
        row = (f"| {r['reported']} | {r['listed']}, {r['right']} | {fmt(t['cold'])} | "
               f"{fmt(t['fresh'])} | {fmt(t['bare'])} |")
        if btma:
            row += (f" {r['base_listed']}, {r['base_right']} | {fmt(t['base_cold'])} | "
                    f"{fmt(t['base_fresh'])} |")
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`bench_status_line.py --time` (not a script: test_bench_scripts skips `_` modules): one
`#(tma status)` job with no daemon over fresh stamps, tma as pipx installs it, against a
bare interpreter, and where its time goes. The module note of bench_status_line.py says
what each measure is."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _pipx
from bench_cold_ls import Cold, git_checkout
from bench_imports import importtimes
from bench_peer import Tmux, interleaved, load_screens, smoke_tools


def _trees(args, root: Path) -> dict[str, str]:
    """label -> the tree's console script."""
    if args.smoke:
        return {"this tree": smoke_tools()[1]}
    home = Path(args.home).expanduser()
    how = _pipx.pipx_command(home)
    labels = args.baseline_label + [f"baseline {i + 1}" for i in
                                    range(len(args.baseline_label), len(args.baseline))]
    out = {}
    for label, path in [("this tree", root), *zip(labels, map(Path, args.baseline),
                                                  strict=True)]:
        slug = "".join(c if c.isalnum() else "-" for c in label)
        out[label] = str(_pipx.install(str(path.resolve()), home / f"tma-{slug}", "tma", how))
    return out


def _interpreter(script: str) -> tuple[str, list[str]]:
    """The interpreter a console script's shebang names and the flags it passes (pip's
    script is `#!<venv>/bin/python` with or without flags; the smoke's is a shell)."""
    first = Path(script).read_text(encoding="utf-8").split("\n", 1)[0]
    words = first[2:].split()
    if Path(words[0]).name.startswith("python"):
        return words[0], words[1:]
    return sys.executable, []


def _noop_wrapper(script: str, where: Path) -> Path | None:
    """A copy of pip's console script whose import of the entry point is a no-op: what
    the script costs on its own (its file read and compiled, sys imported)."""
    text = Path(script).read_text(encoding="utf-8")
    done = re.sub(r"(?m)^from \S+ import (\w+)$", r"\1 = lambda: 0", text, count=1)
    if done == text:
        return None
    where.write_text(done)
    where.chmod(0o755)
    return where


def _site_ms(py: str, flags: list[str], env: dict) -> tuple[float, float]:
    """(what `site` takes of a bare start, the whole start's imports), -X importtime,
    median of 9."""
    site, total = [], []
    for _ in range(9):
        res = subprocess.run([py, *flags, "-X", "importtime", "-c", "pass"], env=env,
                             capture_output=True, text=True)
        rows = importtimes(res.stderr)
        site.append(next((c for n, _s, c in rows if n == "site"), 0) / 1000)
        total.append(sum(s for _n, s, _c in rows) / 1000)
    return statistics.median(site), statistics.median(total)


def _status_modules(py: str, flags: list[str], argv: list[str], env: dict) -> list[str]:
    """The modules a status run imports after the interpreter's own start (in order)."""
    start = {n for n, _s, _c in importtimes(subprocess.run(
        [py, *flags, "-X", "importtime", "-c", "pass"], env=env, capture_output=True,
        text=True).stderr)}
    res = subprocess.run([py, *flags, "-X", "importtime", *argv], env=env,
                         capture_output=True, text=True)
    return [n for n, _s, _c in importtimes(res.stderr) if n not in start]


def timed(args, root: Path) -> int:
    if args.smoke:
        args.runs, args.status_panes, args.baseline, args.baseline_label = 1, 2, [], []
    if args.nice:
        os.nice(args.nice)
    trees = _trees(args, root)
    screens = load_screens()
    work = Path(tempfile.mkdtemp(prefix="tma-bench-status-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE", "TMA_CONFIG",
                        "VIRTUAL_ENV", "PYTHONPATH")}
    env.update(HOME=str(work / "home"), XDG_CONFIG_HOME=str(work / "config"), LANG="C.UTF-8")
    (work / "home").mkdir()
    env_of = {}
    for i, label in enumerate(trees):
        rt = work / f"run-{i}"  # no daemon answers here: each tree's own runtime dir
        rt.mkdir(mode=0o700)
        env_of[label] = dict(env, XDG_CACHE_HOME=str(work / f"cache-{i}"),
                             XDG_RUNTIME_DIR=str(rt))
    git_checkout(work / "repo")
    here = os.getcwd()
    os.chdir(work / "repo")
    tmux = Tmux(work, env)
    cold = Cold(tmux, work)
    res: dict = {}
    try:
        while len(tmux.panes) < args.status_panes:
            for s in screens[:args.status_panes - len(tmux.panes)]:
                tmux.add(s)
        tmux.draw_all()
        for label, exe in trees.items():
            subprocess.run([exe, "--socket-name", tmux.name, "ls"], env=env_of[label],
                           capture_output=True, check=True)
            cold.learn()
        cold.write()
        cases: dict = {}
        facts: dict = {}
        for label, exe in trees.items():
            base = [exe, "--socket-name", tmux.name]
            tenv = env_of[label]

            def refresh(base=base, tenv=tenv) -> None:
                # every stamp afresh: a stale pane whose screen stayed quiet would
                # otherwise keep its old stamp (never fresh again)
                cold()
                subprocess.run(base + ["ls"], env=tenv, capture_output=True)

            subprocess.run(base + ["status"], env=tenv, capture_output=True)  # (its .gen)
            refresh()
            check = subprocess.run(base + ["--debug-timing", "status"], env=tenv,
                                   capture_output=True, text=True)
            assert f"{args.status_panes} consumed, 0 captures" in check.stderr, check.stderr
            if label == "this tree":
                def kept(base=base, tenv=tenv, refresh=refresh) -> None:
                    # afresh, then one status run that keeps its answer for the timed one
                    refresh()
                    subprocess.run(base + ["status"], env=tenv, capture_output=True)

                kept()
                stood = subprocess.run(base + ["--debug-timing", "status"], env=tenv,
                                       capture_output=True, text=True)
                assert "the last answer stands" in stood.stderr, stood.stderr
                cases[f"{label}: answer stands"] = (base + ["status"], tenv, None, kept)
            py, flags = _interpreter(exe)
            refresh()
            mods = _status_modules(py, flags, base + ["status"], tenv)
            facts[label] = {"line": check.stderr.strip().splitlines()[-1], "modules": mods,
                            "py": py, "flags": flags}
            cases[label] = (base + ["status"], tenv, None, refresh)
            code = f"for m in {mods!r}:\n    __import__(m)\nimport os\nos._exit(0)\n"
            cases[f"{label}: imports"] = ([py, *flags, "-c", code], tenv, None, None)
            wrapper = _noop_wrapper(exe, work / f"wrapper-{len(facts)}")
            if wrapper is not None:
                cases[f"{label}: wrapper"] = ([str(wrapper)], tenv, None, None)
        first = facts["this tree"]
        py, flags = first["py"], first["flags"]
        cases["bare"] = ([py, "-c", "pass"], env, None, None)
        if flags:
            cases["bare " + " ".join(flags)] = ([py, *flags, "-c", "pass"], env, None, None)
        tm = ["tmux", "-u", "-L", tmux.name]
        listing = subprocess.run([py, "-c", "from tma.tmux import read\n"
                                  "print('\\x1e'.join(read.Listing(lean=True).args()))"],
                                 env=env_of["this tree"], capture_output=True, text=True,
                                 check=True).stdout.rstrip("\n").split("\x1e")
        cases["tmux round trip"] = (tm + ["display-message", "-p", "x"], env, None, None)
        cases["tmux listing as status sends it"] = (tm + listing, env, None, None)
        res = interleaved(args.runs, cases)
        res["facts"] = facts
        res["site"] = _site_ms(py, flags, env)
        site_dir = subprocess.run([py, "-c", "import sysconfig; "
                                   "print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, env=env).stdout.strip()
        res["pth"] = sorted(p.name for p in Path(site_dir).glob("*.pth"))
        res["versions"] = (sys.version.split()[0],
                           tmux("display-message", "-p", "#{version}").strip())
    finally:
        os.chdir(here)
        tmux.kill()
        shutil.rmtree(work, ignore_errors=True)
    report(args, res, list(trees))
    return 0


def report(args, res: dict, labels: list[str]) -> None:
    bare = statistics.median(res["bare"])
    bare_min = min(res["bare"])
    py_v, tmux_v = res["versions"]
    print(f"## `tma status`, no daemon, {args.status_panes} agent panes, fresh stamps — "
          f"tma as pipx installs it\n")
    print(f"Python {py_v}, tmux {tmux_v}; {args.runs} interleaved rounds; "
          f"{time.strftime('%Y-%m-%d')}; load average {os.getloadavg()[0]:.1f} at the end. "
          "Medians (fastest run in brackets); / bare is the ratio of the medians.\n")
    print("| measure | median ms | / bare |")
    print("|---|---|---|")

    def row(name: str, key: str) -> None:
        xs = res[key]
        print(f"| {name} | {statistics.median(xs):.1f} ({min(xs):.1f}) | "
              f"{statistics.median(xs) / bare:.2f}× |")

    row("bare `python -c pass` (the venv's interpreter)", "bare")
    for key in res:
        if key.startswith("bare ") and isinstance(res[key], list):
            row(f"`python {key[5:]} -c pass` (the console script's flags)", key)
    for label in labels:
        f = res["facts"][label]
        row(f"`tma status` — {label}", label)
        if f"{label}: answer stands" in res:
            row(f"`tma status`, the last answer standing — {label}", f"{label}: answer stands")
        if f"{label}: wrapper" in res:
            row(f"  pip's console script, entry point a no-op — {label}", f"{label}: wrapper")
        row(f"  its {len(f['modules'])} imports alone, no teardown — {label}",
            f"{label}: imports")
    row("one tmux client round trip", "tmux round trip")
    row("the pane listing as `tma status` sends it", "tmux listing as status sends it")
    for label in labels:
        xs = res[label]
        print(f"\n{label}: `tma status` {statistics.median(xs) / bare:.2f}× a bare start "
              f"(minima {min(xs) / bare_min:.2f}×; goal ≤ 1.5×); its cycle: "
              f"`{res['facts'][label]['line']}`")
        if f"{label}: answer stands" in res:
            xs = res[f"{label}: answer stands"]
            print(f"{label}: with the last answer standing (no tmux spawn) "
                  f"{statistics.median(xs) / bare:.2f}× (minima {min(xs) / bare_min:.2f}×)")
        tma_mods = [m for m in res["facts"][label]["modules"] if m.split(".")[0] == "tma"]
        others = [m for m in res["facts"][label]["modules"] if m.split(".")[0] != "tma"]
        print(f"{label}: imports {len(tma_mods)} tma modules and {', '.join(others) or 'nothing else'}")
    site, total = res["site"]
    print(f"\nA bare start's imports under -X importtime: {total:.1f} ms, of which `site` "
          f"{site:.1f} ms (cumulative); the venv's .pth files: {', '.join(res['pth']) or 'none'}.")

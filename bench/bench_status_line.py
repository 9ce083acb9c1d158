#!/usr/bin/env python3
"""Processes the status line spawns, polling form against the daemon form (run by hand;
results go to bench/RESULTS.md).

  python bench/bench_status_line.py [--panes 10] [--secs 30] [--interval 1]

On a private tmux server (killed afterwards) with --panes fake agent panes and one real
client attached on a pseudo-terminal, the status line is redrawn every --interval
seconds for --secs seconds in each set-up:
  1. polling form: status-right `#(tma status)`;
  2. daemon form: the documented conditional that reads @tma_status_segment while a
     daemon keeps @tma_status_until ahead of the clock, `#(tma status)` otherwise
     (tma.install.tmux_status.daemon_status_right), with `tma daemon` running.
The `tma` that status-right names is a wrapper that appends a line to a file before
running tma, so every job tmux starts for the status line is counted (each job is
`sh -c` plus the wrapper's python: the figure below counts jobs). The daemon's own
work is reported beside it: its segment refreshes (one tmux spawn each) and writes.

  python bench/bench_status_line.py --time [--runs 61] [--status-panes 38] [--nice 0]
                                    [--home ~/.cache/tma-bench/pipx]
                                    [--baseline DIR --baseline-label NAME]...

What one `#(tma status)` job costs with no daemon (issue 8's goal: ≤ 1.5× a bare
interpreter), tma installed as a user's pipx installs it (bench/_pipx.py: this checkout
and each --baseline, each in its own venv, run through pip's console script by its
absolute path). One private tmux server holds --status-panes fake agent panes drawn
with the 19 captured screens (bench_peer); before every timed run that tree's stamps
are dropped and an untimed `tma ls` stamps every pane afresh, so each `tma status`
consumes fresh stamps (checked: "N consumed, 0 captures"): the first status run after
a write, which asks tmux. This tree is also timed with its last answer standing
(tma.runtime.status_memo: the refresh, then one untimed `tma status` that keeps its
answer; checked: "the last answer stands"), as a status line's next run finds it while
nothing changed. In interleaved rounds, medians and minima of `tma status` and of its
parts, each a whole process:
  bare       the venv's `python -c pass` (the yardstick);
  -E         the same with the flags pip's console script passes its interpreter;
  wrapper    pip's console script itself, its `from tma… import entry` a no-op;
  imports    the interpreter importing the modules that status run imports, then
             leaving without teardown as `tma status` does;
  tmux       one tmux client round trip (`display-message -p x`), and the pane
             listing exactly as `tma status` sends it (the server's expansion of
             every pane line included).
Reported beside them: the tmux spawns the run makes (the cycle's own count), the
modules it imports, what `site` takes of the bare start and the venv's .pth files.
"""

from __future__ import annotations

import argparse
import os
import pty
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cockpit import drain
from bench_tmux_tier import MANIFEST, precompile, setup, tmux

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tma.install import tmux_status  # noqa: E402

# The smallest run of each kind (argv lists): CI runs every one
# (tests/integration/test_bench_scripts.py), so the script cannot rot unseen.
SMOKE = [["--panes", "1", "--secs", "1", "--interval", "1"], ["--time", "--smoke"]]


def attach(name: str, env: dict) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvpe("tmux", ["tmux", "-u", "-L", name, "-f", "/dev/null", "attach", "-t", "b"],
                       dict(env, TERM="xterm-256color"))
        finally:
            os._exit(127)
    return pid, fd


def daemon_status(runtime: Path) -> dict | None:
    """The daemon's status document, asked for as tma asks (daemon_files.read_status)."""
    from tma.runtime import daemon_files

    socks = list((runtime / "tma").glob("*.sock")) if (runtime / "tma").exists() else []
    return daemon_files.read_status(str(socks[0])) if socks else None


def jobs(counter: Path) -> int:
    return len(counter.read_text().splitlines())


def run(args) -> dict:
    with tempfile.TemporaryDirectory(prefix="tma-bench-") as tmp:
        work = Path(tmp)
        name = f"tma-bench-sl-{os.getpid()}"
        mdir = work / "agents"
        mdir.mkdir()
        (mdir / "benchagent.toml").write_text(MANIFEST)
        runtime = work / "rt"
        runtime.mkdir(mode=0o700)
        (work / "config.toml").write_text("")
        env = dict(os.environ, TMA_CONFIG=str(work / "config.toml"),
                   XDG_RUNTIME_DIR=str(runtime))
        env.pop("TMUX", None)
        counter = work / "jobs"
        counter.write_text("")
        wrapper = work / "tma-counted"
        wrapper.write_text(f"#!/bin/sh\necho x >> {counter}\nexec {sys.executable} -m tma "
                           f"--socket-name {name} --manifest-dir {mdir} \"$@\"\n")
        wrapper.chmod(0o755)
        daemon = None
        client = None
        try:
            setup(name, args.panes, work, env)
            subprocess.run([str(wrapper), "ls"], env=env, capture_output=True, check=True)
            tmux(name, "set-option", "-g", "status-interval", str(args.interval), env=env)
            tmux(name, "set-option", "-g", "status-right-length", "200", env=env)
            client = attach(name, env)
            out = {}
            # 1. the polling form
            tmux(name, "set-option", "-g", "status-right", f"#({wrapper} status)", env=env)
            drain(client[1], 2)
            n0 = jobs(counter)
            drain(client[1], args.secs)
            out["poll"] = jobs(counter) - n0
            # 2. the daemon form
            daemon = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", name,
                                       "--manifest-dir", str(mdir), "daemon"], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                st = daemon_status(runtime)
                if st is not None and st.get("segment"):
                    break
                time.sleep(0.05)
            tmux(name, "set-option", "-g", "status-right",
                 tmux_status.daemon_status_right(str(wrapper)), env=env)
            drain(client[1], 2)
            n0, st0 = jobs(counter), daemon_status(runtime)
            drain(client[1], args.secs)
            st1 = daemon_status(runtime)
            out["daemon"] = jobs(counter) - n0
            out["refreshes"] = st1["segment_refreshes"] - st0["segment_refreshes"]
            out["writes"] = st1["segment_writes"] - st0["segment_writes"]
            out["segment"] = st1["segment"]
            out["shown"] = tmux(name, "display-message", "-p", "#{T:status-right}",
                                env=env).strip()
            return out
        finally:
            if daemon is not None:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=10)
            if client is not None:
                os.kill(client[0], signal.SIGTERM)
                os.waitpid(client[0], 0)
                os.close(client[1])
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--panes", type=int, default=10)
    ap.add_argument("--secs", type=int, default=30)
    ap.add_argument("--interval", type=int, default=1)
    ap.add_argument("--time", action="store_true",
                    help="time one `tma status` job with no daemon and its parts, tma as "
                         "pipx installs it (see the module's note)")
    ap.add_argument("--runs", type=int, default=61, help="--time: interleaved rounds")
    ap.add_argument("--status-panes", type=int, default=38, help="--time: agent panes")
    ap.add_argument("--home", default=str(Path.home() / ".cache" / "tma-bench" / "pipx"),
                    help="--time: where the pipx homes live (one per tree)")
    ap.add_argument("--baseline", action="append", default=[],
                    help="--time: another checkout timed in the same rounds (repeatable)")
    ap.add_argument("--baseline-label", action="append", default=[])
    ap.add_argument("--nice", type=int, default=0,
                    help="--time: run at this niceness (-10 keeps other load off)")
    ap.add_argument("--smoke", action="store_true",
                    help="--time as CI runs it: one round over 2 panes, this interpreter's "
                         "tma, nothing installed (the figures mean nothing)")
    args = ap.parse_args()
    if args.time:
        from _status_time import timed

        return timed(args, ROOT)
    precompile()
    r = run(args)
    redraws = args.secs / args.interval
    print(f"## Status line, {args.panes} agent panes, status-interval {args.interval}, "
          f"{args.secs} s per set-up, one attached client\n")
    print("| set-up | `tma status` jobs | jobs per status-interval | daemon tmux spawns "
          "(segment refreshes + writes) |")
    print("|---|---|---|---|")
    print(f"| polling `#(tma status)` | {r['poll']} | {r['poll'] / redraws:.2f} | – |")
    print(f"| daemon form | {r['daemon']} | {r['daemon'] / redraws:.2f} | "
          f"{r['refreshes']} + {r['writes']} ({(r['refreshes'] + r['writes']) / args.secs:.2f}"
          f"/s) |")
    print(f"\nsegment: {r['segment']!r}; status-right expands to: {r['shown']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

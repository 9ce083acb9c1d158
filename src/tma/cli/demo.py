"""`tma demo`: scripted fake agents on a private tmux server, watched through the real CLI.

The demo starts its own server (`tmux -L tma-demo-<pid> -f /dev/null`), never the
user's. Each fake agent is a real process named like the agent (a symlink called
`claude`, `codex`, … pointing at this Python, running `tma/demo_agent.py`) that draws
that agent's chrome and walks idle → working → blocked → idle. The demo polls with
`tma ls` (a child process, like a status line would) and prints the listing and
`tma status --format plain` whenever the set of verdicts changes. Every verdict it
prints was read back from the stamps the poll cycle wrote into the panes.

Afterwards it kills the server and every process it started and removes its temp dir;
`--keep` leaves the server running (agents looping their scripts) and prints the stop
command instead.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tma.cli import common, spec
from tma.ui import table

SCRIPT_SECONDS = 25.0
WIDTH, HEIGHT = 201, 61  # four tiled panes of 100x30
# (pane label, agent program name, launcher): codex runs the way npm installs it, a
# `node` launcher with the native `codex` binary as its child.
AGENTS = (("claude", "claude", None), ("codex", "codex", "node"),
          ("opencode", "opencode", None), ("pi", "pi", None))


class Stop(Exception):
    """SIGTERM / SIGHUP: stop like Ctrl-C."""


def _raise_stop(signum, frame):
    raise Stop()


def _agent_script() -> str:
    import tma

    return os.path.join(os.path.dirname(os.path.abspath(tma.__file__)), "demo_agent.py")


def _width() -> int:
    return shutil.get_terminal_size((120, 40)).columns


def _out(text: str = "") -> None:
    """One line, folded at spaces to the terminal's width (the indent kept on each
    piece), so nothing wraps mid-word at 80 or 40 columns."""
    width = _width()
    if len(text) > width:
        import textwrap

        indent = " " * (len(text) - len(text.lstrip(" ")))
        text = textwrap.fill(text.strip(), width, initial_indent=indent,
                             subsequent_indent=indent + "  ", break_on_hyphens=False)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class Demo:
    def __init__(self, session: common.Session, seconds: float, keep: bool):
        from tma.tmux.adapter import Server, resolve_bin

        self.g = session.g
        self.seconds = seconds
        self.keep = keep
        self.scale = max(seconds / SCRIPT_SECONDS, 0.3)
        self.name = f"tma-demo-{os.getpid()}"
        self.server = Server(resolve_bin(), socket_name=self.name, timeout=10.0)
        self.tmp = ""
        self.pid_dir = ""
        self.pids: set[int] = set()
        self.seen: set[str] = set()
        self.t0 = time.monotonic()
        self.palette = session.config.status

    # ------------------------------------------------------------ setup
    def tma_argv(self, *args: str) -> list[str]:
        argv = [sys.executable, "-m", "tma", "--socket-name", self.name]
        if self.g.manifest_dir:
            argv += ["--manifest-dir", self.g.manifest_dir]
        if self.g.config:
            argv += ["--config", self.g.config]
        return argv + list(args)

    def setup(self) -> None:
        from tma.tmux import demo_server

        self.tmp = tempfile.mkdtemp(prefix=f"{self.name}-")
        bin_dir = os.path.join(self.tmp, "bin")
        self.pid_dir = os.path.join(self.tmp, "pids")
        os.mkdir(bin_dir)
        os.mkdir(self.pid_dir)
        shell = shutil.which("sh") or "/bin/sh"
        script = _agent_script()
        max_seconds = 8 * 3600 if self.keep else self.seconds + 60
        target = None
        for label, program, launcher in AGENTS:
            link = os.path.join(bin_dir, program)
            os.symlink(sys.executable, link)
            cwd = os.path.join(self.tmp, f"work-{label}")
            os.mkdir(cwd)
            argv = [link, script, program, "--scale", f"{self.scale:.3f}", "--pid-dir",
                    self.pid_dir, "--cwd", cwd, "--max-seconds", str(max_seconds)]
            if self.keep:
                argv.append("--loop")
            if launcher:
                outer = os.path.join(bin_dir, launcher)
                if not os.path.exists(outer):
                    os.symlink(shell, outer)
                # `node -c '<codex …>; exit $?'`: a shell named node that waits on codex
                argv = [outer, "-c", shlex.join(argv) + "; exit $?"]
            if target is None:
                pane, pid = demo_server.start(self.server, "demo", argv, cwd=cwd, width=WIDTH,
                                              height=HEIGHT, window="agents")
                target = pane
            else:
                pane, pid = demo_server.split(self.server, target, argv, cwd=cwd)
            if pid > 0:
                self.pids.add(pid)
        status = shlex.join(self.tma_argv("status"))
        demo_server.set_global(self.server, {
            "status-interval": "1",
            "status-left": "[tma demo] ",
            "status-left-length": "20",
            "status-right": f"#({status}) %H:%M",
            "status-right-length": "80",
            "pane-border-status": "top",
            "pane-border-format": " #{pane_index} #{pane_current_command} "
                                  "#{?@agent_state,[#{@agent_state}],} ",
        })

    # ------------------------------------------------------------ polling
    def elapsed(self) -> str:
        return f"[{time.monotonic() - self.t0:5.1f}s]"

    def run_tma(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.tma_argv(*args), capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)

    def poll(self, last: tuple | None) -> tuple | None:
        res = self.run_tma("ls", "--json")
        if res.returncode != 0:
            _out(f"{self.elapsed()} tma ls failed ({res.returncode}): {res.stderr.strip()}")
            return last
        import json

        rows = json.loads(res.stdout)["agents"]
        key = tuple(sorted((r["pane"], r["state"], r["detail"] or "", r["attention"])
                           for r in rows))
        if key == last:
            return last
        for r in rows:
            self.seen.add(table.display_class(r))
        _out(f"{self.elapsed()} $ tma ls")
        for line in table.lines(rows, _width(), common.now_ms(), self.palette) or [
                "  (no agent panes yet)"]:
            _out(line)
        st = self.run_tma("status", "--format", "plain")
        _out(f"{self.elapsed()} $ tma status --format plain")
        _out("  " + (st.stdout.strip() or "(nothing)"))
        _out()
        return key

    def watch(self) -> None:
        deadline = self.t0 + self.seconds
        last = None
        while time.monotonic() < deadline:
            # one poll just after each second turns: the cycle produces at most once a second
            now = time.time()
            time.sleep(min(1.0 - (now % 1.0) + 0.05, max(deadline - time.monotonic(), 0)))
            if time.monotonic() >= deadline:
                break
            last = self.poll(last)

    # ------------------------------------------------------------ teardown
    def teardown(self) -> None:
        from tma.tmux import demo_server

        demo_server.kill(self.server)
        pids = set(self.pids)
        if self.pid_dir:
            try:
                pids.update(int(n) for n in os.listdir(self.pid_dir) if n.isdigit())
            except OSError:
                pass
        left = _reap(pids, self.tmp)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
        gone = "still running: " + " ".join(map(str, sorted(left))) if left else "all gone"
        _out(f"stopped: server {self.name} killed, {len(pids)} agent processes {gone}, "
             f"temp dir removed")


def _mine(pid: int, tmp: str) -> bool:
    """Is pid still one of ours (not a recycled pid)? Checked by command line where /proc has it."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return tmp.encode() in fh.read()
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # no procfs: trust the pid
    except OSError:
        return False


def _alive(pid: int) -> bool:
    from tma.runtime.procs import alive

    return alive(pid)


def _reap(pids: set[int], tmp: str) -> set[int]:
    """Wait for the agents to die with their server; TERM then KILL stragglers."""
    for sig, wait in ((None, 2.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
        live = {p for p in pids if _alive(p) and (not tmp or _mine(p, tmp))}
        if not live:
            return set()
        if sig is not None:
            for p in live:
                try:
                    os.kill(p, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(_alive(p) for p in live):
            time.sleep(0.05)
    return {p for p in pids if _alive(p) and (not tmp or _mine(p, tmp))}


def main(session: common.Session, argv: list[str]) -> int:
    _, args = spec.parse("demo", argv, session)
    g = session.g
    if g.socket_name or g.socket_path:
        raise common.UsageError("the demo runs its own private server; "
                                "--socket-name/--socket-path do not apply")
    if args.seconds <= 0:
        raise common.UsageError("--seconds must be positive")
    from tma.tmux import demo_server
    from tma.tmux.adapter import resolve_bin

    if shutil.which(resolve_bin()) is None:
        common.err("tma: the demo needs tmux (3.2 or newer) on PATH")
        return common.FAIL
    demo = Demo(session, args.seconds, args.keep)
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    interrupted = False
    try:
        try:
            demo.setup()
        except Exception as exc:  # tmux refused: report it and clean up what exists
            common.err(f"tma demo: could not start the demo server: {exc}")
            demo.keep = False
            return common.FAIL
        attach = demo_server.attach_command(demo.server)
        _out(f"tma demo: {len(AGENTS)} scripted fake agents (claude, codex, opencode, pi) on a "
             f"private tmux server")
        _out(f"  watch them:  {attach}   (a key in a blocked pane answers its dialog)")
        _out(f"  stop:        Ctrl-C, or wait {args.seconds:g} s")
        _out("  every verdict below is read back from the stamps tma writes into the panes")
        _out()
        for line in table.legend(demo.palette):
            _out(line)
        _out()
        demo.t0 = time.monotonic()
        demo.watch()
    except (KeyboardInterrupt, Stop):
        interrupted = True
        _out()
        _out("interrupted")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C must not skip the cleanup
        try:
            if demo.keep and not interrupted:
                _out(f"left running (--keep): {demo_server.attach_command(demo.server)}")
                _out("  the agents loop their scripts; while you are attached the status line "
                     "runs `tma status` every second")
                _out(f"stop it with: {demo_server.stop_command(demo.server)}; rm -rf "
                     f"{shlex.quote(demo.tmp)}")
            else:
                demo.teardown()
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for s, h in old.items():
                signal.signal(s, h)
    seen = [s for s in ("blocked", "working", "done", "idle", "unknown") if s in demo.seen]
    if seen:
        _out("verdicts seen: " + ", ".join(seen))
    else:
        _out("no agent pane was recognised: are the bundled manifests installed? "
             "(`tma doctor` lists what loaded)")
    _out()
    _out("next: run `tma init` inside your own tmux to wire your agents and the status line,")
    _out("      then `tma ls` lists them (see README.md, \"Daily use\")")
    return 0

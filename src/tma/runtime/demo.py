"""The demo's engine: scripted fake agents on a private tmux server, polled through the
real CLI (`tma ls --json`, `tma status`, as children, the way a status line runs them).

The server is the demo's own (`tmux -L tma-demo-<pid> -f /dev/null`), never the
user's. Each fake agent is a real process named like the agent (a symlink called
`claude`, `codex`, … pointing at this Python, running `tma/demo_agent.py`). `teardown`
kills the server and every process the demo started and removes its temp dir.
Whatever the demo's tma processes cache or keep (this one, its `tma ls` children, the
status line's `tma status`) goes into that temp dir too, so the demo leaves nothing in
HOME. cli/demo.py is the command: it parses, prints the introduction and handles
signals.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import tma
from tma.runtime.procs import alive
from tma.tmux import demo_server
from tma.tmux.adapter import Server, resolve_bin
from tma.ui import table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tma.runtime.session import Session

SCRIPT_SECONDS = 25.0
WIDTH, HEIGHT = 201, 61  # four tiled panes of 100x30
# (pane label, agent program name, launcher): codex runs the way npm installs it, a
# `node` launcher with the native `codex` binary as its child.
AGENTS = (("claude", "claude", None), ("codex", "codex", "node"),
          ("opencode", "opencode", None), ("pi", "pi", None))
#: Each pane's border: the agent and its state as `tma ls` shows them (done is idle with
#: the attention mark), not the process tmux sees (`node` for codex) and the raw option.
BORDER_FORMAT = (" #{pane_index} #{?@agent_name,#{@agent_name},#{pane_current_command}}"
                 "#{?@agent_state, [#{?#{&&:#{==:#{@agent_state},idle},#{@agent_attention}},"
                 "done,#{@agent_state}}],} ")


class Stop(BaseException):
    """SIGTERM / SIGHUP: stop like Ctrl-C (and, like its KeyboardInterrupt, not an
    Exception: no handler of a step's failure takes it for one)."""


def _agent_script() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(tma.__file__)), "demo_agent.py")


class Demo:
    def __init__(self, session: Session, seconds: float, keep: bool,
                 say: Callable[..., None], width: Callable[[], int]):
        self.g = session.g
        self.seconds = seconds
        self.keep = keep
        self.scale = max(seconds / SCRIPT_SECONDS, 0.3)
        self.name = f"tma-demo-{os.getpid()}"
        self.server = Server(resolve_bin(), socket_name=self.name, timeout=10.0)
        self.tmp = tempfile.mkdtemp(prefix=f"{self.name}-")
        # before anything reads the config (which caches it): this process, its children
        # and the tmux server it starts (whose status jobs inherit its environment) cache
        # and keep state in the temp dir, and nothing of the demo's is left in HOME
        for var, sub in (("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state")):
            os.environ[var] = os.path.join(self.tmp, sub)
        self.pid_dir = ""
        self.pids: set[int] = set()
        self.seen: set[str] = set()
        self.t0 = time.monotonic()
        try:
            self.palette = session.config.status
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.say = say
        self.width = width

    # ------------------------------------------------------------ setup
    def tma_argv(self, *args: str) -> list[str]:
        argv = [sys.executable, "-m", "tma", "--socket-name", self.name]
        if self.g.manifest_dir:
            argv += ["--manifest-dir", self.g.manifest_dir]
        if self.g.config:
            argv += ["--config", self.g.config]
        return argv + list(args)

    def setup(self) -> None:
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
            "pane-border-format": BORDER_FORMAT,
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
            self.say(f"{self.elapsed()} tma ls failed ({res.returncode}): {res.stderr.strip()}")
            return last

        rows = json.loads(res.stdout)["agents"]
        key = tuple(sorted((r["pane"], r["state"], r["detail"] or "", r["attention"])
                           for r in rows))
        if key == last:
            return last
        for r in rows:
            self.seen.add(table.display_class(r))
        self.say(f"{self.elapsed()} $ tma ls")
        for line in table.lines(rows, self.width(), time.time_ns() // 1_000_000, self.palette) or [
                "  (no agent panes yet)"]:
            self.say(line)
        st = self.run_tma("status", "--format", "plain")
        self.say(f"{self.elapsed()} $ tma status --format plain")
        self.say("  " + (st.stdout.strip() or "(nothing)"))
        self.say()
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
        # the agents, counted as the introduction counts them; their processes apart
        # (codex runs under a node launcher, as npm installs it: one more than agents)
        self.say(f"stopped: server {self.name} killed, the {len(AGENTS)} agents {gone} "
                 f"({len(pids)} processes), temp dir removed")


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

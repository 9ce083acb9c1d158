"""The live suite's harness classes (the fixtures that build them are in conftest.py).

See conftest.py for the whole picture; this module holds the pieces a test imports:
the private tmux server, the screen/stamp monitor, the status-line ticker, the step
timing and the never-seen checks, and the results log.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tma
from tests.helpers import tmux_sockets
from tests.helpers.live import agents as agents_mod
from tests.helpers.live.fakellm import FakeLLM
from tma.tmux import frame

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

LIVE_CACHE = Path(os.environ.get("TMA_LIVE_CACHE") or Path.home() / ".cache" / "tma-live")
REQUIRE = bool(os.environ.get("TMA_REQUIRE_LIVE"))
RESULTS_DIR = Path(os.environ.get("TMA_LIVE_RESULTS") or LIVE_CACHE / "results")
RUN_ID = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"

# tma's design constants (defaults; the suite never changes them)
DWELL = 3.0
FRESHNESS = 3.0
POLL = 1.0
SAMPLE = 0.1  # monitor period

HOOKLESS_DEADLINE = FRESHNESS + POLL + 1.0
HOOKLESS_TURN_DEADLINE = DWELL + FRESHNESS + POLL + 1.0
HOOKED_DEADLINE = 1.0
HOOKED_TURN_DEADLINE = DWELL + 1.0
# the daemon tier (issue 9): blocked, working and an exit within 1.5 s of the screen; an
# idle composer within dwell + 1.5 s (working->idle is published only once the dwell is over)
DAEMON_DEADLINE = 1.5
DAEMON_IDLE_DEADLINE = DWELL + 1.5


# ---------------------------------------------------------------- prerequisites
def node_major() -> int | None:
    exe = shutil.which("node")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
    m = re.match(r"v(\d+)", out.strip())
    return int(m.group(1)) if m else None


def node_dir(minimum: int = 20) -> str | None:
    """The folder of a node >= minimum: the one on PATH, else $TMA_LIVE_NODE22 (a folder
    holding a newer node for the agents that need one, which .ci/run sets when the node on
    PATH is older; Qwen Code needs 22)."""
    major = node_major()
    exe = shutil.which("node")
    if exe is not None and major is not None and major >= minimum:
        return str(Path(exe).parent)
    extra = os.environ.get("TMA_LIVE_NODE22", "")
    if minimum <= 22 and extra and (Path(extra) / "node").exists():
        return extra
    return None


def tma_argv() -> list[str]:
    """The venv's console script when there is one (what a status line runs)."""
    script = Path(sys.executable).with_name("tma")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tma"]


def hook_tier_missing() -> str | None:
    """Why the hooked mode cannot run yet, or None when `install-hooks` and `event` exist."""
    import importlib.util

    from tma.cli import spec

    missing = []
    for cmd in ("install-hooks", "event"):
        command = spec.COMMANDS.get(cmd)
        module = command.module if command is not None else None
        if module is None or importlib.util.find_spec(f"tma.cli.{module}") is None:
            missing.append(f"tma {cmd}")
    if missing:
        return "hook tier not available yet (" + ", ".join(missing) + " missing)"
    return None


def port_listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------- the tmux server
class LiveServer:
    def __init__(self, root: Path, tmux_bin: str | None = None, label: str = "") -> None:
        self.root = root
        self.label = label  # "" on the tmux on PATH, else "@<version>" (the results' mode)
        self.name = tmux_sockets.server_name("live")
        self.token = self.name
        self.tmux_bin = tmux_bin or shutil.which("tmux") or "tmux"
        home = root / "tma-home"
        for d in (home, root / "tma-config", root / "tma-cache"):
            d.mkdir(parents=True, exist_ok=True)
        runtime = root / "tma-runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("TMUX", "TMUX_PANE", "TMA_SOCKET_PATH", "TMA_CONFIG")}
        # tma reads only defaults: its own config paths point at empty dirs (a config
        # named by TMA_CONFIG must exist, so none is named); a daemon's lock, socket and
        # log go to a runtime dir of the suite's own
        self.env.update(HOME=str(home), XDG_CONFIG_HOME=str(root / "tma-config"),
                        XDG_CACHE_HOME=str(root / "tma-cache"), XDG_RUNTIME_DIR=str(runtime),
                        LANG="C.UTF-8")
        # tma, and any bare `tmux` a hook runs, talk to this server's build
        self.env["TMA_TMUX_BIN"] = self.tmux_bin
        self.env["PATH"] = os.path.dirname(self.tmux_bin) + os.pathsep + self.env.get("PATH", "")
        self.tma_prefix = tma_argv() + ["--socket-name", self.name]

    def tmux(self, *args: str, check: bool = True, timeout: float = 10) -> str:
        res = subprocess.run([self.tmux_bin, "-u", "-L", self.name, "-f", "/dev/null", *args],
                             capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and res.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def tma(self, *args: str, timeout: float = 30, env: dict | None = None
            ) -> subprocess.CompletedProcess:
        return subprocess.run(self.tma_prefix + list(args), capture_output=True, text=True,
                              env=dict(self.env, **(env or {})), timeout=timeout)

    def start(self) -> None:
        # a keeper session so the server outlives each agent's session
        self.tmux("new-session", "-d", "-s", "keeper", "-x", "100", "-y", "30",
                  f"exec env TMA_LIVE_TOKEN={self.token} sleep 100000")

    def token_pids(self, token: str | None = None) -> list[int]:
        needle = f"TMA_LIVE_TOKEN={token or self.token}".encode()
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if any(e.startswith(needle) for e in data.split(b"\0")):
                pids.append(int(entry))
        return pids

    def reap(self, token: str | None = None, settle: float = 5.0) -> list[str]:
        """Wait for processes carrying the token to exit; kill what stays. Returns what had
        to be killed (as `pid comm` strings)."""
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            if not self.token_pids(token):
                return []
            time.sleep(0.1)
        killed = []
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.token_pids(token):
                try:
                    comm = Path(f"/proc/{pid}/comm").read_text().strip()
                    os.kill(pid, sig)
                    if sig == signal.SIGTERM:
                        killed.append(f"{pid} {comm}")
                except (OSError, ProcessLookupError):
                    pass
            end = time.monotonic() + 2
            while time.monotonic() < end and self.token_pids(token):
                time.sleep(0.05)
        return killed

    def kill(self) -> list[str]:
        subprocess.run([self.tmux_bin, "-L", self.name, "kill-server"], capture_output=True,
                       env=self.env, timeout=10)
        leftovers = self.reap()
        tmux_sockets.remove(self.name)  # tmux leaves its socket file behind
        return leftovers


class LiveDaemon:
    """`tma daemon --ensure` for the suite's server, the way a user's tmux.conf starts
    it; stopped with SIGTERM at teardown, which must leave no process and no file."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.pid = 0
        self.files = None

    def start(self) -> None:
        from tma.runtime import daemon_files

        res = self.server.tma("daemon", "--ensure", timeout=30)
        assert res.returncode == 0, f"tma daemon --ensure -> {res.returncode}: {res.stderr}"
        sock = self.server.tmux("display-message", "-p", "#{socket_path}").strip()
        self.files = daemon_files.Files(sock, str(Path(self.server.env["XDG_RUNTIME_DIR"])
                                                  / "tma"))
        deadline = time.monotonic() + 10
        status = None
        while status is None and time.monotonic() < deadline:
            status = daemon_files.read_status(self.files.sock)
            if status is None:
                time.sleep(0.05)
        assert status is not None, f"the daemon never answered on {self.files.sock}"
        self.pid = int(status["pid"])

    def status(self) -> dict | None:
        from tma.runtime import daemon_files

        return daemon_files.read_status(self.files.sock) if self.files else None

    def log(self) -> str:
        try:
            return Path(self.files.log).read_text(encoding="utf-8") if self.files else ""
        except OSError:
            return ""

    def alive(self) -> bool:
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return False
        return state != "Z"

    def stop(self) -> list[str]:
        """SIGTERM; the problems found (it had to be killed, its files stayed)."""
        if not self.pid:
            return []
        problems = []
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            problems.append(f"the daemon {self.pid} was gone before teardown")
        deadline = time.monotonic() + 5
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            problems.append(f"the daemon {self.pid} ignored SIGTERM for 5 s")
        assert self.files is not None
        for path in (self.files.sock, self.files.lock):
            if os.path.exists(path):
                problems.append(f"the stopped daemon left {path}")
        # its control clients (one `tmux -C` per session) go with it
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            modes = self.server.tmux("list-clients", "-F", "#{client_control_mode}",
                                     check=False).split()
            if "1" not in modes:
                break
            time.sleep(0.05)
        else:
            problems.append("control clients outlived the stopped daemon")
        self.pid = 0
        return problems


# ---------------------------------------------------------------- sampling
@dataclass
class Sample:
    t: float  # time.time()
    cls: str | None  # the screen class (agents.py)
    state: str  # @agent_state ('' = no stamp)
    detail: str
    source: str
    command: str
    title: str
    screen: str


class Monitor(threading.Thread):
    """Reads the pane every 100 ms: screen class and tma's stamp, from one tmux call."""

    # framed as tma frames its own reads (a control-byte separator reads as octal text on
    # tmux 3.4 and 3.5a), the title as free text
    FRAME = frame.Frame()
    FMT = FRAME.record("M", [frame.text("pane_current_command"), frame.text("pane_title"),
                             "#{@agent_state}", "#{@agent_detail}", "#{@agent_source}",
                             "#{pane_dead}"])

    def __init__(self, server: LiveServer, pane: str, agent: agents_mod.Agent) -> None:
        super().__init__(daemon=True, name=f"monitor-{pane}")
        self.server = server
        self.pane = pane
        self.agent = agent
        self.samples: list[Sample] = []
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.error: str | None = None

    def read(self) -> Sample | None:
        try:
            out = self.server.tmux("display-message", "-p", "-t", self.pane, self.FMT, ";",
                                   "capture-pane", "-p", "-t", self.pane, timeout=5)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            self.error = str(exc)
            return None
        t = time.time()
        head, _, screen = out.partition(self.FRAME.fs + "\n")
        parts = self.FRAME.first(head + self.FRAME.fs, "M", 6)
        if parts is None:
            return None
        command, title, state, detail, source, _dead = parts
        command, title = frame.untext(command), frame.untext(title).rstrip()
        prev = self.samples[-1] if self.samples else None
        if prev is not None and prev.screen == screen:
            screen = prev.screen  # share the string
        cls = self.agent.classify(screen, title, command)
        return Sample(t, cls, state, detail, source, command, title, screen)

    def run(self) -> None:
        nxt = time.monotonic()
        while not self.stop_event.is_set():
            s = self.read()
            if s is not None:
                with self.lock:
                    self.samples.append(s)
            nxt += SAMPLE
            delay = nxt - time.monotonic()
            if delay < 0:
                nxt = time.monotonic()
                delay = 0
            self.stop_event.wait(delay)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=5)

    def snapshot(self) -> list[Sample]:
        with self.lock:
            return list(self.samples)

    def last(self) -> Sample | None:
        with self.lock:
            return self.samples[-1] if self.samples else None

    def wait(self, pred, timeout: float, since: float = 0.0, what: str = "") -> Sample | None:
        """The first sample at or after `since` satisfying pred (polls the sample list)."""
        deadline = time.time() + timeout
        idx = 0
        while True:
            with self.lock:
                fresh = self.samples[idx:]
                idx = len(self.samples)
            for s in fresh:
                if s.t >= since and pred(s):
                    return s
            if time.time() > deadline:
                return None
            time.sleep(0.03)


class Ticker(threading.Thread):
    """`tma status` at the top of every second, like `status-interval 1`; confirmation
    reads run right after a tick, inside the same second (the status line's stampede
    guard; `ls` and `wait` are not held by it and may read the screen themselves)."""

    def __init__(self, server: LiveServer) -> None:
        super().__init__(daemon=True, name="ticker")
        self.server = server
        self.stop_event = threading.Event()
        self.ticks: list[tuple[float, float, int]] = []
        self.jobs: list[tuple] = []
        self.lock = threading.Lock()
        self.failures: list[str] = []

    def run(self) -> None:
        while not self.stop_event.is_set():
            now = time.time()
            target = math.floor(now) + 1.02
            if self.stop_event.wait(target - now):
                break
            t0 = time.time()
            try:
                res = self.server.tma("status", timeout=10)
                rc = res.returncode
                if rc != 0:
                    self.failures.append(f"tma status exit {rc}: {res.stderr.strip()}")
            except subprocess.TimeoutExpired:
                rc = -1
                self.failures.append("tma status timed out")
            self.ticks.append((t0, time.time(), rc))
            second = math.floor(t0)
            while True:
                with self.lock:
                    now = time.time()
                    # only inside the tick's own second (and early in it): tma's stampede
                    # guard then makes the read consume; a late one waits for the next tick
                    if not self.jobs or math.floor(now) != second or now - second > 0.6:
                        break
                    fn, done, box = self.jobs.pop(0)
                try:
                    box.append(fn())
                except Exception as exc:  # handed back to the caller
                    box.append(exc)
                done.set()

    def after_tick(self, fn, timeout: float = 15.0):
        done = threading.Event()
        box: list = []
        with self.lock:
            self.jobs.append((fn, done, box))
        if not done.wait(timeout):
            raise AssertionError("the status ticker did not run a confirmation in time")
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=15)


# ---------------------------------------------------------------- results
@dataclass
class StepResult:
    agent: str
    mode: str
    step: str
    expected: str  # the verdict ('' = no row)
    deadline: float
    ok: bool = False
    latency: float | None = None  # seconds from the screen showing the state to tma
    t_screen: float | None = None
    t_tma: float | None = None
    detail: str = ""
    source: str = ""
    note: str = ""
    run: str = RUN_ID


RESULTS: list[StepResult] = []
_SLOW_SEQ = itertools.count(1)
SCENARIOS: list[dict] = []


def record(result: StepResult) -> None:
    RESULTS.append(result)
    try:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        with open(RESULTS_DIR / f"{RUN_ID}.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(dict(asdict(result), kind="step")) + "\n")
    except OSError:
        pass


def record_scenario(info: dict) -> None:
    SCENARIOS.append(info)
    try:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        with open(RESULTS_DIR / f"{RUN_ID}.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(dict(info, kind="scenario", run=RUN_ID)) + "\n")
    except OSError:
        pass


# ---------------------------------------------------------------- one agent, one mode
@dataclass
class Scenario:
    agent: agents_mod.Agent
    mode: str  # hookless | hooked
    server: LiveServer
    llm: FakeLLM
    root: Path
    cache: Path
    pane: str = ""
    session: str = ""
    monitor: Monitor | None = None
    ticker: Ticker | None = None
    daemon: LiveDaemon | None = None
    failures: list[str] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    token: str = ""
    slow_ids: int = 0
    dumped: bool = False

    @property
    def hooked(self) -> bool:
        return self.mode == "hooked"

    @property
    def polled(self) -> bool:
        """hookless and hooked have a status line ticking; the daemon mode has none."""
        return self.mode != "daemon"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / f"work-{self.agent.agent}"

    # -- environment
    def pane_env(self) -> dict[str, str]:
        path = [str(self.agent.bin_dir(self.cache))]
        if self.hooked:
            path += [str(self.home / "bin"), str(Path(tma_argv()[0]).parent)]
        node = node_dir(self.agent.node_min)
        if node:  # the node that passed the version check, wherever it lives
            path.append(node)
        path += [d for d in ("/usr/local/bin", "/usr/bin", "/bin") if d not in path]
        env = {
            "HOME": str(self.home), "PATH": ":".join(path), "TERM": "xterm-256color",
            "LANG": "C.UTF-8", "SHELL": "/bin/bash", "PS1": "live$ ",
            "TMA_LIVE_TOKEN": self.token,
        }
        env.update(agents_mod.agent_env(self.agent, self.home, self.llm.url))
        if self.hooked:
            env.update(self.hook_env())
        return env

    def hook_env(self) -> dict[str, str]:
        """Where tma install-hooks writes and where the hooks find tma, all in the HOME."""
        home = self.home
        tma_bin = Path(tma_argv()[0])
        env = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CODEX_HOME": str(home / ".codex"),
            "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"),
            "TMA_CONFIG_DIR": str(home / ".config" / "tma"),
            # the wrapper goes into the HOME too (never beside the venv's tma, which other
            # tests share); the hooks name it by its absolute path
            "TMA_WRAPPER_PATH": str(home / "bin" / "tma-hook"),
        }
        if tma_bin.name == "tma":
            env["TMA_BIN"] = str(tma_bin)
        # the hooks run the tma under test, also from a source tree the venv's console
        # script does not point at (a worktree run with PYTHONPATH=src)
        env["PYTHONPATH"] = str(Path(tma.__file__).resolve().parents[1])
        return env

    # -- lifecycle
    def start(self) -> None:
        self.token = f"{self.server.token}-{self.agent.key}-{self.mode}"
        agents_mod.setup_home(self.agent, self.home, self.work, self.llm.url,
                              cache=self.cache, hooked=self.hooked)
        if self.hooked:
            self.install_hooks()
        env = self.pane_env()
        words = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cmd = ('exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" '
               f"{words} bash --norc --noprofile")
        if not self.polled:
            # started before the agent's session exists: the daemon must pick the new
            # session up by itself (%sessions-changed), as it does for a user
            self.daemon = LiveDaemon(self.server)
            self.daemon.start()
        self.session = f"{self.agent.key}-{self.mode}".replace(".", "_")
        self.pane = self.server.tmux("new-session", "-d", "-s", self.session, "-x", "100",
                                     "-y", "30", "-c", str(self.work), "-P", "-F",
                                     "#{pane_id}", cmd).strip()
        self.monitor = Monitor(self.server, self.pane, self.agent)
        self.monitor.start()
        if self.polled:
            self.ticker = Ticker(self.server)
            self.ticker.start()
        self.wait_screen(lambda s: s.screen.rstrip().endswith("live$"), 15, "the shell prompt")
        log = self.root / f"{self.agent.agent}.stderr"
        self.type_line(f"{self.agent.launch()} 2>>{log}", echo=self.agent.binary)

    def install_hooks(self) -> None:
        env = dict(self.pane_env())
        env["PATH"] = env["PATH"] + ":" + os.environ.get("PATH", "")
        # --socket-name: the tmux side of the wiring goes to the private server
        res = subprocess.run(self.server.tma_prefix + ["install-hooks", self.agent.agent,
                                                       "--yes"],
                             capture_output=True, text=True, timeout=60,
                             env=dict(self.server.env, **env))
        assert res.returncode == 0, (
            f"tma install-hooks {self.agent.agent} --yes -> {res.returncode}\n"
            f"{res.stdout}\n{res.stderr}")

    def close(self) -> list[str]:
        for thread in (self.ticker, self.monitor):
            if thread is not None:
                thread.stop()
        if self.failures and self.monitor is not None and not self.dumped:
            self.dump()
        problems = self.daemon.stop() if self.daemon is not None else []
        if self.session:
            self.server.tmux("kill-session", "-t", self.session, check=False)
        return self.server.reap(self.token) + problems

    def dump(self) -> Path | None:
        """Every distinct screen with the verdict beside it, for a failure's post-mortem."""
        assert self.monitor is not None
        self.dumped = True
        path = RESULTS_DIR / f"{RUN_ID}-{self.agent.key}-{self.mode}.screens.txt"
        try:
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                prev = None
                for s in self.monitor.snapshot():
                    key = (s.screen, s.title, s.state, s.cls, s.command)
                    if key == prev:
                        continue
                    prev = key
                    stamp = time.strftime("%H:%M:%S", time.localtime(s.t))
                    frac = f"{s.t % 1:.2f}"[1:]
                    fh.write(f"=== {stamp}{frac} cls={s.cls} tma={s.state or '-'}/{s.detail}"
                             f"/{s.source} cmd={s.command} title={s.title!r}\n{s.screen}\n")
                if self.daemon is not None:
                    fh.write(f"=== daemon status {self.daemon.status()}\n"
                             f"=== daemon log\n{self.daemon.log()[-4000:]}\n")
        except OSError:
            return None
        for f in self.failures:
            self.failures[self.failures.index(f)] = f + f" [screens: {path}]"
        return path

    # -- screen and keys
    def screen(self) -> str:
        return self.server.tmux("capture-pane", "-p", "-t", self.pane)

    def wait_screen(self, pred, timeout: float, what: str, since: float = 0.0) -> Sample:
        assert self.monitor is not None
        s = self.monitor.wait(pred, timeout, since)
        if s is None:
            last = self.monitor.last()
            raise AssertionError(
                f"{self.agent.key} [{self.mode}]: the screen never showed {what} in "
                f"{timeout:.0f}s; last screen (title {last.title if last else '?'!r}):\n"
                f"{last.screen if last else self.screen()}")
        return s

    def wait_regex(self, regex: str, timeout: float = 30, since: float = 0.0) -> Sample:
        rx = re.compile(regex)
        return self.wait_screen(lambda s: rx.search(s.screen) is not None, timeout,
                                f"/{regex}/", since)

    def keys(self, *keys: str) -> None:
        self.server.tmux("send-keys", "-t", self.pane, *keys)

    def type_line(self, text: str, echo: str | None = None) -> float:
        """Type text, wait until the screen echoes it, then press Enter. Returns the
        instant Enter was sent."""
        t0 = time.time()
        self.server.tmux("send-keys", "-t", self.pane, "-l", text)
        needle = echo or text
        self.wait_screen(lambda s: needle in s.screen, 15, f"the typed text {needle!r}", t0)
        self.quiet(needle)
        t = time.time()
        self.keys("Enter")
        return t

    def quiet(self, needle: str, samples: int = 5, timeout: float = 10.0) -> None:
        """Wait until the screen, with `needle` on it, has not changed for `samples` reads
        in a row. A TUI still settling after a turn (gemini's post-turn work) drops an
        Enter that arrives too soon; a screen that never settles is let through after
        `timeout` (the step that follows then fails with the screen in its dump)."""
        assert self.monitor is not None
        deadline = time.time() + timeout
        while time.time() < deadline:
            recent = self.monitor.snapshot()[-samples:]
            if (len(recent) == samples and len({s.screen for s in recent}) == 1
                    and needle in recent[-1].screen):
                return
            time.sleep(0.05)

    def slow_id(self) -> str:
        """A slow-stream id unique in this pytest session (the fake LLM is shared)."""
        self.slow_ids += 1
        return f"{self.mode}-{self.agent.key.replace('.', '_')}-{next(_SLOW_SEQ)}"

    # -- tma's public surfaces (they consume: run right after a status tick, or, with the
    # daemon, right after its stamp, while it is fresh)
    def surface(self, fn):
        return self.ticker.after_tick(fn) if self.ticker is not None else fn()

    def ls_rows(self) -> tuple[list[dict], str]:
        def job():
            res = self.server.tma("--debug-timing", "ls", "--json")
            return res

        res = self.surface(job)
        assert res.returncode == 0, f"tma ls --json -> {res.returncode}: {res.stderr}"
        return json.loads(res.stdout)["agents"], res.stderr

    def wait_surface(self, state: str) -> subprocess.CompletedProcess:
        return self.surface(lambda: self.server.tma(
            "wait", "--pane", self.pane, "--until", state, "--timeout", "0.5", "--json"))

    def pane_option(self, name: str) -> str:
        return self.server.tmux("show-options", "-p", "-qv", "-t", self.pane, name).strip()

    # -- a step: the screen shows `cls`; tma must say `expected` within `deadline`
    def step(self, name: str, cls: str, expected: str, deadline: float, *,
             since: float, screen_timeout: float = 60, hook_step: bool = False,
             detail: str | None = None) -> StepResult:
        assert self.monitor is not None
        res = StepResult(self.agent.key, self.mode + self.server.label, name, expected,
                         deadline)
        self.steps.append(res)
        try:
            first = self.wait_screen(lambda s: s.cls == cls, screen_timeout,
                                     f"the {cls} screen ({name})", since)

            def reported(s: Sample) -> bool:
                return s.state == expected

            # the first sample, once the screen shows the state, where tma says it
            hit = self.monitor.wait(reported, deadline + 15, first.t)
            samples = [s for s in self.monitor.snapshot() if s.t >= since]
            if hit is None:
                last = samples[-1] if samples else None
                res.note = (f"tma said {last.state or 'no row'!r} for {deadline + 15:.0f}s "
                            f"after the screen showed {cls}" if last else "no samples")
                raise AssertionError(f"{name}: {res.note}")
            i = next(k for k, s in enumerate(samples) if s is hit)
            # tma's run of `expected` that the hit belongs to (it may have begun before the
            # screen changed: hooks fire before the agent draws)
            m = i
            while m > 0 and samples[m - 1].state == expected:
                m -= 1
            t_tma = samples[m].t
            # the screen's run of `cls` under way at the hit (an unclassified frame does not
            # restart it)
            t_screen = first.t
            if samples[i].cls in (cls, None):
                k = i
                while k > 0 and samples[k - 1].cls in (cls, None):
                    k -= 1
                while k <= i and samples[k].cls != cls:
                    k += 1
                if k <= i:
                    t_screen = max(samples[k].t, first.t)
            res.t_screen, res.t_tma = t_screen, t_tma
            res.latency = round(t_tma - t_screen, 2)
            res.detail, res.source = hit.detail, hit.source
            problems = []
            if res.latency > deadline:
                problems.append(f"latency {res.latency:.1f}s > {deadline:g}s")
            if detail is not None and hit.detail != detail:
                problems.append(f"detail {hit.detail!r}, want {detail!r}")
            if hook_step and expected and hit.source != "hook":
                # the hook lane must carry the state, within the deadline of the screen; a
                # screen read may say it first where the agent runs its hook after drawing
                # (Copilot fires userPromptSubmitted ~0.3 s after its working footer)
                left = t_screen + deadline - time.time()
                late = self.monitor.wait(lambda s: s.state == expected and s.source == "hook",
                                         max(0.0, left), hit.t)
                if late is None or late.t - t_screen > deadline:
                    problems.append(f"source {hit.source or 'capture'!r}, want 'hook' within "
                                    f"{deadline:g}s of the screen")
                else:
                    res.source = "hook"
            problems += self.confirm(expected)
            if problems:
                res.note = "; ".join(problems)
                raise AssertionError(f"{name}: {res.note}")
            res.ok = True
        except AssertionError as exc:
            if not res.note:
                res.note = str(exc).splitlines()[0][:200]
            self.failures.append(f"{self.agent.key} [{self.mode}] {name}: {exc}")
            raise
        finally:
            record(res)
        return res

    def confirm(self, expected: str) -> list[str]:
        """Read the verdict through `tma ls --json` and `tma wait` (consuming reads)."""
        problems = []
        rows, err = self.ls_rows()
        row = next((r for r in rows if r["pane"] == self.pane), None)
        if expected == "":
            if row is not None:
                problems.append(f"ls --json still lists the pane ({row['state']})")
            return problems
        if row is None:
            problems.append("ls --json has no row for the pane")
        else:
            if row["state"] != expected:
                problems.append(f"ls --json says {row['state']!r}")
            if row["agent"] != self.agent.agent:
                problems.append(f"ls --json names agent {row['agent']!r}")
        # (`ls` is a surface a person reads: it is never stampede-skipped and reads a
        # screen that printed since its stamp (issue 18), so it may produce here; the
        # verdict was already timed from the sampler, so the confirmation only agrees)
        w = self.wait_surface(expected)
        if w.returncode != 0:
            problems.append(f"tma wait --until {expected} -> exit {w.returncode} "
                            f"{w.stderr.strip()}")
        return problems

    # -- what must never be seen
    def never_seen(self) -> list[str]:
        """No idle while the screen is blocked; no blocked while it works (pi: never
        blocked at all); neither idle nor working while a question or a plan waits; neither
        idle nor blocked while the agent compacts. A verdict carried over from before the
        screen changed is lag, not a wrong verdict: only what tma says after it first moves
        counts."""
        assert self.monitor is not None
        samples = self.monitor.snapshot()
        out: list[str] = []
        runs: list[tuple[str, list[Sample]]] = []
        for s in samples:
            key = "blocked" if s.cls in ("dialog", "prompt") else s.cls
            if key is None:
                if runs:
                    runs[-1][1].append(s)  # an unclassified frame extends the run
                continue
            if runs and runs[-1][0] == key:
                runs[-1][1].append(s)
            else:
                runs.append((key, [s]))
        # A hook fires before the agent redraws: tma may say blocked (PermissionRequest) or
        # idle (Stop) a moment before the screen shows it. A verdict the screen itself
        # reaches within LEAD is ahead of the screen, not wrong. Hookless, tma reads the
        # screen, so only the skew between its capture and this sampler is allowed.
        lead = 1.0 if self.hooked else 0.3
        shows = {"idle": ("idle",), "blocked": ("prompt", "dialog", "question", "plan"),
                 "working": ("working", "compacting")}
        # what each screen class must never read (once tma has moved)
        never = {"blocked": ("idle",), "working": ("blocked",),
                 "question": ("idle", "working"), "plan": ("idle", "working"),
                 "compacting": ("idle", "blocked")}

        def ahead(s: Sample) -> bool:
            return any(x.cls in shows.get(s.state, ()) for x in samples
                       if s.t <= x.t <= s.t + lead)

        def behind(s: Sample, start: float) -> bool:
            """tma's new verdict is what the screen showed just before this run began: a
            capture taken before the screen changed (a 100 ms working frame before
            Gemini's plan dialog), stamped after it. Lag within the skew, carried like a
            verdict from before the change; how long it lasts is the steps' deadlines'."""
            return any(x.cls in shows.get(s.state, ()) for x in samples
                       if s.t - lead <= x.t < start)

        for key, run in runs:
            carried = run[0].state
            moved = False
            for s in run:
                if not moved and s.state != carried and behind(s, run[0].t):
                    carried = s.state
                moved = moved or s.state != carried
                if not moved:
                    continue
                if s.state in never.get(key, ()) and not ahead(s):
                    shown = s.cls or ("a prompt" if key == "blocked" else key)
                    out.append(f"{s.state} at {s.t:.1f} while the screen shows {shown}")
                    break
        if self.agent.prompt_verdict != "blocked":
            bad = next((s for s in samples if s.state == "blocked"), None)
            if bad is not None:
                out.append(f"blocked at {bad.t:.1f} (screen {bad.cls}); "
                           f"{self.agent.agent} has no permission prompt of its own")
        return out



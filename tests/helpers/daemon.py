"""A real tma daemon on a test server, and the fake Claude panes its tests draw states in."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tma.core import fixture
from tma.runtime import daemon_files

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"

SCREEN = {s: fixture.parse((CAPTURES / f"claude-2.1.332_{s}.txt").read_text(encoding="utf-8"))
          for s in ("blocked", "working", "idle")}

def _body(state: str) -> str:
    cap = SCREEN[state]
    return "\n".join(cap.body.rstrip("\n").split("\n")[-(cap.height or 30):])

class Daemon:
    """A foreground `tma daemon` for one private server, stopped and checked afterwards."""

    def __init__(self, srv, runtime: Path) -> None:
        self.srv = srv
        self.runtime = runtime
        self.env = dict(srv.env, XDG_RUNTIME_DIR=str(runtime))
        self.proc: subprocess.Popen | None = None

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tma", "--socket-name", self.srv.name, "daemon", *args]

    def start(self) -> Daemon:
        self.proc = subprocess.Popen(self.argv(), env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.srv.wait_for(lambda: self.status() is not None, timeout=10)
        return self

    def files(self) -> list[str]:
        d = self.runtime / "tma"
        return sorted(p.name for p in d.iterdir()
                      if p.suffix in (".sock", ".lock")) if d.exists() else []

    def sock(self) -> Path | None:
        d = self.runtime / "tma"
        found = list(d.glob("*.sock")) if d.exists() else []
        return found[0] if found else None

    def status(self) -> dict | None:
        path = self.sock()
        return None if path is None else daemon_files.read_status(str(path))

    def pids(self) -> list[int]:
        """Every live `tma ... daemon` (not --ensure) process for this server."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().split(") ")[-1][:1]
            except OSError:
                continue
            words = [a.decode() for a in argv if a]
            # by the socket name, or by its path: the key file's launcher starts
            # `tma --socket-path <path> daemon`
            ours = any(w == self.srv.name or w.endswith("/" + self.srv.name) for w in words)
            if ours and words[-1:] == ["daemon"] and state != "Z":
                out.append(int(entry))
        return out

    def stop(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid in self.pids():
            os.kill(pid, signal.SIGKILL)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr is not None:
                self.proc.stderr.close()

@contextlib.contextmanager
def watched(srv, tmp_path, cls=None):
    """A Daemon (or subclass) with a private runtime dir; stopped afterwards, and the
    test fails if one outlived it. Every daemon test module's fixture is this."""
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    d = (cls or Daemon)(srv, runtime)
    try:
        yield d
    finally:
        d.stop()
        assert not d.pids(), "a daemon outlived its test"

def _claude(srv, session: str = "s") -> tuple[str, int]:
    """A hookless claude pane under a shell (so quitting leaves a prompt); (pane, pid)."""
    fake = srv.fake("claude")
    pane = srv.new_pane("sh", session=session)  # interactive: the agent gets the foreground
    srv.tmux("send-keys", "-t", pane, f"{fake} 100000", "Enter")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    root = int(srv.display(pane, "#{pane_pid}"))
    kids = Path(f"/proc/{root}/task/{root}/children").read_text().split()
    return pane, int(kids[0])

def _draw(srv, pane: str, state: str) -> None:
    """Put the screen on the pane (raw, colours and all) and wait until tmux shows it."""
    body = _body(state)
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))
    plain = [ln for ln in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", body).splitlines()
             if ln.strip()]
    marker = plain[-1].strip()[:20]
    srv.wait_for(lambda: marker in srv.tmux("capture-pane", "-p", "-t", pane), interval=0.01)

def _until(srv, pane: str, key: str, want, timeout: float = 6.0) -> float:
    """Seconds until show-options shows the option satisfying `want` (str or callable)."""
    t0 = time.monotonic()
    ok = want if callable(want) else (lambda v: v == want)
    while True:
        if ok(srv.option(pane, key)):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"{pane} {key} never became {want!r} "
                                 f"(now {srv.option(pane, key)!r})")
        time.sleep(0.02)

#: the status counters that move when the daemon serves an edge, reads, captures or sweeps
COUNTERS = ("edges_fired", "edges", "reads", "captures", "sweeps")


def settled(daemon: Daemon, still: float = 1.5, timeout: float = 30.0) -> dict:
    """The daemon's status once its counters have stood still for `still` seconds.

    A test that counts reads must begin and end counting when the daemon has served
    every deadline the screens armed; a guessed sleep ("every edge has been served by
    now") is what failed on a loaded machine, where a read comes when the daemon gets
    the CPU. Each status is the daemon's own answer, from the loop that serves the
    edges (single-threaded: a deadline already due when one answer is sent is served
    before the next), and every deadline a burst arms falls within quiet_ms + the
    minimum gap (850 ms) of the daemon seeing its output. So counters unchanged between
    answers `still` apart mean nothing was left to read, however late each came. Not
    for a pane the daemon holds `working` (its follow-up reads wait out the dwell)."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while True:
        now = daemon.status()  # None: no answer within its own timeout (a loaded machine)
        if now is not None:
            if last is None or any(now[k] != last[k] for k in COUNTERS):
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= still:
                return now
        if time.monotonic() > deadline:
            raise AssertionError(f"the daemon's counters never stood still for {still} s: "
                                 f"{ {k: last[k] for k in COUNTERS} if last else None}")
        time.sleep(0.05)

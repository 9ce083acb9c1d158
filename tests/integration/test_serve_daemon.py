"""`tma serve --stdio` on a host whose daemon runs: serve follows the daemon's push.

A real private tmux server, a real `tma daemon` on it, and a real `tma serve --stdio`
process on a pipe. Serve's tmux is a logging wrapper (TMA_TMUX_BIN): every argv it
spawns, and every command line it feeds `source-file -` (where a capture would go), lands
in a file, so what serve itself asked of tmux is known; the daemon runs the real tmux and
is not in that file.

- With the daemon: a blocked edge reaches the stream right after the daemon stamps it,
  with serve's interval at 10 s, and serve captures no pane (it only lists the stamps).
- The daemon killed mid-stream: the stream goes on from serve's own cycle (which does
  capture: the same check, seen to fire), and a daemon started again is followed again.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tma.core import proto

FOLLOWING = "following this host's daemon"


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        yield d


class Serve:
    """One serve process (its tmux logged, its stderr in a file) and the device end."""

    def __init__(self, srv, daemon, tmp_path: Path, *flags: str) -> None:
        real = srv.env.get("TMA_TMUX_BIN") or shutil.which("tmux")
        assert real, "no tmux"
        self.log = tmp_path / "serve-tmux.log"
        self.log.write_text("")
        wrapper = tmp_path / "tmux-logged"
        log, tmux = shlex.quote(str(self.log)), shlex.quote(real)
        wrapper.write_text(
            "#!/bin/sh\n"
            f"printf 'argv %s\\n' \"$*\" >> {log}\n"
            "case \"$*\" in\n"
            f"  *'source-file -'*) tee -a {log} | {tmux} \"$@\" ;;\n"
            f"  *) exec {tmux} \"$@\" ;;\n"
            "esac\n")
        wrapper.chmod(0o755)
        self.err = tmp_path / "serve.err"
        env = dict(daemon.env, TMA_TMUX_BIN=str(wrapper))
        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "serve", "--stdio",
                *flags]
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, env=env)
        self.buf = b""
        self.n = 0

    def ask(self, t: str, **body) -> dict:
        self.n += 1
        rid = str(self.n)
        self.proc.stdin.write(json.dumps({"schema": 1, "id": rid, "t": t, **body}).encode()
                              + b"\n")
        self.proc.stdin.flush()
        doc = self.frame()
        assert doc["id"] == rid, doc
        return doc

    def frame(self, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, f"serve sent no frame in time; its stderr: {self.said()!r}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"serve closed stdout: {self.said()!r}"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        proto.parse_line(line, proto.RESPONSE)  # a frame of the protocol
        return json.loads(line)

    def edge_to(self, pane: str, state: str, timeout: float) -> tuple[dict, float]:
        """The first edge frame that takes `pane` to `state` (others skipped), and when."""
        deadline = time.monotonic() + timeout
        while True:
            doc = self.frame(max(0.01, deadline - time.monotonic()))
            if doc["t"] == "edge" and doc["pane"] == pane and doc["to"] == state:
                return doc, time.monotonic()
            assert doc["t"] == "edge", doc

    def said(self) -> str:
        return self.err.read_text(errors="replace")

    def tmux_since(self, mark: int) -> str:
        return self.log.read_text(errors="replace")[mark:]

    def mark(self) -> int:
        return len(self.log.read_text(errors="replace"))

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)


@pytest.fixture
def serve(srv, daemon, tmp_path):
    opened: list[Serve] = []

    def open_(*flags: str) -> Serve:
        s = Serve(srv, daemon, tmp_path, *flags)
        opened.append(s)
        return s

    yield open_
    for s in opened:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def _subscribed(s: Serve) -> None:
    hello = s.ask("hello", app="test", app_version="0", device="t")
    assert hello["t"] == "hello"
    ack = s.ask("subscribe", events=True)
    assert ack["t"] == "ack"
    # answered after the subscription's baseline read (one request at a time): a change
    # made from here is an edge
    assert s.ask("snapshot")["t"] == "snapshot"


def _kill_daemon(srv, daemon) -> None:
    for pid in daemon.pids():
        os.kill(pid, signal.SIGKILL)
    srv.wait_for(lambda: not daemon.pids(), timeout=10)


def test_with_the_daemon_serve_streams_its_stamp_at_once_and_detects_nothing(
        srv, daemon, serve):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    s = serve("--interval", "10000")
    _subscribed(s)
    assert FOLLOWING in s.said()
    mark = s.mark()
    time.sleep(0.8)  # past the daemon's quiet threshold: the draw below is a new burst
    _draw(srv, pane, "blocked")
    drawn = time.monotonic()
    _until(srv, pane, "@agent_state", "blocked")
    edge, at = s.edge_to(pane, "blocked", timeout=8)
    took = at - drawn
    print(f"\nMEASURED serve edge after the draw (daemon detects, serve follows) {took:.3f}s")
    assert edge["from"] == "idle"
    # the daemon's ~1 s to stamp, then the push: nowhere near serve's 10 s interval
    assert took < 4.0
    time.sleep(1.5)  # three more reads of the stamps while the prompt stands
    asked = s.tmux_since(mark)
    assert "list-panes" in asked  # the wrapper is serve's tmux: it read the stamps
    # no detection of its own: the one capture is the new prompt's dialog, read once for
    # what it asks (ScreenAsks: no hook named the call), never again in its episode
    captures = [ln for ln in asked.splitlines() if "capture-pane" in ln]
    assert len(captures) <= 1 and all(pane in ln for ln in captures), asked
    assert s.close() == 0


def test_a_daemon_killed_mid_stream_leaves_the_stream_to_serves_own_cycle(
        srv, daemon, serve):
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    s = serve("--interval", "1000")
    _subscribed(s)
    assert s.said().count(FOLLOWING) == 1
    _kill_daemon(srv, daemon)
    srv.wait_for(lambda: "the daemon went away" in s.said(), timeout=5)
    mark = s.mark()
    time.sleep(0.8)
    _draw(srv, pane, "blocked")
    # nothing else stamps now: the edge is serve's own cycle's, within its interval
    edge, _at = s.edge_to(pane, "blocked", timeout=8)
    assert edge["from"] == "idle"
    assert srv.option(pane, "@agent_state") == "blocked"
    assert "capture-pane" in s.tmux_since(mark), "the own cycle read the screen"

    daemon.start()  # a daemon again: followed from serve's next look (every 5 s)
    srv.wait_for(lambda: s.said().count(FOLLOWING) == 2, timeout=12)
    time.sleep(1.5)  # serve's own cycle that may have been under way has ended
    mark = s.mark()
    time.sleep(0.8)
    _draw(srv, pane, "working")
    _edge, _at = s.edge_to(pane, "working", timeout=8)
    assert "capture-pane" not in s.tmux_since(mark)
    assert s.close() == 0


def test_without_a_daemon_a_hooks_stamp_reaches_the_stream_before_the_cycle(
        srv, daemon, serve):
    # the hook returns at once (no reply lane holding it for the person's answer)
    srv.config.write_text("[hooks]\nclaude_reply_lane = false\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    s = serve("--interval", "10000")  # no daemon here (the fixture's is never started)
    _subscribed(s)
    assert FOLLOWING not in s.said()
    time.sleep(1.0)  # the subscription's first cycle is over
    mark = s.mark()
    event = [sys.executable, "-m", "tma", "--socket-name", srv.name, "event", "--agent",
             "claude", "--pane", pane, "--kind", "PermissionRequest"]
    payload = ('{"session_id":"s1","tool_name":"Bash","tool_use_id":"t-1",'
               '"tool_input":{"command":"make"}}')
    t0 = time.monotonic()
    subprocess.run(event, input=payload.encode(), env=daemon.env, check=True,
                   capture_output=True, timeout=30)
    assert srv.option(pane, "@agent_state") == "blocked"  # the hook stamped it itself
    _edge, at = s.edge_to(pane, "blocked", timeout=8)
    took = at - t0
    print(f"\nMEASURED serve edge after a hook's stamp, no daemon, interval 10 s {took:.3f}s")
    assert took < 3.0  # the stamps read (every 0.5 s), not the 10 s cycle
    assert "capture-pane" not in s.tmux_since(mark)
    assert s.close() == 0

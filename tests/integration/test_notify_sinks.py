"""The notification sinks against a real tmux server.

Sinks are driven in-process through `tma.runtime.notify.dispatch.dispatch` with an adapter
Server on the test's private socket. A real attached client (a `tmux attach` under a
PTY this test owns) shows that display-message reaches it; a control-mode client
proves that an unescaped `#(…)` really would run, so the hostile-title check is not
vacuous.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from tma.runtime import config
from tma.runtime.notify import (
    backends as notify_backends,
    dispatch as notify,
    log as notify_log,
    note as notify_note,
)
from tma.runtime.notify.note import Note
from tma.tmux import adapter, notify as tnotify

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "notify.schema.json").read_text(encoding="utf-8"))


class PtyClient:
    """`tmux attach` on a PTY we own; everything the client draws is collected."""

    def __init__(self, srv, session: str = "s", cols: int = 200, rows: int = 20) -> None:
        before = set(srv.tmux("list-clients", "-F", "#{client_name}").split())
        env = dict(srv.env, TERM="xterm")
        argv = [srv.tmux_bin, "-u", "-L", srv.name, "attach-session", "-t", session]
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the tmux client
            try:
                os.execve(srv.tmux_bin, argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        self.name = srv.wait_for(
            lambda: next(iter(set(srv.tmux("list-clients", "-F", "#{client_name}").split())
                              - before), None))

    def _read(self) -> None:
        while not self._stop:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                if ready:
                    data = os.read(self.fd, 65536)
                    if not data:
                        return
                    with self._lock:
                        self._buf += data
            except OSError:
                return

    def output(self) -> str:
        with self._lock:
            return bytes(self._buf).decode("utf-8", "replace")

    def close(self) -> None:
        self._stop = True
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            time.sleep(0.02)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self._thread.join(timeout=2)
        os.close(self.fd)


class ControlClient:
    """A long-lived `tmux -C attach`: a client that keeps format jobs alive."""

    def __init__(self, srv, session: str = "s") -> None:
        self.proc = subprocess.Popen(
            [srv.tmux_bin, "-u", "-L", srv.name, "-C", "attach-session", "-t", session],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=srv.env)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def close(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def rt(tmp_path, monkeypatch):
    """An isolated runtime dir (the failure record lives there) and a clean env."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    for key in ("TMA_NOTIFY_CMD", "TMA_NOTIFY_FROM_EVENT", "TMA_DETAIL", "TMA_SESSION"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path / "run" / "tma"


def server_for(srv) -> adapter.Server:
    return adapter.Server(srv.tmux_bin, socket_name=srv.name)


def names_clients(srv) -> bool:
    """Can this release's display-message name a client? (3.2a: -c takes no argument.)"""
    res = subprocess.run([srv.tmux_bin, "-L", srv.name, "display-message", "-c", "nobody",
                          "-p", "x"], capture_output=True, text=True, env=srv.env)
    return "usage:" not in res.stderr + res.stdout


def cfg_with(**table) -> config.Config:
    cfg = config.Config()
    cfg.notify = table
    return cfg


def note_for(srv, pane: str, **kw) -> Note:
    values = dict(trigger="blocked", agent="fake", pane=pane, detail="permission",
                  session="sess-1", locator=srv.display(pane, "#{session_name}:"
                                                              "#{window_index}.#{pane_index}"),
                  title="fix the parser", repo="tma", branch="main", since_ms=0,
                  context_pct=None)
    values.update(kw)
    return Note(**values)


# ------------------------------------------------------------------ command sink


def test_command_gets_json_on_stdin_and_the_env(srv, rt, tmp_path, capfd):
    pane = srv.agent_pane()
    out, envf = tmp_path / "payload.json", tmp_path / "env.txt"
    cmd = f"cat > '{out}'; env > '{envf}'; echo LEAK-OUT; echo LEAK-ERR >&2"
    notify.dispatch(server_for(srv), cfg_with(command=cmd), note_for(srv, pane))
    # dispatch waited for the child: the files are complete the moment it returns
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert list(doc) == list(notify_note.PAYLOAD_KEYS)
    assert doc["pane"] == pane and doc["state"] == "blocked" and doc["agent"] == "fake"
    assert doc["locator"] == srv.display(pane, "#{session_name}:#{window_index}.#{pane_index}")
    env = dict(line.split("=", 1) for line in envf.read_text().splitlines() if "=" in line)
    assert env["TMA_AGENT"] == "fake" and env["TMA_PANE"] == pane
    assert env["TMA_STATE"] == "blocked" and env["TMA_TITLE"] == "fix the parser"
    assert env["TMA_AGE_MS"] == "0" and env["TMA_DETAIL"] == "permission"
    assert env["TMA_SESSION"] == "sess-1" and env["TMA_REPO"] == "tma"
    assert "TMA_CONTEXT_PCT" not in env
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
    assert notify_log.last_failure() is None


def test_per_trigger_command_and_env_override(srv, rt, tmp_path, monkeypatch):
    pane = srv.agent_pane()
    hit = tmp_path / "hit"
    cfg = cfg_with(command=f"echo global > '{hit}'", done={"command": f"echo done > '{hit}'"})
    notify.dispatch(server_for(srv), cfg, note_for(srv, pane, trigger="done"))
    assert hit.read_text() == "done\n"
    monkeypatch.setenv("TMA_NOTIFY_CMD", f"echo env-$TMA_STATE > '{hit}'")
    notify.dispatch(server_for(srv), cfg, note_for(srv, pane, trigger="done"))
    assert hit.read_text() == "env-done\n"


def test_failing_command_leaves_a_record_a_clean_run_clears_it(srv, rt):
    pane = srv.agent_pane()
    server = server_for(srv)
    notify.dispatch(server, cfg_with(command="exit 3"), note_for(srv, pane), now=1234)
    rec = notify_log.last_failure()
    assert rec == {"at": 1234, "reason": "exit status 3", "command": "exit 3"}
    assert (rt / "notify-error").exists()
    assert rt.stat().st_mode & 0o777 == 0o700
    notify.dispatch(server, cfg_with(command="kill -9 $$"), note_for(srv, pane), now=1300)
    assert notify_log.last_failure()["reason"] == "killed by signal 9"  # newest wins
    notify.dispatch(server, cfg_with(command="true"), note_for(srv, pane))
    assert notify_log.last_failure() is None
    assert not (rt / "notify-error").exists()


def test_spawn_failure_is_recorded(srv, rt, monkeypatch):
    pane = srv.agent_pane()
    monkeypatch.setattr(notify_backends, "_SH", "/nonexistent/sh")
    notify.dispatch(server_for(srv), cfg_with(command="true"), note_for(srv, pane))
    rec = notify_log.last_failure()
    assert rec is not None and rec["reason"].startswith("spawn failed")
    assert rec["command"] == "true"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_hung_command_is_killed_at_the_timeout(srv, rt, tmp_path, monkeypatch):
    pane = srv.agent_pane()
    monkeypatch.setattr(notify_backends, "COMMAND_TIMEOUT", 0.5)
    pidf = tmp_path / "bg.pid"
    cmd = f"sleep 60 & echo $! > '{pidf}'; wait"
    start = time.monotonic()
    notify.dispatch(server_for(srv), cfg_with(command=cmd), note_for(srv, pane))
    assert time.monotonic() - start < 5
    assert "timed out" in notify_log.last_failure()["reason"]
    bg = int(pidf.read_text())
    srv.wait_for(lambda: not _alive(bg))  # the whole process group went


def test_no_wait_returns_at_once(srv, rt, tmp_path):
    pane = srv.agent_pane()
    done = tmp_path / "done"
    start = time.monotonic()
    notify.dispatch(server_for(srv), cfg_with(command=f"sleep 1; touch '{done}'"),
                    note_for(srv, pane), wait=False)
    assert time.monotonic() - start < 0.9
    srv.wait_for(lambda: done.exists())


# ------------------------------------------------------------------ log sink


def test_log_sink_appends_jsonl(srv, rt, tmp_path, monkeypatch):
    pane = srv.agent_pane()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cfg = cfg_with(log="~/logs/deep/notify.jsonl")
    server = server_for(srv)
    notify.dispatch(server, cfg, note_for(srv, pane), now=1000)
    notify.dispatch(server, cfg, note_for(srv, pane, trigger="done", title=""), now=2000)
    path = tmp_path / "home" / "logs" / "deep" / "notify.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["at"] for x in lines] == [1000, 2000]
    assert [x["state"] for x in lines] == ["blocked", "done"]
    for line in lines:
        assert list(line)[:2] == ["schema", "at"]
        body = dict(line)
        del body["at"]
        jsonschema.validate(body, SCHEMA)


def test_log_failure_is_silent(srv, rt, tmp_path, capfd):
    pane = srv.agent_pane()
    blocker = tmp_path / "file"
    blocker.write_text("")
    hit = tmp_path / "hit"
    cfg = cfg_with(log=str(blocker / "sub" / "x.jsonl"), command=f"touch '{hit}'")
    notify.dispatch(server_for(srv), cfg, note_for(srv, pane))
    assert hit.exists()  # later sinks still ran
    assert capfd.readouterr() == ("", "")


# ------------------------------------------------------------------ tty sinks


def test_bell_and_osc_bytes_reach_the_tty(srv, rt):
    pane = srv.agent_pane()
    master, slave = os.openpty()
    try:
        tty = os.ttyname(slave)
        cfg = cfg_with(bell=True, osc=True)
        notify.dispatch(server_for(srv), cfg, note_for(srv, pane, tty=tty,
                                                       title="SECRET\x1b]9;x\x07"))
        os.set_blocking(master, False)
        data = b""
        deadline = time.monotonic() + 5
        while not data.endswith(b"\x07", 1) and time.monotonic() < deadline:
            try:
                data += os.read(master, 4096)
            except BlockingIOError:
                time.sleep(0.02)
        assert data == b"\x07\x1b]9;fake blocked\x07"
    finally:
        os.close(master)
        os.close(slave)


def test_bell_resolves_the_pane_tty_through_tmux(srv, rt):
    srv.shell_pane()  # window 0 stays current: a bell elsewhere raises the window flag
    pane = srv.agent_pane()
    assert srv.display(pane, "#{window_bell_flag}") == "0"
    notify.dispatch(server_for(srv), cfg_with(bell=True), note_for(srv, pane))
    srv.wait_for(lambda: srv.display(pane, "#{window_bell_flag}") == "1")


def test_targets_lists_clients_and_the_tty(srv):
    pane = srv.agent_pane()
    server = server_for(srv)
    assert tnotify.targets(server, pane, True) == ([], srv.display(pane, "#{pane_tty}"))
    assert tnotify.targets(server, "%999", True) == ([], "")
    client = PtyClient(srv)
    try:
        assert tnotify.targets(server, pane, False) == ([client.name], "")
    finally:
        client.close()


# ------------------------------------------------------------------ display-message


def test_display_message_reaches_an_attached_client(srv, rt):
    pane = srv.agent_pane()
    client = PtyClient(srv)
    try:
        server = server_for(srv)
        notify.dispatch(server, cfg_with(), note_for(srv, pane, title="parser 100% done %Y;"))
        srv.wait_for(lambda: "tma: fake blocked — parser 100% done %Y;" in client.output())
        notify.dispatch(server, cfg_with(), note_for(srv, pane, title="", trigger="done"))
        srv.wait_for(lambda: f"tma: fake done in {pane}" in client.output())
    finally:
        client.close()


def test_hostile_title_is_shown_literally_and_never_runs(srv, rt, tmp_path):
    pane = srv.agent_pane()
    client = PtyClient(srv)
    control = ControlClient(srv)
    try:
        # positive control: through this long-lived client an unescaped #() does run
        proof = tmp_path / "proof"
        control.send(f"display-message {adapter.quote(f'#(touch {proof})')}")
        srv.wait_for(lambda: proof.exists())

        marker = tmp_path / "pwned"
        title = f"x #{{pane_id}} #(touch {marker}) %Y #[fg=red]end"
        # a key from the PTY client: where a message cannot name a client (3.2a) it goes
        # to the most recently used one, which is then this one, not the control client
        os.write(client.fd, b"x")
        time.sleep(0.3)
        server = server_for(srv)
        notify.dispatch(server, cfg_with(), note_for(srv, pane, title=title))
        expected = f"tma: fake blocked — {title}"
        srv.wait_for(lambda: expected in client.output())
        # the same escaped text through the client that just proved it runs jobs
        control.send(f"display-message {adapter.quote(tnotify.escape(expected))}")
        # a sentinel job queued after it: once it ran, a job from the text would have too
        sentinel = tmp_path / "sentinel"
        control.send(f"display-message {adapter.quote(f'#(touch {sentinel})')}")
        srv.wait_for(lambda: sentinel.exists())
        time.sleep(0.3)  # absence cannot be polled: a short grace after the sentinel
        assert not marker.exists()
    finally:
        control.close()
        client.close()


def test_every_attached_client_gets_the_message(srv, rt):
    pane = srv.agent_pane()
    first, second = PtyClient(srv), PtyClient(srv)
    try:
        os.write(second.fd, b"x")  # the most recently used client
        time.sleep(0.3)
        notify.dispatch(server_for(srv), cfg_with(), note_for(srv, pane, title="both"))
        # 3.2a's display-message cannot name a client: there the client tmux picks, the
        # one most recently used, shows it (docs/reference/tmux-compatibility.md)
        reached = (first, second) if names_clients(srv) else (second,)
        for c in reached:
            srv.wait_for(lambda c=c: "tma: fake blocked — both" in c.output())
    finally:
        first.close()
        second.close()


# ------------------------------------------------------------------ resilience


def test_dead_server_still_runs_the_other_sinks(rt, tmp_path, capfd):
    hit = tmp_path / "hit"
    server = adapter.Server("tmux", socket_name=f"tma-none-{os.getpid()}")
    note = Note(trigger="blocked", agent="fake", pane="%1", locator="s:0.0")
    notify.dispatch(server, cfg_with(bell=True, osc=True, command=f"touch '{hit}'"), note)
    assert hit.exists()
    assert capfd.readouterr() == ("", "")


def test_desktop_fallback_only_when_opted_in(srv, rt, tmp_path, monkeypatch):
    pane = srv.agent_pane()
    bindir = tmp_path / "desk"
    bindir.mkdir()
    argsf = tmp_path / "args"
    fake = bindir / "notify-send"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{argsf}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setattr("sys.platform", "linux")
    server = server_for(srv)
    notify.dispatch(server, cfg_with(), note_for(srv, pane))
    assert not argsf.exists()
    notify.dispatch(server, cfg_with(desktop=True, command="true"), note_for(srv, pane))
    assert not argsf.exists()  # a configured command wins
    notify.dispatch(server, cfg_with(desktop=True), note_for(srv, pane, title="#(x) t"))
    assert argsf.read_text().splitlines() == ["--app-name=tma", "tma: fake blocked", "#(x) t"]

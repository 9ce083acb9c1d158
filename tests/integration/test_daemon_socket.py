"""The daemon's socket: hook handoff, bounds against bad clients, history, subscribers.

A real foreground `tma daemon` on a private server (test_daemon.Daemon), started with
the same manifest directory and config the hooks use, so it takes their events. Who
stamped an event is read from the daemon's own counters (its status document), the
stamps from tmux with show-options.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import Daemon, watched
from tests.helpers.daemon_socket import SockDaemon, _field, _raw, hook
from tma.runtime import daemon_files

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path, SockDaemon) as d:
        yield d


def _normal(options: dict[str, str], pid: str) -> dict[str, str]:
    """A pane's options with its times and agent pid made comparable across panes. The
    notification marker is left out: the daemon's notifier rings each blocked pane when
    its reads reach it, whichever producer stamped it."""
    out = {}
    for key, value in options.items():
        if key == "@agent_notified_at":
            continue
        if value == pid:
            value = "PID"
        elif value.isdigit() and len(value) >= 12:
            value = "TIME"
        out[key] = value
    return out


@pytest.mark.tmux_contract
def test_a_handed_off_event_is_stamped_by_the_daemon_and_the_hook_prints_nothing(srv, daemon):
    pane = srv.agent_pane()
    daemon.start()
    res = hook(srv, daemon.env, "Work", pane)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    srv.wait_for(lambda: srv.option(pane, "@agent_state") == "working", timeout=5)
    counts = daemon.counts()
    assert (counts["handoffs"], counts["handoff_naks"]) == (1, 0)
    # the daemon lists the stamps afterwards: its history holds the hook's transition
    srv.wait_for(lambda: any(t["pane"] == pane and t["to"] == "working" for t in
                             daemon_files.read_history(str(daemon.sock()))["transitions"]),
                 timeout=5)


@pytest.mark.tmux_contract
def test_handed_off_and_direct_events_write_the_same_tuple(srv, daemon):
    a, b = srv.agent_pane(), srv.agent_pane()
    daemon.start()
    direct = {k: v for k, v in daemon.env.items() if k != "XDG_RUNTIME_DIR"}  # no daemon
    payload = '{"session_id":"s1","model":"m-1","tool_name":"Bash","tool_use_id":"t9"}'
    for kind in ("Start", "Work", "Ask"):
        assert hook(srv, daemon.env, kind, a, payload).returncode == 0
        assert hook(srv, direct, kind, b, payload).returncode == 0
        srv.wait_for(lambda k=kind: srv.option(a, "@agent_state")
                     == {"Start": "idle", "Work": "working", "Ask": "blocked"}[k], timeout=5)
    assert daemon.counts()["handoffs"] == 3
    time.sleep(0.5)  # past the daemon's listing of its stamps
    pid_a, pid_b = srv.option(a, "@agent_pid"), srv.option(b, "@agent_pid")
    assert pid_a and pid_b and pid_a != pid_b
    got_a, got_b = _normal(srv.options(a), pid_a), _normal(srv.options(b), pid_b)
    assert got_a["@agent_state"] == "blocked" and got_a["@agent_detail"] == "permission"
    assert got_a == got_b


def test_a_stopped_daemon_costs_the_hook_its_deadline_and_never_a_second_stamp(srv, daemon):
    pane = srv.agent_pane()
    daemon.start()
    pid = daemon.pids()[0]
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        res = hook(srv, daemon.env, "Work", pane)
        took = time.monotonic() - t0
        assert (res.returncode, res.stdout) == (0, "")
        assert srv.option(pane, "@agent_state") == "working"  # the hook stamped it itself
        assert took < 5, took  # 0.5 s of waiting, then its own stamp
    finally:
        os.kill(pid, signal.SIGCONT)
    srv.wait_for(lambda: daemon.status() is not None, timeout=5)
    counts = daemon.counts()
    # the daemon read the frame after the hook had left: dropped, not stamped again
    assert (counts["handoffs"], counts["handoffs_abandoned"]) == (0, 1)


def test_a_nak_leaves_the_event_to_the_hook(srv, daemon, tmp_path):
    pane = srv.agent_pane()
    daemon.start()
    other = tmp_path / "other-agents"
    other.mkdir()
    (other / "fake.toml").write_text((srv.manifests / "fake.toml").read_text())
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(other), "event", "--agent", "fake", "--kind", "Work", "--pane", pane]
    res = subprocess.run(argv, input="{}", capture_output=True, text=True,
                         env=dict(daemon.env, TMA_HOOK_STRICT="1"), timeout=30)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert srv.option(pane, "@agent_state") == "working"  # stamped by the hook
    assert hook(srv, daemon.env, "NoSuchEvent", pane).returncode == 0  # unmapped
    counts = daemon.counts()
    assert (counts["handoffs"], counts["handoff_naks"]) == (0, 2)


def test_malformed_and_hostile_clients_are_refused_without_harm(srv, daemon):
    pane = srv.agent_pane()
    daemon.start()
    path = str(daemon.sock())
    assert _raw(path, b"HELLO") == b""  # an unknown request: closed
    assert _raw(path, b"TMA1" + (5 << 20).to_bytes(4, "little")) == b""  # too long
    bad = b"TMA1" + _field(b"\xff\xfe") + b"".join(_field(b"x") for _ in range(5))
    assert _raw(path, bad) == b""  # not UTF-8
    trailing = b"TMA1" + b"".join(_field(b"x") for _ in range(6)) + b"junk"
    assert _raw(path, trailing) == b""
    assert _raw(path, b"TMAQjunk") == b""
    # forty connections that never finish: at most 32 are parked, none stalls the loop
    idle = []
    for _ in range(40):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(b"TMA1\x01\x00")
        idle.append(s)
    try:
        t0 = time.monotonic()
        assert daemon.status() is not None
        res = hook(srv, daemon.env, "Work", pane)
        assert res.returncode == 0
        assert time.monotonic() - t0 < 3
        srv.wait_for(lambda: srv.option(pane, "@agent_state") == "working", timeout=5)
        counts = daemon.counts()
        assert counts["handoffs"] == 1
        assert counts["refused"] >= 5 + 8  # the five above, and the parked ones dropped
    finally:
        for s in idle:
            s.close()
    # a partial frame is dropped at its 2 s deadline
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(b"TMA")
        s.settimeout(5)
        t0 = time.monotonic()
        assert s.recv(1) == b""
        assert 1.5 < time.monotonic() - t0 < 4.5
    assert daemon.status()["pid"] == daemon.pids()[0]


def test_subscribers_beyond_sixteen_are_refused_and_a_full_one_is_dropped(srv, daemon):
    pane = srv.agent_pane()
    daemon.start()
    path = str(daemon.sock())
    subs = []
    try:
        for _ in range(16):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(path)
            s.sendall(b"TMAS")
            assert s.recv(1) == b"\x11"
            subs.append(s)
        assert _raw(path, b"TMAS") == b""  # the seventeenth
        assert daemon.counts()["subscribers"] == 16
        assert hook(srv, daemon.env, "Work", pane).returncode == 0
        assert subs[0].recv(1) == b"\x12"  # a wake
        subs[1].close()  # gone: dropped at the next wake
        assert hook(srv, daemon.env, "Stop", pane).returncode == 0
        srv.wait_for(lambda: daemon.counts()["subscribers"] == 15, timeout=5)
    finally:
        for s in subs:
            s.close()


def test_debug_transitions_prints_the_ring(srv, daemon):
    pane = srv.agent_pane()
    res = srv.tma("debug", "transitions", env={"XDG_RUNTIME_DIR": str(daemon.runtime)})
    assert res.returncode == 1 and "no daemon answering" in res.stderr
    daemon.start()
    assert hook(srv, daemon.env, "Work", pane).returncode == 0
    assert hook(srv, daemon.env, "Ask", pane).returncode == 0

    def doc():
        out = srv.tma("debug", "transitions", "--json", env={
            "XDG_RUNTIME_DIR": str(daemon.runtime)}, check=True).stdout
        return json.loads(out)

    srv.wait_for(lambda: any(t["to"] == "blocked" for t in doc()["transitions"]), timeout=5)
    d = doc()
    assert (d["schema"], d["cap"]) == (1, 256) and d["recorded"] >= 1
    import jsonschema

    jsonschema.validate(d, json.loads((SCHEMAS / "transitions.schema.json").read_text()))
    last = [t for t in d["transitions"] if t["pane"] == pane][-1]
    assert (last["to"], last["detail"], last["source"]) == ("blocked", "permission", "hook")
    text = srv.tma("debug", "transitions", env={"XDG_RUNTIME_DIR": str(daemon.runtime)},
                   check=True).stdout
    assert f"{pane}  fake" in text and "-> blocked/permission" in text


# ------------------------------------------------------------------ tma subscribe


class Sub:
    """A running `tma subscribe`, its lines read by a thread."""

    def __init__(self, srv, env: dict, *args: str) -> None:
        import threading

        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
                str(srv.manifests), "subscribe", "--json", *args]
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def docs(self) -> list[dict]:
        return [json.loads(x) for x in list(self.lines)]

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        self.thread.join(timeout=5)
        return rc, self.proc.stderr.read()


def _states(doc: dict) -> dict[str, str]:
    return {a["pane"]: a["state"] for a in doc["agents"]}


def test_push_and_poll_emit_the_same_documents(srv, daemon):
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")  # hook stamps stay as stamped
    a, b = srv.agent_pane(), srv.agent_pane()
    for pane in (a, b):
        assert hook(srv, srv.env, "Start", pane).returncode == 0
    daemon.start()
    poll_env = {k: v for k, v in daemon.env.items() if k != "XDG_RUNTIME_DIR"}
    push = Sub(srv, daemon.env)
    poll = Sub(srv, poll_env, "--changes-only")
    try:
        srv.wait_for(lambda: push.lines and poll.lines, timeout=10)
        srv.wait_for(lambda: daemon.counts()["subscribers"] == 1, timeout=5)
        for kind, pane in (("Work", a), ("Ask", b), ("Stop", a), ("Work", b)):
            assert hook(srv, daemon.env, kind, pane).returncode == 0
            n = len(push.lines)
            srv.wait_for(lambda n=n: len(push.lines) > n, timeout=4)  # pushed, not the belt
            time.sleep(1.6)  # the poller (1 s) sees every state too
        srv.wait_for(lambda: len(poll.lines) >= len(push.lines), timeout=5)
        assert daemon.counts()["handoffs"] == 4
    finally:
        rc_push, err_push = push.stop()
        rc_poll, err_poll = poll.stop()
    assert (rc_push, err_push, rc_poll, err_poll) == (0, "", 0, "")
    pushed, polled = push.docs(), poll.docs()
    assert len(pushed) == 5, [_states(d) for d in pushed]
    assert pushed == polled
    assert _states(pushed[-1]) == {a: "idle", b: "working"}
    import jsonschema

    schema = json.loads((SCHEMAS / "ls.schema.json").read_text())
    for doc in pushed:
        jsonschema.validate(doc, schema)


def test_a_daemon_killed_mid_subscribe_is_polled_silently_and_found_again(srv, daemon):
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    pane = srv.agent_pane()
    assert hook(srv, srv.env, "Start", pane).returncode == 0
    daemon.start()
    sub = Sub(srv, daemon.env, "--changes-only")
    try:
        srv.wait_for(lambda: daemon.counts()["subscribers"] == 1, timeout=10)
        daemon.stop()
        assert hook(srv, daemon.env, "Work", pane).returncode == 0  # stamped by the hook
        srv.wait_for(lambda: sub.lines and _states(sub.docs()[-1])[pane] == "working",
                     timeout=5)
        daemon.start()  # a new daemon: found again within the 5 s re-probe
        srv.wait_for(lambda: daemon.counts()["subscribers"] == 1, timeout=10)
        assert hook(srv, daemon.env, "Stop", pane).returncode == 0
        srv.wait_for(lambda: _states(sub.docs()[-1])[pane] == "idle", timeout=4)
    finally:
        rc, err = sub.stop()
    assert (rc, err) == (0, "")
    assert [_states(d)[pane] for d in sub.docs()] == ["idle", "working", "idle"]


def test_events_mode_writes_edge_records(srv, daemon):
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    srv.shell_pane()  # keeps the session (and the server) when the agent pane goes
    a = srv.agent_pane()
    assert hook(srv, srv.env, "Start", a).returncode == 0
    daemon.start()
    sub = Sub(srv, daemon.env, "--events")
    try:
        srv.wait_for(lambda: daemon.counts()["subscribers"] == 1, timeout=10)
        time.sleep(0.3)
        assert sub.lines == []  # the first cycle is the baseline
        assert hook(srv, daemon.env, "Stop", a).returncode == 0  # idle -> done (attention)
        srv.wait_for(lambda: len(sub.lines) >= 1, timeout=4)
        srv.tmux("kill-pane", "-t", a)  # vanishes: an edge to ""
        srv.wait_for(lambda: len(sub.lines) >= 2, timeout=8)
    finally:
        rc, _err = sub.stop()
    assert rc == 0
    recs = sub.docs()
    import jsonschema

    schema = json.loads((SCHEMAS / "subscribe-events.schema.json").read_text())
    for rec in recs:
        jsonschema.validate(rec, schema)
    assert [(r["pane"], r["from"], r["to"]) for r in recs] == [(a, "idle", "done"),
                                                                (a, "done", "")]


def test_subscribe_exits_0_when_stdout_closes_and_1_without_a_server(srv, daemon):
    pane = srv.agent_pane()
    daemon.start()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "subscribe", "--json"]
    proc = subprocess.Popen(argv, env=daemon.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    assert json.loads(first)["agents"][0]["pane"] == pane
    srv.wait_for(lambda: daemon.counts()["subscribers"] == 1, timeout=10)
    proc.stdout.close()  # the reader goes away; nothing changes, so nothing is written
    assert proc.wait(timeout=5) == 0
    assert proc.stderr.read() == b""
    proc.stderr.close()
    srv.kill()
    res = srv.tma("subscribe", "--json", timeout=20)
    assert res.returncode == 1 and "no tmux server running" in res.stderr
    assert srv.tma("subscribe").returncode == 2
    assert srv.tma("subscribe", "--json", "--interval", "0.5").returncode == 2


def test_a_handed_off_event_imports_only_the_client(srv, daemon):
    from tests.helpers.import_audit import FORBIDDEN, PROBE

    pane = srv.agent_pane()
    daemon.start()
    argv = ["--socket-name", srv.name, "--manifest-dir", str(srv.manifests), "event",
            "--agent", "fake", "--kind", "Work", "--pane", pane]
    res = subprocess.run([sys.executable, "-c", PROBE % argv], capture_output=True, text=True,
                         env=dict(daemon.env, TMA_HOOK_STRICT="1"), input="{}", timeout=30)
    assert res.returncode == 0, res.stderr
    mods = set(eval(res.stdout.rpartition("\n@@")[2]))  # noqa: S307 - our own repr
    assert daemon.counts()["handoffs"] == 1  # the daemon took it
    assert "tma.runtime.handoff" in mods and "_socket" in mods
    heavy = sorted(m for m in FORBIDDEN + ("socket", "tma.runtime.hook", "tma.runtime.config",
                                           "tma.runtime.manifests", "tma.tmux.adapter")
                   if m in mods)
    assert heavy == [], f"a handed-off tma event imported {heavy}"


def _notify_log(srv) -> Path:
    log = srv.root / "notify.log"
    srv.config.write_text(f'[hooks]\nhold_ms = 20000\n[notify]\nfrom_event = true\n'
                          f'on = ["blocked", "done"]\nlog = "{log}"\n')
    return log


def _logged(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    return [(d["state"], d["pane"]) for d in map(json.loads, log.read_text().splitlines())]


def test_concurrent_handed_off_events_notify_once(srv, daemon):
    log = _notify_log(srv)
    pane = srv.agent_pane()
    daemon.start()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "event", "--agent", "fake", "--kind", "Ask", "--pane", pane]
    env = dict(daemon.env, TMA_HOOK_STRICT="1")
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for _ in range(5)]
    for p in procs:
        out, err = p.communicate(b"{}", timeout=30)
        assert (p.returncode, out, err) == (0, b"", b"")
    srv.wait_for(lambda: srv.option(pane, "@agent_state") == "blocked", timeout=5)
    time.sleep(0.5)
    assert daemon.counts()["handoffs"] == 5
    assert _logged(log) == [("blocked", pane)]


@pytest.mark.tmux_contract
def test_the_reply_lane_holds_in_the_hook_with_a_daemon_up(srv, short_tmp):
    log = _notify_log(srv)
    # a short path: the daemon's socket goes under it, and a unix socket's path has ~107
    # bytes (under pytest-xdist's worker directories tmp_path left too few of them)
    runtime = short_tmp / "rt"
    runtime.mkdir(mode=0o700)
    plain = Daemon(srv, runtime)  # bundled manifests, like the hooks below
    pane = srv.agent_pane("claude")
    try:
        plain.start()
        env = dict(plain.env, TMA_HOOK_STRICT="1")
        base = [sys.executable, "-m", "tma", "--socket-name", srv.name, "event", "--agent",
                "claude", "--pane", pane, "--kind"]
        done = subprocess.run(base + ["UserPromptSubmit"], input='{"session_id":"s1"}',
                              capture_output=True, text=True, env=env, timeout=30)
        assert (done.returncode, done.stdout) == (0, "")
        srv.wait_for(lambda: srv.option(pane, "@agent_state") == "working", timeout=5)
        assert plain.status()["handoffs"] == 1
        proc = subprocess.Popen(base + ["PermissionRequest"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        proc.stdin.write(json.dumps({"session_id": "s1", "tool_name": "Bash",
                                     "prompt_id": "p-1"}).encode())
        proc.stdin.close()
        srv.wait_for(lambda: srv.option(pane, "@tma_reply_holder"))
        res = srv.tma("act", "approve", "--pane", pane, manifests=False,
                      env={"XDG_RUNTIME_DIR": str(runtime)})
        assert res.returncode == 0 and "over the hook lane" in res.stderr, res.stderr
        out = proc.stdout.read()
        assert proc.wait(timeout=10) == 0
        assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
        status = plain.status()
        assert (status["handoffs"], status["handoff_naks"]) == (1, 0)  # never offered
        assert _logged(log) == [("blocked", pane)]
    finally:
        plain.stop()


def test_a_hook_that_stamped_itself_wakes_the_push_subscribers(srv, daemon, tmp_path):
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    pane = srv.agent_pane()
    assert hook(srv, srv.env, "Start", pane).returncode == 0
    daemon.start()
    other = tmp_path / "other-agents"  # another manifest dir: the daemon NAKs
    other.mkdir()
    (other / "fake.toml").write_text((srv.manifests / "fake.toml").read_text())
    sub = Sub(srv, daemon.env)
    try:
        srv.wait_for(lambda: sub.lines and daemon.counts()["subscribers"] == 1, timeout=10)
        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
                str(other), "event", "--agent", "fake", "--kind", "Work", "--pane", pane]
        assert subprocess.run(argv, input=b"{}", env=daemon.env, timeout=30).returncode == 0
        t0 = time.monotonic()
        srv.wait_for(lambda: len(sub.lines) >= 2, timeout=6)
        took = time.monotonic() - t0
        assert _states(sub.docs()[-1])[pane] == "working"
        assert took < 2.5, took  # the wake, not the 5 s belt
        assert daemon.counts()["handoff_naks"] == 1
    finally:
        assert sub.stop()[0] == 0


def test_selectors_narrow_the_panes_before_anything_is_compared(srv, daemon):
    srv.config.write_text("[fold]\nfreshness_secs = 120\n")
    a = srv.agent_pane(session="s")
    b = srv.agent_pane(session="t")
    for pane in (a, b):
        assert hook(srv, srv.env, "Start", pane).returncode == 0
    daemon.start()
    sub = Sub(srv, daemon.env, "--session", "t")
    try:
        srv.wait_for(lambda: sub.lines and daemon.counts()["subscribers"] == 1, timeout=10)
        assert hook(srv, daemon.env, "Work", a).returncode == 0  # out of scope: no line
        time.sleep(1.0)
        assert hook(srv, daemon.env, "Work", b).returncode == 0
        srv.wait_for(lambda: len(sub.lines) >= 2, timeout=4)
        time.sleep(0.5)
    finally:
        assert sub.stop()[0] == 0
    assert [_states(d) for d in sub.docs()] == [{b: "idle"}, {b: "working"}]

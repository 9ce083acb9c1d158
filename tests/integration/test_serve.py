"""`tma serve --stdio` as a device meets it: a real serve process on a pipe, in front of a
private tmux server with real agent-named processes drawing real captured screens.

Every frame serve writes is checked against schemas/proto.schema.json and parsed back
into tma's frame types; nothing but frames may reach stdout.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.schemas import _schema
from tma.core import fixture, proto

jsonschema = pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
SCHEMA = _schema("proto.schema.json")
REPO = Path(__file__).resolve().parents[2]


class Device:
    """One serve process and the device end of its pipe."""

    def __init__(self, srv, *flags: str) -> None:
        # the bundled manifests (claude's) only, as test_act_keys reads its recorders
        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "serve", "--stdio",
                *flags]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=srv.env)
        self.buf = b""
        self.n = 0

    def send(self, t: str, **body) -> str:
        self.n += 1
        rid = str(self.n)
        self.raw(json.dumps({"schema": 1, "id": rid, "t": t, **body}).encode() + b"\n")
        return rid

    def raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def frame(self, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, "serve sent no frame in time"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"serve closed stdout: {self.proc.stderr.read().decode()}"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        doc = json.loads(line)
        jsonschema.validate(doc, SCHEMA)
        parsed = proto.parse_line(line, proto.RESPONSE)  # and it reads back
        assert proto.dumps(parsed) == line.decode()
        return doc

    def ask(self, t: str, **body) -> dict:
        rid = self.send(t, **body)
        doc = self.frame()
        assert doc["id"] == rid
        return doc

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=10)
        rest = self.buf + self.proc.stdout.read()
        assert rest == b"", f"bytes after the last frame: {rest!r}"
        return code


@pytest.fixture
def device(srv):
    opened: list[Device] = []

    def open_(*flags: str) -> Device:
        d = Device(srv, *flags)
        opened.append(d)
        return d

    yield open_
    for d in opened:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait()


def hello(d: Device) -> dict:
    return d.ask("hello", app="test", app_version="0", device="t")


def _claude(srv, screen: str = "blocked") -> KeyRecorder:
    cap = fixture.parse((CAPTURES / f"claude-2.1.332_{screen}.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    return KeyRecorder.start(srv, "claude", cap, after=idle, redraw_ms=100)


def test_no_tmux_server_is_exit_1_before_any_frame(srv, device):
    d = device()
    assert d.proc.wait(timeout=10) == 1
    assert d.proc.stdout.read() == b""
    assert b"no tmux server" in d.proc.stderr.read()


def test_hello_first_then_snapshot_without_titles(srv, device):
    rec = _claude(srv)
    srv.tmux("select-pane", "-t", rec.pane, "-T", "secret-title")
    d = device()
    early = d.ask("snapshot")
    assert early["t"] == "error" and early["code"] == "bad-request"
    h = hello(d)
    assert h["t"] == "hello" and h["scopes"] == ["read"]
    assert h["host"] == os.uname().nodename
    snap = d.ask("snapshot")
    rows = {r["pane"]: r for r in snap["agents"]}
    assert rows[rec.pane]["agent"] == "claude"
    assert rows[rec.pane]["state"] == "blocked"
    assert "title" not in rows[rec.pane] and b"secret-title" not in json.dumps(snap).encode()
    again = d.ask("hello", app="test", app_version="0", device="t")
    assert again["code"] == "bad-request"
    assert d.close() == 0


def test_a_card_request_is_answered_with_the_panes_card(srv, device):
    rec = _claude(srv)
    shell = srv.shell_pane()
    d = device()
    hello(d)
    c = d.ask("card", pane=rec.pane)
    assert (c["t"], c["card"], c["lane"], c["extraction"]) == ("card", "permission", "screen",
                                                               "exact"), c
    assert c["pending_call"]["input"] == {"command": "echo hi > mockllm-hi.txt"}
    assert c["binder"]["expect_episode_ms"] > 0
    assert d.ask("card", pane=shell)["code"] == "not-found"  # no agent there
    assert d.close() == 0


def test_a_blocked_row_says_what_its_dialog_asks_as_the_card_does(srv, device):
    # no hook parked this call: only the screen names it, and the row a device rings
    # and previews from carries what the card reads there
    rec = _claude(srv)
    d = device()
    hello(d)
    card = d.ask("card", pane=rec.pane)
    assert card["pending_call"]["tool"] == "Bash"
    for _ in range(2):  # the second read is the first's, not a capture of its own
        row = next(r for r in d.ask("snapshot")["agents"] if r["pane"] == rec.pane)
        assert (row["pending_tool"], row["pending_summary"]) == (
            "Bash", "Bash: echo hi > mockllm-hi.txt"), row
    assert d.close() == 0


def test_bad_lines_are_named_and_the_connection_goes_on(srv, device):
    srv.shell_pane()
    d = device()
    hello(d)
    d.raw(b"not json\n")
    assert d.frame()["code"] == "bad-request"
    d.raw(b"\xff\xfe\n")
    assert d.frame()["code"] == "bad-request"
    d.raw(b"x" * (70 * 1024) + b"\n")
    assert d.frame()["code"] == "bad-request"
    assert d.ask("snapshot", )["t"] == "snapshot"
    d.raw(json.dumps({"schema": 2, "id": "9", "t": "snapshot"}).encode() + b"\n")
    assert d.frame()["code"] == "unsupported-schema"
    assert d.ask("window", pane="%999")["code"] == "not-found"
    assert d.ask("card", pane="%999")["code"] == "not-found"
    assert d.close() == 0


def test_a_read_only_device_cannot_act(srv, device):
    rec = _claude(srv)
    d = device("--scope", "read")
    hello(d)
    r = d.ask("dispatch", slot="s-1", host="h", pane=rec.pane, action="approve",
              binder={"expect_episode_ms": 0})
    assert (r["outcome"], r["reason"], r["exit_code"]) == ("refused", "scope-denied", 4)
    assert rec.settle() == b""
    exec_like = device("--scope", "act:answer,act:steer,act:always")
    hello(exec_like)
    r = exec_like.ask("dispatch", slot="s-2", host="h", pane=rec.pane, action="compact",
                      binder={"expect_episode_ms": 0})
    assert r["reason"] == "scope-denied"  # outside the scope table: no grant reaches it
    assert rec.settle() == b""


def test_dispatch_types_once_and_a_repeated_slot_gets_the_receipt(srv, device):
    rec = _claude(srv)
    srv.ls(manifests=False)  # a cycle stamps it blocked
    d = device("--scope", "act:answer")
    hello(d)
    row = next(r for r in d.ask("snapshot")["agents"] if r["pane"] == rec.pane)
    binder = {"expect_episode_ms": row["episode_ms"]}
    first = d.ask("dispatch", slot="slot-A", host="h", pane=rec.pane, action="approve",
                  binder=binder)
    assert (first["outcome"], first["cached"]) == ("sent", False), first
    sent = rec.settle(expect=1)
    assert sent  # the approve key arrived
    again = d.ask("dispatch", slot="slot-A", host="h", pane=rec.pane, action="approve",
                  binder=binder)
    assert again["cached"] is True and again["outcome"] == "sent"
    # another serve process (a reconnect) sees the same ledger
    d2 = device("--scope", "act:answer")
    hello(d2)
    third = d2.ask("dispatch", slot="slot-A", host="h", pane=rec.pane, action="approve",
                   binder=binder)
    assert third["cached"] is True
    assert rec.settle() == sent  # exactly one answer reached the agent
    got = d2.ask("receipts", slot="slot-A")
    assert [r["outcome"] for r in got["receipts"]] == ["sent"]


def test_subscribe_baseline_then_edges(srv, device):
    pane = _claude(srv).pane
    srv.shell_pane()  # keeps the server up when the agent's pane goes
    d = device("--interval", "300")
    hello(d)
    ack = d.ask("subscribe", events=True)
    assert ack["t"] == "ack"
    srv.tmux("kill-pane", "-t", pane)
    edge = d.frame(timeout=10)
    assert edge["t"] == "edge" and edge["id"] == ack["id"]
    assert (edge["pane"], edge["to"]) == (pane, "")
    srv.tmux("kill-server")  # the host's tmux goes away: a named error, the link stays
    err = d.frame(timeout=10)
    assert (err["t"], err["code"], err["id"]) == ("error", "internal", ack["id"])
    assert "no tmux server" in err["message"]
    assert d.ask("snapshot")["code"] == "internal"
    assert d.close() == 0


def test_the_connection_cap_refuses_with_a_frame_and_exit_2(srv, device):
    srv.shell_pane()
    srv.config.write_text("[serve]\nmax_connections = 1\n")
    first = device()
    hello(first)
    second = device()
    refused = second.frame()
    assert (refused["id"], refused["code"]) == ("0", "too-many-connections")
    assert second.proc.wait(timeout=10) == 2
    first.proc.terminate()  # SIGTERM: a clean end, and the seat is free again
    assert first.proc.wait(timeout=10) == 0
    third = device()
    assert hello(third)["t"] == "hello"
    assert third.close() == 0


def _ledger(srv) -> list[dict]:
    path = Path(srv.env["XDG_STATE_HOME"]) / "tma" / "serve" / "ledger.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_dispatch_is_recorded_under_the_forced_device_not_the_frames(srv, device):
    srv.shell_pane()
    # the forced command says who this is; the frame's `device` is the client's claim
    d = device("--device", "laptop", "--scope", "act:answer")
    hello(d)
    r = d.ask("dispatch", slot="s-mallory", host="h", pane="%999", action="approve",
              binder={"expect_episode_ms": 0}, device="mallory")
    assert r["device"] == "laptop", r
    assert {x["device"] for x in _ledger(srv)} == {"laptop"}
    # refused at the scope gate (no ledger line): the receipt still names the forced one
    r = d.ask("dispatch", slot="s-steer", host="h", pane="%999", action="steer", text="x",
              binder={"expect_episode_ms": 0}, device="mallory")
    assert (r["reason"], r["device"]) == ("scope-denied", "laptop")
    assert d.close() == 0
    assert "'mallory'" in d.proc.stderr.read().decode()  # only logged


def test_a_connection_reads_only_its_own_devices_receipts(srv, device):
    srv.shell_pane()

    def dispatch(d: Device, slot: str) -> dict:
        return d.ask("dispatch", slot=slot, host="h", pane="%999", action="approve",
                     binder={"expect_episode_ms": 0})

    laptop = device("--device", "laptop", "--scope", "act:answer")
    phone = device("--device", "phone", "--scope", "act:answer")
    anon = device("--scope", "act:answer")
    for d in (laptop, phone, anon):
        hello(d)
    assert dispatch(laptop, "s-laptop")["device"] == "laptop"
    assert dispatch(phone, "s-phone")["device"] == "phone"
    assert "device" not in dispatch(anon, "s-anon")
    spy = device("--device", "spy")  # read-only: receipts are within `read`
    hello(spy)

    def slots(d: Device, **query) -> list[str]:
        return [r["slot"] for r in d.ask("receipts", **query)["receipts"]]

    assert slots(laptop, since_ms=0) == ["s-laptop"]
    assert slots(phone, since_ms=0) == ["s-phone"]
    assert slots(anon, since_ms=0) == ["s-anon"]  # a serve without --device: the unnamed
    assert slots(spy, since_ms=0) == []
    assert slots(spy, slot="s-laptop") == [] and slots(phone, slot="s-laptop") == []
    # the device's own slot after a dropped link, and the daemon's keepalive (since now)
    assert slots(laptop, slot="s-laptop") == ["s-laptop"]
    assert slots(laptop, since_ms=int(time.time() * 1000) + 1000) == []
    # the ledger itself still holds all three (a repeat of any slot is still its replay)
    assert {x["slot"] for x in _ledger(srv)} == {"s-laptop", "s-phone", "s-anon"}
    for d in (laptop, phone, anon, spy):
        assert d.close() == 0


# -- the seats: idle connections end, a quiet one gives way, one device has a share


def _greet(d: Device) -> dict:
    """hello, or the refusal a connection without a seat gets first (id "0")."""
    rid = d.send("hello", app="test", app_version="0", device="t")
    doc = d.frame()
    assert doc["id"] in (rid, "0"), doc
    return doc


def _refused(d: Device) -> str:
    """The refusal a connection without a seat writes as it starts, unasked (its serve
    may be gone already: nothing is sent to it)."""
    doc = d.frame()
    assert (doc["t"], doc["id"], doc["code"]) == ("error", "0", "too-many-connections"), doc
    assert d.proc.wait(timeout=10) == 2
    return doc["message"]


def _busy(clients: list[Device], until: float) -> None:
    """The daemon's link as these clients: a `receipts` keepalive every half second."""
    while True:
        for c in clients:
            assert c.ask("receipts", since_ms=int(time.time() * 1000))["receipts"] == []
        left = until - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(0.5, left))


def _asking_until_decided(newcomer: Device, others: list[Device]) -> float:
    """Keep `others` asking (a keepalive each, every 0.2 s) until the newcomer's serve has
    decided its seat and, refused, exited; the time of the others' last request. A seat
    is decided as serve starts, a Python start away: on a loaded machine that can take
    seconds, and a connection that was merely waiting for it would be quiet long
    enough to give its seat to the newcomer."""
    deadline = time.monotonic() + 30
    while True:
        for c in others:
            assert c.ask("receipts", since_ms=int(time.time() * 1000))["receipts"] == []
        heard = time.monotonic()
        if newcomer.proc.poll() is not None or heard > deadline:
            return heard
        time.sleep(0.2)


def _ended(d: Device, words: str) -> None:
    doc = d.frame(timeout=10)
    assert (doc["t"], doc["id"], doc["code"]) == ("error", "0", "too-many-connections"), doc
    assert words in doc["message"], doc
    assert d.close() == 0


def test_idle_connections_are_ended_and_free_their_seats(srv, device):
    srv.shell_pane()
    srv.config.write_text("[serve]\nidle_secs = 3\n")
    idle = [device("--device", f"k{n}") for n in range(4)]  # every seat, four keys
    # every hello sent before any answer is read: each serve finds its request waiting
    # as it starts (greeted one by one, the last ones could sit idle past the bound
    # while the first were still starting on a loaded machine)
    rids = [d.send("hello", app="test", app_version="0", device="t") for d in idle]
    for d, rid in zip(idle, rids, strict=True):
        doc = d.frame()
        assert (doc["id"], doc["t"]) == (rid, "hello"), doc
    start = time.monotonic()
    for d in idle:  # each ended at the bound, with a frame that says why
        _ended(d, "idle: no request for 3 s ([serve] idle_secs)")
    assert time.monotonic() - start < 8
    fifth = device("--device", "laptop")
    assert _greet(fifth)["t"] == "hello"
    _busy([fifth], time.monotonic() + 4)  # past the bound: a connection that asks stays
    assert fifth.close() == 0


def test_a_full_host_gives_the_seat_idle_longest_to_a_newcomer(srv, device):
    srv.shell_pane()
    # quiet for half of idle_secs (5 s) is quiet enough to give way when seats run out
    srv.config.write_text("[serve]\nidle_secs = 10\n")
    quiet = device("--device", "q")
    assert _greet(quiet)["t"] == "hello"
    busy = [device("--device", f"b{n}") for n in range(3)]
    for d in busy:
        assert _greet(d)["t"] == "hello"
    # every seat taken, none quiet for 5 s yet: refused, saying how a seat comes free
    early = device("--device", "early")
    heard = _asking_until_decided(early, [quiet, *busy])
    message = _refused(early)
    assert "at most 4 connections" in message and "idle long enough" in message
    _busy(busy, heard + 5.5)
    late = device("--device", "late")
    assert _greet(late)["t"] == "hello"  # in, well before the 10 s bound
    assert time.monotonic() - heard < 10
    _ended(quiet, "gave its seat to a new one")
    _busy(busy, time.monotonic())  # the busy ones were never the ones to go
    for d in (late, *busy):
        assert d.close() == 0


def test_one_device_holds_at_most_its_share_of_the_seats(srv, device):
    srv.shell_pane()
    # 4 seats: a share of 2. The key's newcomer must arrive while its quiet seat has been
    # quiet for half of idle_secs and not yet all of it: a window of idle_secs / 2 for a
    # serve to start, which at 10 s (5 s) one start on a loaded machine overran
    srv.config.write_text("[serve]\nidle_secs = 20\n")
    unnamed = [device() for _ in range(3)]  # no --device, no identity to share by
    for d in unnamed:
        assert _greet(d)["t"] == "hello"
    for d in unnamed:
        assert d.close() == 0

    other = device("--device", "other")  # the quietest of all from here on
    mine = [device("--device", "key") for _ in range(2)]
    for d in (other, *mine):
        assert _greet(d)["t"] == "hello"
    newcomer = device("--device", "key")
    heard = _asking_until_decided(newcomer, [other, *mine])
    message = _refused(newcomer)  # a seat is free, but not for this key
    assert "device 'key' already holds 2" in message and "max_per_device = 2" in message
    # once its own quiet seat may go, the key's newcomer takes that one, never another
    # device's (however quieter)
    _busy(mine[1:], heard + 10.5)
    again = device("--device", "key")
    assert _greet(again)["t"] == "hello"
    _ended(mine[0], "gave its seat to a new one")
    assert other.ask("snapshot")["t"] == "snapshot"
    for d in (again, mine[1], other):
        assert d.close() == 0


def test_a_device_that_reads_nothing_cannot_hold_its_seat(srv, device):
    srv.shell_pane()
    srv.config.write_text("[serve]\nmax_connections = 1\nidle_secs = 3\n")
    d = device("--device", "deaf")
    assert _greet(d)["t"] == "hello"
    # 2000 bad lines, 4 KB: their error frames (about 240 KB) fill the pipe this end
    # never reads, so serve's next write cannot finish
    d.raw(b"x\n" * 2000)
    start = time.monotonic()
    assert d.proc.wait(timeout=15) == 0  # not blocked forever in a write
    assert 2.5 < time.monotonic() - start < 12
    assert b"read nothing for 3 s" in d.proc.stderr.read()
    fresh = device("--device", "next")
    assert _greet(fresh)["t"] == "hello"  # its seat is free
    assert fresh.close() == 0


def test_a_seat_whose_pid_is_another_process_now_is_never_signalled(srv, device):
    srv.shell_pane()
    srv.config.write_text("[serve]\nmax_connections = 1\nidle_secs = 2\n")
    # a seat naming a live process that is not the one that wrote it (the pid reused):
    # quiet for an hour, yet asking it to leave would signal a stranger
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        seats = Path(srv.env["XDG_RUNTIME_DIR"]) / "tma" / "serve"
        seats.parent.mkdir(mode=0o700)
        seats.mkdir(mode=0o700)
        seat = seats / "slot-0.conn"
        seat.write_text(f"pid={stranger.pid}\nstart=1\ndevice=gone\n")
        os.utime(seat, (time.time() - 3600, time.time() - 3600))
        message = _refused(device("--device", "newcomer"))
        assert "at most 1 connections" in message
        assert stranger.poll() is None  # never signalled
    finally:
        stranger.kill()
        stranger.wait()
    # its process gone, the seat is free again
    d = device("--device", "newcomer")
    assert _greet(d)["t"] == "hello"
    assert d.close() == 0


def test_one_socket_as_stdin_and_stdout_as_sshd_gives_it(srv):
    # OpenSSH hands a command without a pty one socketpair end as both stdin and stdout:
    # the non-blocking mode serve sets on its stdout is its stdin's too
    srv.shell_pane()
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, "-m", "tma", "--socket-name", srv.name, "serve",
                             "--stdio"], stdin=theirs, stdout=theirs, stderr=subprocess.PIPE,
                            env=srv.env)
    theirs.close()
    try:
        reader = ours.makefile("rb")
        for n, t in enumerate(("hello", "snapshot", "receipts"), 1):
            body = {"app": "t", "app_version": "0", "device": "t"} if t == "hello" else (
                {"since_ms": 0} if t == "receipts" else {})
            ours.sendall(json.dumps({"schema": 1, "id": str(n), "t": t, **body}).encode()
                         + b"\n")
            doc = json.loads(reader.readline())
            assert (doc["id"], doc["t"]) == (str(n), t), doc
        ours.shutdown(socket.SHUT_WR)
        assert proc.wait(timeout=10) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ours.close()


def test_window_and_event_read_the_panes_transcript(srv, device):
    # the pane's transcript, named by its hook, read through the tests' synthetic store
    srv.env.update(TMA_TRANSCRIPT_STORES="claude=tests.helpers.synthetic_store",
                   PYTHONPATH=str(REPO))
    path = srv.root / "t.jsonl"
    recs = [{"type": "meta", "session": "s-1", "cwd": "/w", "version": "2", "model": "m"}]
    for i in range(150):
        recs += [{"type": "user", "text": f"question {i}"},
                 {"type": "assistant", "text": f"answer {i}\nwith a second line",
                  "calls": [{"name": "Bash", "id": f"c{i}", "input": {"command": "ls"}}]},
                 {"type": "result", "id": f"c{i}", "ok": True, "output": "a.py"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    pane = srv.agent_pane("claude")
    res = srv.tma("event", "--agent", "claude", "--kind", "UserPromptSubmit", "--pane", pane,
                  input=json.dumps({"session_id": "s-1", "transcript_path": str(path)}),
                  manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0, res.stderr
    shell = srv.shell_pane()
    d = device()
    hello(d)
    w = d.ask("window", pane=pane)
    assert (w["t"], w["pane"], w["agent"]) == ("window", pane, "claude")
    assert len(w["events"]) == 200 and len(json.dumps(w, separators=(",", ":"))) < 32 * 1024
    assert [e["kind"] for e in w["events"][:4]] == ["tool_result", "tool_call", "assistant_text",
                                                    "user_message"]
    assert w["session"]["session_id"] == "s-1" and w["unknown"] == 0
    text = next(e for e in w["events"] if e["kind"] == "assistant_text")
    ev = d.ask("event", pane=pane, cursor=text["cursor"])
    assert ev["body"] == {"kind": "text", "text": "answer 149\nwith a second line"}
    older = d.ask("window", pane=pane, before=w["older"], last=1000)
    assert len(older["events"]) + 200 == 150 * 4 + 1 or older["budget_truncated"]
    assert d.ask("window", pane=shell)["code"] == "not-found"  # no agent there
    with open(path, "r+b") as fh:  # the transcript truncated under the device's cursors
        fh.truncate(100)
    assert d.ask("event", pane=pane, cursor=text["cursor"])["code"] == "cursor-invalid"
    assert d.close() == 0

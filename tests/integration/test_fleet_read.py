"""Reading a fleet host's panes over a REAL OpenSSH server: `tma card --pane HOST:%N`,
`tma wait --pane HOST:%N` and `tma subscribe --json --hosts`.

This machine: a private tmux server with a shell pane, its own HOME and config, and (for
wait and subscribe) a real `tma daemon` holding the one link to the host. The host: the
test's tmux server `srv` behind sshd's forced command `tma serve --stdio`, with a fake
Claude drawing a captured screen (idle, then blocked once a key reaches it).

The link is cut by stopping sshd and every session it forked (SIGSTOP: a hung machine,
no FIN) or by killing it (the link ends at once).
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.schemas import _schema
from tma.core import fixture

jsonschema = pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
EVENTS_SCHEMA = _schema("subscribe-events.schema.json")
LS_SCHEMA = _schema("ls.schema.json")


@pytest.fixture
def local(fleet_local):
    return fleet_local


@pytest.fixture
def daemon(fleet_daemon):
    return fleet_daemon


def _capture(name: str):
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text("utf-8"))


def _setup(srv, sshd, local, first: str = "blocked", then: str = "idle") -> KeyRecorder:
    """The host's fake Claude showing `first`, redrawing `then` once a key reaches it."""
    rec = KeyRecorder.start(srv, "claude", _capture(first), after=_capture(then),
                            redraw_ms=100)
    sshd.set_command(sshd.serve_command(srv, "--interval", "500"))
    res = local.tma("host", "add", "box", "tma-test", "--via", sshd.via())
    assert res.returncode == 0, res.stderr
    srv.wait_for(lambda: (srv.row(rec.pane, manifests=False) or {}).get("state") == first, timeout=15)
    return rec


def test_card_of_a_remote_pane_is_the_hosts_card(srv, sshd, local):
    rec = _setup(srv, sshd, local)
    there = srv.tma("card", "--pane", rec.pane, "--json", manifests=False)
    assert there.returncode == 0, there.stderr
    res = local.tma("card", "--pane", f"box:{rec.pane}", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    assert doc == json.loads(there.stdout)
    assert doc["card"] == "permission" and doc["pane"] == rec.pane, doc
    # for a person: the host's card as text, the pane named as it is typed here
    text = local.tma("card", "--pane", f"box:{rec.pane}")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"box:{rec.pane} claude asks permission"), text.stdout
    # a pane the host has no agent on: exit 3, as a local one
    gone = local.tma("card", "--pane", "box:%999")
    assert gone.returncode == 3 and "box:%999" in gone.stderr, gone.stderr
    # an unknown host: a usage error naming it
    nohost = local.tma("card", "--pane", f"nosuch:{rec.pane}")
    assert nohost.returncode == 2 and "nosuch" in nohost.stderr, nohost.stderr
    assert "Traceback" not in gone.stderr + nohost.stderr
    # --timeout bounds a host's answer only
    assert local.tma("card", "--pane", "%1", "--timeout", "2").returncode == 2


def test_card_on_a_hung_or_dead_host_is_a_named_error_in_time(srv, sshd, local):
    rec = _setup(srv, sshd, local)
    assert local.tma("card", "--pane", f"box:{rec.pane}").returncode == 0
    sshd.signal(signal.SIGSTOP)  # hung: the connection stays open, nothing answers
    try:
        start = time.monotonic()
        res = local.tma("card", "--pane", f"box:{rec.pane}", "--timeout", "2", timeout=30)
        took = time.monotonic() - start
    finally:
        sshd.signal(signal.SIGCONT)
    assert res.returncode == 1, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert "tma: host box did not answer" in res.stderr and "timeout" in res.stderr, res.stderr
    assert took < 6, f"took {took:.1f}s"
    sshd.kill()
    start = time.monotonic()
    res = local.tma("card", "--pane", f"box:{rec.pane}", "--json", timeout=30)
    took = time.monotonic() - start
    assert res.returncode == 1 and res.stdout == "", res
    assert "tma: host box did not answer" in res.stderr, res.stderr
    assert took < 8, f"took {took:.1f}s"
    print(f"\ncard: a dead host named in {took:.2f}s")


def test_transcript_and_last_of_a_remote_pane_are_the_hosts(srv, sshd, local, tmp_path):
    # the host's claude pane named its transcript by hook; the host reads it through the
    # tests' synthetic store (its forced command keeps TMA_TRANSCRIPT_STORES)
    srv.env.update(TMA_TRANSCRIPT_STORES="claude=tests.helpers.synthetic_store",
                   PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    path = srv.root / "t.jsonl"
    recs = [{"type": "meta", "session": "s-9", "cwd": "/w", "version": "2", "model": "m"}]
    for i in range(3):
        recs += [{"type": "user", "text": f"question {i}"},
                 {"type": "assistant", "text": f"answer {i}\n\x1b]52;c;eA==\x07second line"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    pane = srv.agent_pane("claude")
    res = srv.tma("event", "--agent", "claude", "--kind", "UserPromptSubmit", "--pane", pane,
                  input=json.dumps({"session_id": "s-9", "transcript_path": str(path)}),
                  manifests=False, env={"TMA_HOOK_STRICT": "1"})
    assert res.returncode == 0, res.stderr
    sshd.set_command(sshd.serve_command(srv, "--interval", "500"))
    assert local.tma("host", "add", "box", "tma-test", "--via", sshd.via()).returncode == 0
    res = local.tma("transcript", "--pane", f"box:{pane}", "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, _schema("transcript.schema.json"))
    assert (doc["pane"], doc["host"], doc["agent"]) == (f"box:{pane}", "box", "claude")
    assert [e["kind"] for e in doc["events"]] == ["assistant_text", "user_message"] * 3 + [
        "session_meta"]
    assert all(e["body"] is None for e in doc["events"])  # a window carries headers only
    one = local.tma("transcript", "--pane", f"box:{pane}", "--event",
                    doc["events"][0]["cursor"])
    assert (one.returncode, one.stdout) == (0, "answer 2\n]52;c;eA==second line\n"), one.stderr
    last = local.tma("last", "--pane", f"box:{pane}", "--turns", "2")
    assert (last.returncode, last.stdout) == (
        0, "answer 1\n]52;c;eA==second line\n\nanswer 2\n]52;c;eA==second line\n"), last.stderr
    gone = local.tma("last", "--pane", "box:%999")
    assert gone.returncode == 3 and "box:%999" in gone.stderr, gone.stderr
    bad = local.tma("transcript", "--pane", f"box:{pane}", "--event", "t1.1.2.3.4.0")
    assert bad.returncode == 4 and "cursor-invalid" in bad.stderr, bad.stderr


def _row(res: subprocess.CompletedProcess) -> dict:
    assert res.returncode == 0, (res.returncode, res.stderr)
    doc = json.loads(res.stdout)
    assert doc["schema"] == 1
    return doc


def test_wait_on_a_remote_pane_without_and_with_the_daemon(srv, sshd, local, daemon):
    rec = _setup(srv, sshd, local, first="idle", then="blocked")
    target = f"box:{rec.pane}"
    # no daemon: probes; not blocked yet, so the timeout ends it
    start = time.monotonic()
    res = local.tma("wait", "--pane", target, "--until", "blocked", "--timeout", "2")
    assert res.returncode == 124, (res.returncode, res.stderr)
    assert "timed out after 2s" in res.stderr and time.monotonic() - start < 10
    row = _row(local.tma("wait", "--pane", target, "--until", "idle", "--json"))
    assert (row["host"], row["pane"], row["state"]) == ("box", rec.pane, "idle")
    # a pane the host has no agent on: exit 3; an unknown host: usage
    assert local.tma("wait", "--pane", "box:%999", "--until", "idle").returncode == 3
    res = local.tma("wait", "--pane", "nosuch:%1", "--until", "idle")
    assert res.returncode == 2 and "nosuch" in res.stderr, res.stderr

    daemon.start()
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    proc = subprocess.Popen(local.argv("wait", "--pane", target, "--until", "blocked",
                                       "--timeout", "30", "--json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=local.env)
    time.sleep(1.5)
    assert proc.poll() is None, proc.communicate()
    srv.tmux("send-keys", "-t", rec.pane, "x")  # the agent redraws its permission prompt
    asked = time.monotonic()
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - asked
    assert proc.returncode == 0, err
    row = json.loads(out)
    assert (row["host"], row["pane"], row["state"], row["stale"]) == ("box", rec.pane,
                                                                     "blocked", False)
    print(f"\nwait: box:{rec.pane} blocked seen {took:.2f}s after the key")

    # the host hangs: its row stays (stale, blocked) but never satisfies a wait
    sshd.signal(signal.SIGSTOP)
    local.wait_for(lambda: local.host_state() == "offline", timeout=25, interval=0.3)
    start = time.monotonic()
    res = local.tma("wait", "--pane", target, "--until", "blocked", "--timeout", "3")
    assert res.returncode == 124, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == "" and "tma: host box is offline" in res.stderr, res.stderr
    assert time.monotonic() - start < 10
    # with --hosts --any the same: a local shell pane and the stale row match nothing
    res = local.tma("wait", "--hosts", "--any", "--until", "blocked", "--timeout", "2")
    assert res.returncode == 124 and "tma: host box is offline" in res.stderr, res.stderr
    sshd.signal(signal.SIGCONT)
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    res = local.tma("wait", "--hosts", "--any", "--until", "blocked", "--timeout", "10")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"box:{rec.pane}\tclaude\tblocked"), res.stdout


class Lines:
    """A subscriber's stdout read line by line with a deadline."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.sel = selectors.DefaultSelector()
        assert proc.stdout is not None
        self.sel.register(proc.stdout, selectors.EVENT_READ)

    def until(self, pred, timeout: float) -> list[dict]:
        seen: list[dict] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.sel.select(max(0.0, deadline - time.monotonic())):
                break
            line = self.proc.stdout.readline()
            if not line:
                break
            seen.append(json.loads(line))
            if pred(seen[-1]):
                return seen
        raise AssertionError(f"not seen in {timeout}s; got {seen}")


def test_subscribe_hosts_carries_remote_rows_edges_and_host_records(
        srv, sshd, local, daemon):
    rec = _setup(srv, sshd, local, first="idle", then="blocked")
    # no daemon: the hosts are probed, the document the same shape as ls --json --hosts
    polled = subprocess.Popen(local.argv("subscribe", "--json", "--hosts"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=local.env)
    try:
        first = Lines(polled).until(lambda d: True, 20)[0]
    finally:
        polled.send_signal(signal.SIGTERM)
        polled.communicate(timeout=10)
    jsonschema.validate(first, LS_SCHEMA)
    assert [(h["name"], h["state"]) for h in first["hosts"]] == [("box", "ok")]
    assert [(r["pane"], r["state"], r["stale"]) for r in first["agents"]
            if r.get("host") == "box"] == [(rec.pane, "idle", False)]

    daemon.start()
    local.wait_for(lambda: local.host_state() == "online", timeout=20, interval=0.3)
    docs = subprocess.Popen(local.argv("subscribe", "--json", "--hosts"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=local.env)
    events = subprocess.Popen(local.argv("subscribe", "--json", "--hosts", "--events"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=local.env)
    try:
        first = Lines(docs).until(lambda d: True, 15)[0]
        jsonschema.validate(first, LS_SCHEMA)
        assert [(h["name"], h["state"]) for h in first["hosts"]] == [("box", "online")]
        assert [(r["host"], r["pane"], r["state"]) for r in first["agents"]
                if r.get("host") == "box"] == [("box", rec.pane, "idle")]
        time.sleep(2)  # the event subscriber's baseline is in
        srv.tmux("send-keys", "-t", rec.pane, "x")
        ev = Lines(events)
        seen = ev.until(lambda r: r.get("pane") == rec.pane and r.get("to") == "blocked", 20)
        edge = seen[-1]
        assert (edge["host"], edge["from"], edge["to"], edge["agent"]) == (
            "box", "idle", "blocked", "claude"), edge
        # the document follows too
        Lines(docs).until(lambda d: any(r.get("host") == "box" and r["state"] == "blocked"
                                        for r in d["agents"]), 15)
        cut = time.monotonic()
        sshd.kill()
        seen += ev.until(lambda r: "pane" not in r and r.get("to") == "offline", 20)
        gone = seen[-1]
        assert (gone["host"], gone["from"], gone["to"]) == ("box", "online", "offline"), gone
        assert gone["link"] and gone["error"], gone
        after = time.monotonic() - cut
        print(f"\nsubscribe: the host's offline record {after:.2f}s after sshd was killed")
        # the daemon's fleet change wakes the subscriber: well inside the 5 s belt
        assert after < 3, f"offline record {after:.1f}s after the cut"
        # no edge for the host's rows while it is offline: they are its last word
        assert not [r for r in seen if r.get("host") == "box" and r.get("pane")
                    and r is not edge], seen
        for r in seen:
            jsonschema.validate(r, EVENTS_SCHEMA)
        sshd.start()
        back = ev.until(lambda r: "pane" not in r and r.get("to") == "online", 75)[-1]
        assert (back["from"], back["link"], back["error"]) == ("offline", "ok", None), back
        jsonschema.validate(back, EVENTS_SCHEMA)
    finally:
        for p in (docs, events):
            p.send_signal(signal.SIGTERM)
            p.communicate(timeout=10)
    assert docs.returncode == 0 and events.returncode == 0


SIGNAL_IN_THE_PARSE = """
import os, signal, sys

import tomlkit

real = tomlkit.parse


def parse(text):
    os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, inside hosts.load's try
    return real(text)


tomlkit.parse = parse
from tma.cli.main import main

sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_while_subscribe_reads_the_hosts_file_is_its_normal_end(srv):
    """`subscribe --hosts` reads hosts.toml on every look (tomlkit, milliseconds). A
    SIGTERM that lands in that read ends it with 0, as anywhere else, and says nothing:
    it was once taken for a hosts file that does not parse (exit 1, seen 1 run in 20
    under load in test_subscribe_hosts_carries_remote_rows_edges_and_host_records)."""
    import sys

    hosts = Path(srv.env["XDG_CONFIG_HOME"]) / "tma" / "hosts.toml"
    hosts.parent.mkdir(parents=True, exist_ok=True)
    hosts.write_text('[hosts.box]\ntarget = "me@box"\n', encoding="utf-8")
    res = subprocess.run([sys.executable, "-c", SIGNAL_IN_THE_PARSE, "--socket-name", srv.name,
                          "subscribe", "--json", "--hosts"],
                         env=srv.env, capture_output=True, text=True, timeout=30)
    assert (res.returncode, res.stderr, res.stdout) == (0, "", "")

"""`tma web` as a browser meets it: a real server process on a private tmux server with
real agent-named processes drawing real captured screens, asked over real HTTP.

Every /api body is checked against schemas/proto.schema.json and read back into tma's
frames (tests/helpers/web.py). The gates: pairing (single-use code, expiry, attempt
limit), no cookie, a revoked device, a foreign Host, a foreign Origin, a read device's
dispatch; the stream's replay after a reconnect; a double tap fired once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.web import Web
from tma.core import fixture

pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"


@pytest.fixture
def web(srv, tmp_path):
    opened: list[Web] = []

    def open_(*flags: str) -> Web:
        w = Web(srv, tmp_path, *flags)
        opened.append(w)
        return w

    yield open_
    for w in opened:
        w.close()


def _claude(srv, screen: str = "blocked") -> KeyRecorder:
    cap = fixture.parse((CAPTURES / f"claude-2.1.332_{screen}.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    return KeyRecorder.start(srv, "claude", cap, after=idle, redraw_ms=100)


def _store(srv) -> Path:
    import os

    return Path(os.environ["XDG_STATE_HOME"]) / "tma" / "web" / "devices.json"


def test_no_cookie_is_401_and_a_code_pairs_once(srv, web):
    srv.shell_pane()
    w = web()
    a = w.get("/api/hello")
    assert (a.status, a.doc["t"], a.doc["code"]) == (401, "error", "unauthorized")
    assert a.headers["Cache-Control"] == "no-store"
    assert "default-src 'self'" in a.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in a.headers["Content-Security-Policy"]
    assert a.headers["X-Content-Type-Options"] == "nosniff"
    code = w.pair_code("--name", "phone", "--scope", "read,act:answer")
    got = w.request("POST", "/api/pair", body={"code": code.lower()})  # case is forgiven
    assert got.status == 200 and got.doc["t"] == "hello", got.body
    assert got.doc["scopes"] == ["read", "act:answer"]
    cookie = got.headers["Set-Cookie"]
    for part in ("HttpOnly", "SameSite=Strict", "Path=/"):
        assert part in cookie
    assert "Secure" not in cookie  # plain http on loopback
    token = cookie.split(";")[0].split("=", 1)[1]
    again = w.request("POST", "/api/pair", body={"code": code})
    assert again.status == 401 and "Set-Cookie" not in again.headers  # single use
    hello = w.get("/api/hello", token)
    assert hello.status == 200 and hello.doc["scopes"] == ["read", "act:answer"]
    # the token is stored hashed, never as itself; the code is gone
    text = _store(srv).read_text()
    assert token not in text and code not in text and '"pairing"' not in text
    listed = srv.tma("device", "list", "--json", check=True)
    assert [d["name"] for d in json.loads(listed.stdout)["devices"]] == ["phone"]
    assert code not in w.said() and token not in w.said()  # no log holds either
    # behind https (X-Forwarded-Proto), the cookie is Secure
    secure = w.request("POST", "/api/pair", body={"code": w.pair_code()},
                       headers={"X-Forwarded-Proto": "https"})
    assert secure.status == 200 and "; Secure" in secure.headers["Set-Cookie"]


def test_a_code_is_void_after_five_wrong_tries_and_when_expired(srv, web):
    srv.shell_pane()
    w = web()
    code = w.pair_code()
    wrong = "Z" * len(code) if code != "Z" * len(code) else "Y" * len(code)
    for n in range(5):
        a = w.request("POST", "/api/pair", body={"code": wrong})
        assert a.status == 401, (n, a.body)
    assert "last try" in a.doc["message"]
    late = w.request("POST", "/api/pair", body={"code": code})
    assert late.status == 401 and "no pairing code" in late.doc["message"]
    # expiry: the pending code's deadline passed (set back in the store, as 10 minutes do)
    code = w.pair_code()
    doc = json.loads(_store(srv).read_text())
    doc["pairing"]["expires_ms"] = 1
    _store(srv).write_text(json.dumps(doc))
    old = w.request("POST", "/api/pair", body={"code": code})
    assert old.status == 401 and "expired" in old.doc["message"]


def test_a_foreign_host_or_origin_is_refused(srv, web):
    srv.shell_pane()
    srv.config.write_text('[web]\nhosts = ["box.tailnet.example"]\n')
    w = web()
    token = w.paired()
    for path in ("/api/snapshot", "/"):
        a = w.get(path, token, headers={"Host": f"evil.example:{w.port}"})
        assert a.status == 403 and a.doc["code"] == "forbidden", path
    assert w.get("/api/snapshot", token, headers={"Host": f"localhost:{w.port}"}).status == 200
    assert w.get("/api/snapshot", token, headers={"Host": "box.tailnet.example"}).status == 200
    # a mutation needs an Origin that is the Host
    code = w.pair_code()
    foreign = w.request("POST", "/api/pair", body={"code": code},
                        headers={"Origin": "http://evil.example"})
    assert foreign.status == 403 and foreign.doc["code"] == "forbidden"
    none = w.request("POST", "/api/pair", body={"code": code}, origin=False)
    assert none.status == 403
    ok = w.request("POST", "/api/pair", body={"code": code})  # the code was not spent
    assert ok.status == 200
    # a proxy that rewrites Host passes the browser's Origin: a [web] hosts name is let in
    proxied = w.request("POST", "/api/pair", body={"code": w.pair_code()},
                        headers={"Origin": "https://box.tailnet.example"})
    assert proxied.status == 200, proxied.body


def test_a_revoked_device_is_401_on_its_next_request(srv, web):
    srv.shell_pane()
    agent = _claude(srv)
    w = web("--interval", "300")
    token = w.paired("--name", "lost-phone")
    other = w.paired("--name", "laptop")
    assert w.get("/api/hello", token).status == 200
    s, kept = w.stream(token), w.stream(other)
    assert s.event()[1] == "snapshot" and kept.event()[1] == "snapshot"
    res = srv.tma("device", "revoke", "lost-phone", check=True)
    assert "revoked" in res.stdout
    a = w.get("/api/hello", token)
    assert a.status == 401 and a.doc["code"] == "unauthorized"
    assert w.get("/api/hello", other).status == 200  # the other device is untouched
    # its open stream ends at the next change, sending it nothing; the other's goes on
    srv.tmux("kill-pane", "-t", agent.pane)
    edge_id, _name, edge = _next_edge(kept)
    assert edge["to"] == ""
    assert s.ended(timeout=10)
    # nothing numbered at or after that edge reached the revoked device (a frame the
    # reader numbered before the revoke may have been on its way: the check is made
    # before each send, not retroactively)
    seqs = [int(ln.split(b".")[-1]) for ln in s.rest if ln.startswith(b"id: ")]
    assert all(n < int(edge_id.rsplit(".", 1)[1]) for n in seqs), s.rest
    s.close()
    kept.close()
    assert srv.tma("device", "revoke", "lost-phone").returncode == 1


def test_a_read_device_cannot_dispatch_and_a_double_tap_fires_once(srv, web):
    rec = _claude(srv)
    srv.ls(manifests=False)  # a cycle stamps it blocked
    w = web("--interval", "300")
    reader = w.paired("--name", "viewer")
    row = next(r for r in w.get("/api/snapshot", reader).doc["agents"]
               if r["pane"] == rec.pane)
    assert row["state"] == "blocked" and row["host"]
    frame = {"schema": 1, "id": "7", "t": "dispatch", "slot": "tap-1", "pane": rec.pane,
             "action": "approve", "binder": {"expect_episode_ms": row["episode_ms"]}}
    denied = w.request("POST", "/api/dispatch", body=frame, cookie=reader)
    assert denied.status == 403 and denied.doc["code"] == "scope-denied"
    assert rec.settle() == b""
    card = w.get(f"/api/card?pane={rec.pane}", reader)
    assert card.status == 200 and card.doc["t"] == "card"
    actor = w.paired("--name", "phone", "--scope", "act:answer")
    first = w.request("POST", "/api/dispatch", body=frame, cookie=actor)
    assert first.status == 200, first.body
    assert (first.doc["t"], first.doc["id"]) == ("receipt", "7")
    assert (first.doc["outcome"], first.doc["cached"], first.doc["device"]) == (
        "sent", False, "phone")
    sent = rec.settle(expect=1)
    assert sent
    # the double tap: the same slot again, as HOST:%N this time
    again = w.request("POST", "/api/dispatch", cookie=actor,
                      body=dict(frame, pane=f"{row['host']}:{rec.pane}"))
    assert again.status == 200 and again.doc["cached"] is True
    assert rec.settle() == sent  # exactly one keystroke reached the agent
    got = w.get("/api/receipts?slot=tap-1", actor)
    assert [r["outcome"] for r in got.doc["receipts"]] == ["sent"]
    assert w.get("/api/receipts?slot=tap-1", reader).doc["receipts"] == []  # not theirs


def _next_edge(s):
    """The stream's next edge: a `snapshot` frame before it (a row that changed but not
    its state, seen under load) is not what the test is after."""
    while True:
        eid, name, doc = s.event()
        if name != "snapshot":
            return eid, name, doc


def test_the_stream_replays_what_a_reconnect_missed(srv, web):
    srv.shell_pane()  # keeps the server up
    first = _claude(srv)
    w = web("--interval", "300")
    token = w.paired()
    s = w.stream(token)
    assert s.status == 200 and s.resp.headers["Content-Type"].startswith("text/event-stream")
    eid, name, snap = s.event()
    assert name == "snapshot" and snap["id"] == eid
    assert first.pane in [r["pane"] for r in snap["agents"]]
    srv.tmux("kill-pane", "-t", first.pane)
    eid1, name, edge = _next_edge(s)
    assert (name, edge["t"], edge["pane"], edge["to"]) == ("edge", "edge", first.pane, "")
    assert edge["id"] == eid1 and edge["host"]
    s.close()
    second = _claude(srv)  # appears while no stream is open
    srv.wait_for(lambda: any(r["pane"] == second.pane
                             for r in w.get("/api/snapshot", token).doc["agents"]))
    back = w.stream(token, last_id=eid1)
    eid2, name, missed = _next_edge(back)
    assert (name, missed["pane"], missed["from"]) == ("edge", second.pane, "")
    assert eid2 != eid1
    back.close()
    # an id from another process (or past the history) gets a fresh snapshot
    stranger = w.stream(token, last_id="0.1")
    _eid, name, fresh = stranger.event()
    assert name == "snapshot" and second.pane in [r["pane"] for r in fresh["agents"]]
    stranger.close()


def test_a_non_loopback_bind_is_refused_naming_the_ways_in(srv):
    srv.shell_pane()
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv.name, "web",
                          "--bind", "0.0.0.0"], capture_output=True, text=True, env=srv.env,
                         timeout=30)
    assert res.returncode == 2
    for way in ("tailscale serve", "ssh -L", "reverse proxy"):
        assert way in res.stderr


def test_what_another_site_or_a_hostile_client_sends_is_refused(srv, web):
    """The review's reproductions: a text/plain POST (which crosses origins without a
    preflight), another port of a [web] hosts name, a dispatch to a pane that is no pane
    id, a HEAD on the stream, a request line full of escapes (logged before any gate),
    and a cookie this server did not set in front of its own."""
    import socket

    rec = _claude(srv)
    srv.ls(manifests=False)
    srv.config.write_text('[web]\nhosts = ["box.example"]\n')
    w = web("--interval", "300")
    actor = w.paired("--name", "phone", "--scope", "act:answer")
    row = next(r for r in w.get("/api/snapshot", actor).doc["agents"] if r["pane"] == rec.pane)
    frame = {"schema": 1, "id": "1", "t": "dispatch", "slot": "x-1", "pane": rec.pane,
             "action": "deny", "binder": {"expect_episode_ms": row["episode_ms"]}}
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=20)
    conn.request("POST", "/api/dispatch", body=json.dumps(frame).encode(), headers={
        "Host": w.hostport, "Origin": f"http://{w.hostport}", "Cookie": f"tma_web={actor}",
        "Content-Type": "text/plain"})
    plain = conn.getresponse()
    assert plain.status == 400 and b"application/json" in plain.read()
    conn.close()
    other_port = w.request("POST", "/api/dispatch", cookie=actor, body=frame,
                           headers={"Origin": "http://box.example:8000"})
    assert other_port.status == 403
    for pane in ("-h", "{last}", "1", "!"):
        bad = w.request("POST", "/api/dispatch", cookie=actor,
                        body=dict(frame, pane=pane, slot=f"x-{pane}"))
        assert bad.status == 400, (pane, bad.body)
    assert rec.settle() == b""  # nothing of all that reached the agent
    conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=20)
    conn.request("HEAD", "/api/stream", headers={"Host": w.hostport,
                                                  "Cookie": f"tma_web={actor}"})
    head = conn.getresponse()
    assert head.status == 400 and head.read() == b""  # no stream behind a HEAD
    conn.close()
    # a cookie another server on this name set, unparsable to the library, goes first
    mixed = w.get("/api/hello", headers={"Cookie": f'prefs={{"a":1}}; tma_web={actor}'})
    assert mixed.status == 200, mixed.body
    with socket.create_connection(("127.0.0.1", w.port), timeout=10) as s:
        s.sendall(b"GET /\x1b]52;c;cHduZWQ=\x07\x1b[2J HTTP/1.1\r\nHost: x\r\n\r\n")
        s.recv(4096)
    w.get("/api/hello", actor)  # one more line logged after it
    assert "\x1b" not in w.said() and "\x07" not in w.said()

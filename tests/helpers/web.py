"""A real `tma web` process on a test server, and a browser's side of its HTTP API.

Every JSON body the server answers under /api is checked against
schemas/proto.schema.json and parsed back into tma's frame types (and written again the
same), so a test that reads a frame has checked it is one.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.schemas import _schema
from tma.core import proto

SCHEMA = _schema("proto.schema.json")


def check_frame(raw: bytes) -> dict:
    import jsonschema

    doc = json.loads(raw)
    jsonschema.validate(doc, SCHEMA)
    parsed = proto.parse_line(raw, proto.RESPONSE)
    assert proto.dumps(parsed) == raw.decode().rstrip("\n")
    return doc


class Answer:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body
        ctype = headers.get("Content-Type", "")
        self.doc = check_frame(body) if ctype.startswith("application/json") else None


class Web:
    """One `tma web --port 0` process; its stderr in a file. `srv`: the machine it runs
    on (its tmux server's `name` and its `env`: the test server, or a fleet test's Here)."""

    def __init__(self, srv, tmp_path: Path, *flags: str, env: dict | None = None) -> None:
        self.srv = srv
        self.env = dict(env or srv.env)
        self.err = tmp_path / f"web-{time.monotonic_ns()}.err"
        argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "web", "--port", "0",
                *flags]
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=err, env=self.env)
        line = self._line(20.0)
        m = re.search(r"serving (http://([^/]+)/)", line)
        assert m, f"no URL in {line!r}; stderr: {self.said()}"
        self.url, self.hostport = m.group(1), m.group(2)
        self.port = int(self.hostport.rsplit(":", 1)[1])

    def _line(self, timeout: float) -> str:
        fd = self.proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            assert left > 0, f"tma web printed no URL in time; stderr: {self.said()}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                assert chunk, f"tma web exited: {self.said()}"
                buf += chunk
        return buf.decode()

    def said(self) -> str:
        return self.err.read_text(errors="replace") if self.err.exists() else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    # -- the browser's side
    def request(self, method: str, path: str, *, body: object = None,
                cookie: str | None = None, headers: dict | None = None,
                origin: bool = True) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        h = {"Host": self.hostport}
        if method == "POST" and origin:
            h["Origin"] = f"http://{self.hostport}"
        if cookie:
            h["Cookie"] = f"tma_web={cookie}"
        h.update(headers or {})
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        got = Answer(resp.status, resp.headers, resp.read())
        conn.close()
        return got

    def get(self, path: str, cookie: str | None = None, **kw) -> Answer:
        return self.request("GET", path, cookie=cookie, **kw)

    def pair_code(self, *flags: str) -> str:
        res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", self.srv.name,
                              "web", "pair", "--port", str(self.port), *flags],
                             capture_output=True, text=True, env=self.env, timeout=60)
        assert res.returncode == 0, res.stderr
        m = re.search(r"pairing code: (\w+)", res.stdout)
        assert m and f"#pair={m.group(1)}" in res.stdout, res.stdout
        return m.group(1)

    def paired(self, *flags: str) -> str:
        """A new device's token (the cookie's value)."""
        code = self.pair_code(*flags)
        a = self.request("POST", "/api/pair", body={"code": code})
        assert a.status == 200, a.body
        m = re.match(r"tma_web=([^;]+);", a.headers["Set-Cookie"])
        assert m, a.headers["Set-Cookie"]
        return m.group(1)

    def stream(self, cookie: str, last_id: str | None = None) -> Stream:
        return Stream(self, cookie, last_id)


class Stream:
    """One `GET /api/stream`: its server-sent events, read one at a time."""

    def __init__(self, web: Web, cookie: str, last_id: str | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
        h = {"Host": web.hostport, "Cookie": f"tma_web={cookie}",
             "Accept": "text/event-stream"}
        if last_id is not None:
            h["Last-Event-ID"] = last_id
        self.conn.request("GET", "/api/stream", headers=h)
        self.sock = self.conn.sock  # the response keeps it once the connection lets go
        self.resp = self.conn.getresponse()
        self.status = self.resp.status

    def event(self, timeout: float = 15.0) -> tuple[str, str, dict]:
        """The next event: (id, event name, frame); comments and `retry:` skipped."""
        self.sock.settimeout(timeout)
        fields: dict[str, str] = {}
        while True:
            line = self.resp.fp.readline()
            assert line, "the stream ended"
            text = line.decode().rstrip("\n")
            if not text:
                if "data" in fields:
                    doc = check_frame(fields["data"].encode())
                    return fields.get("id", ""), fields.get("event", "message"), doc
                fields = {}
                continue
            if text.startswith(":"):
                continue
            key, _, value = text.partition(": ")
            fields[key] = value

    def ended(self, timeout: float) -> bool:
        """True once the server closed the stream (within `timeout`); the lines it sent
        before closing are kept in `rest`."""
        self.sock.settimeout(timeout)
        self.rest: list[bytes] = []
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                line = self.resp.fp.readline()
                if not line:
                    return True
                self.rest.append(line)
        except TimeoutError:
            return False
        return False

    def close(self) -> None:
        self.resp.close()
        self.conn.close()

"""A real HTTP server on 127.0.0.1 that receives what tma's push sinks send.

Each POST is recorded (arrival time, path, headers, exact body bytes); the answer comes
from a script: an int is the status to reply, "hang" holds the request open without a
word until the server closes. The script's last entry repeats. With `certs`
(tests/helpers/tls.make) it speaks https (the sender trusts it through SSL_CERT_FILE).
"""

from __future__ import annotations

import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Got:
    def __init__(self, at: float, path: str, headers: dict[str, str], body: bytes) -> None:
        self.at, self.path, self.headers, self.body = at, path, headers, body


class Sink:
    def __init__(self, script: list | None = None, certs=None) -> None:
        self.script = list(script or [200])
        self.got: list[Got] = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with sink.lock:
                    idx = len(sink.got)
                    sink.got.append(Got(time.monotonic(), self.path,
                                        {k.lower(): v for k, v in self.headers.items()}, body))
                    what = sink.script[min(idx, len(sink.script) - 1)]
                if what == "hang":
                    sink.release.wait(60)
                    self.close_connection = True
                    return
                self.send_response(int(what))
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if certs is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(certs.cert, certs.key)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def count(self) -> int:
        with self.lock:
            return len(self.got)

    def wait(self, n: int = 1, timeout: float = 10.0) -> list[Got]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count() >= n:
                with self.lock:
                    return list(self.got)
            time.sleep(0.005)
        raise AssertionError(f"{self.count()} requests arrived, wanted {n}")

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

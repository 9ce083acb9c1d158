"""What the sink benches share (not a script: test_bench_scripts skips `_` modules).

`Endpoint`: an HTTP server on 127.0.0.1 that records when each POST arrives (epoch s)
and, while `hang` is set, accepts and never answers (the webhook or ntfy server that
hangs). `Client`: `tmux attach` on a pseudo-terminal this process owns (the person's
terminal emulator), timing when each awaited pattern's bytes arrive. `pct`: a
percentile that a single run answers with itself.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import statistics
import struct
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def pct(xs: list[float], q: int) -> float:
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[int(q) - 1]


class Endpoint:
    """An HTTP server recording each POST's arrival (epoch s); while `hang`, it never
    answers (the connection stays open until `close`, or `release` for those waiting)."""

    def __init__(self, hang: bool = False) -> None:
        self.arrivals: list[float] = []
        self.hang = hang
        self._release = threading.Event()
        ep = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ep.arrivals.append(time.time())
                if ep.hang:
                    ep._release.wait(30)
                    self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/t"

    def release(self) -> None:
        """Let the requests held so far go (unanswered); later ones hang while `hang`."""
        self._release.set()
        self._release = threading.Event()

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


class Client:
    """`tmux attach` on a pty; the reader thread notes when each awaited pattern (a
    bytes regex) first matches what arrived since it was awaited."""

    def __init__(self, argv: list[str], env: dict, rows: int = 40, cols: int = 120) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the tmux client
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.buf = bytearray()
        self.seen: dict[bytes, float] = {}
        self.want: dict[bytes, re.Pattern] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            now = time.time()
            with self.lock:
                self.buf += data
                for key, rx in list(self.want.items()):
                    if rx.search(self.buf):
                        self.seen[key] = now
                        del self.want[key]
                if len(self.buf) > 1 << 20:
                    del self.buf[:-4096]

    def expect(self, *patterns: bytes, literal: bool = True) -> None:
        """Await these (literal bytes, or regexes with literal=False); forget what
        arrived before."""
        with self.lock:
            self.buf.clear()
            for p in patterns:
                self.want[p] = re.compile(re.escape(p) if literal else p, re.S)

    def arrived(self, marker: bytes, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if marker in self.seen:
                    return self.seen.pop(marker)
            time.sleep(0.002)
        raise SystemExit(f"{marker!r} never reached the client")

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)

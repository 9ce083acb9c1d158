"""A receiver that does not play fair, in a process of its own on 127.0.0.1: what a push
sink meets when the host it posts to is hostile or broken.

    with SlowReceiver("drip", certs) as rx:   # certs (tests/helpers/tls): https, else http
        ... post to rx.url("/hook") ...

Modes, per connection (each accepted in a thread of its own, so a retry meets the same):
- `drip`: after the handshake, the answer one byte every INTERVAL seconds, escape
  sequences in its status line and headers, for FOR seconds, then it closes;
- `body-drip`: the status line and headers at once (200, a Content-Length), then the
  body one byte every INTERVAL seconds, escapes included;
- `handshake-stall` (https): the connection accepted, the TLS handshake never answered;
- `garbage`: at once, a first line that is not HTTP and is full of escape sequences
  (the window title, the clipboard, a screen clear, C1 CSI), then it closes.

The process prints its port, then serves until it is killed (`close`). Run as a script
(`python slow_receiver.py MODE [CERT KEY]`); the stdlib only. `spans()` gives, for each
connection that ended, when it was accepted and when it ended (the sender hung up, seen
at once: a drip waits for the next byte's time or the sender's close, whichever is
first), on the machine's monotonic clock: how long the sender let the request run,
measured from outside it, without its process start.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

INTERVAL = 1.0
FOR = 20.0  # how long a drip lasts: the old, unbounded sender waited this long
#: what the receiver wants on a terminal: a title, the clipboard (OSC 52), a screen clear,
#: a bell, and C1's single-byte CSI
NASTY = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x07\x9b31m"
DRIP = ("HTTP/1.1 200 " + NASTY + "OK\r\n" + ("X-Nasty: " + NASTY + "\r\n") * 20).encode()
GARBAGE = (NASTY + " not http at all " + NASTY + "\r\n\r\n").encode("utf-8")


class SlowReceiver:
    def __init__(self, mode: str, certs=None) -> None:
        argv = [sys.executable, __file__, mode]
        if certs is not None:
            argv += [str(certs.cert), str(certs.key)]
        self.scheme = "https" if certs is not None else "http"
        fd, self.log = tempfile.mkstemp(prefix="slow-receiver-", suffix=".log")
        os.close(fd)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                     env=dict(os.environ, SLOW_RECEIVER_LOG=self.log))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.close()
            raise RuntimeError(f"the receiver did not start: {line!r}")
        self.port = int(line)

    def url(self, path: str = "/hook") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def spans(self, at_least: int = 0, timeout: float = 10.0) -> list[tuple[float, float]]:
        """(accepted, ended) of each connection that has ended, in the order they ended;
        waits up to `timeout` for `at_least` of them (the receiver notes a hang-up a
        moment after the sender's process may have exited)."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log, encoding="utf-8") as fh:
                got = [(float(a), float(b)) for a, b in
                       (line.split() for line in fh if line.endswith("\n"))]
            if len(got) >= at_least or time.monotonic() > deadline:
                return got
            time.sleep(0.02)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)
        try:
            os.unlink(self.log)
        except OSError:
            pass

    def __enter__(self) -> SlowReceiver:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------ the process


def _hung_up(conn, wait: float) -> bool:
    """Whether the sender closes its end within `wait` seconds (anything it sends
    instead is read and dropped)."""
    end = time.monotonic() + wait
    while (left := end - time.monotonic()) > 0:
        if not select.select([conn], [], [], left)[0]:
            return False
        try:
            if not conn.recv(4096):
                return True
        except (OSError, ValueError):
            return True
    return False


def _drip(conn, data: bytes, until: float) -> None:
    for i in range(len(data)):
        if time.monotonic() >= until:
            return
        conn.sendall(data[i:i + 1])
        if _hung_up(conn, INTERVAL):
            return


def _read_request(conn) -> None:
    """The whole request: its head, then Content-Length bytes of body (a close with
    unread bytes would reset the connection, and the sender would see the reset
    instead of the answer)."""
    got = b""
    conn.settimeout(FOR)
    while b"\r\n\r\n" not in got and len(got) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            return
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            return
        body += chunk


def _serve(raw, mode: str, ctx) -> None:
    accepted = time.monotonic()
    try:
        _answer(raw, mode, ctx)
    finally:
        log = os.environ.get("SLOW_RECEIVER_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{accepted:.6f} {time.monotonic():.6f}\n")


def _answer(raw, mode: str, ctx) -> None:
    until = time.monotonic() + FOR
    conn = raw
    try:
        if mode == "handshake-stall":
            time.sleep(FOR)  # accepted; not one byte of TLS back
            return
        if ctx is not None:
            raw.settimeout(FOR)
            conn = ctx.wrap_socket(raw, server_side=True)
        _read_request(conn)
        if mode == "drip":
            _drip(conn, DRIP, until)
        elif mode == "body-drip":
            body = NASTY.encode("utf-8") * 40
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         + f"Content-Length: {len(body)}\r\n\r\n".encode())
            _drip(conn, body, until)
        elif mode == "garbage":
            conn.sendall(GARBAGE)
            _hung_up(conn, until - time.monotonic())  # it has read the answer by then
    except OSError:
        pass
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    mode = argv[0]
    ctx = None
    if len(argv) == 3:
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(argv[1], argv[2])
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print(srv.getsockname()[1], flush=True)
    while True:
        conn, _addr = srv.accept()
        threading.Thread(target=_serve, args=(conn, mode, ctx), daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

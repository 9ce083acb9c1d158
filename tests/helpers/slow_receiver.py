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
(`python slow_receiver.py MODE [CERT KEY]`); the stdlib only.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
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
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.close()
            raise RuntimeError(f"the receiver did not start: {line!r}")
        self.port = int(line)

    def url(self, path: str = "/hook") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=10)

    def __enter__(self) -> SlowReceiver:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------ the process


def _drip(conn, data: bytes, until: float) -> None:
    for i in range(len(data)):
        if time.monotonic() >= until:
            return
        conn.sendall(data[i:i + 1])
        time.sleep(INTERVAL)


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


def _until_closed(conn) -> None:
    """Wait for the sender to hang up (it has read the answer by then)."""
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass


def _serve(raw, mode: str, ctx) -> None:
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
            _until_closed(conn)
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

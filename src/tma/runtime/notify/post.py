"""One POST of a push sink, bounded end to end by one deadline (tma.runtime.notify.http
makes the attempts, retries and records).

A socket timeout bounds one wait, not a request: a receiver that drips a byte a second
never lets one read wait long, and so holds a sender whose only bound is a socket
timeout for as long as it likes (seen: `timeout_s = 2` held `tma debug notify-test` for
40-60 s). So every request has one `Deadline`, `timeout_s` from its start, and every
step takes what is left of it:

- the name lookup: getaddrinfo takes no timeout (the resolver's own is 5 s per try and
  server), so a name runs in a helper thread that is waited on for what is left and
  abandoned after (it ends when the resolver gives up); an IP literal needs none;
- the connect: a socket timeout of what is left;
- plain http (`plain`, a bare socket): every send and read gets what is left;
- https, and anything through a proxy (`via_urllib`: urllib, http.client, ssl, whose
  reads each get a fresh socket timeout): a timer shuts the connection's socket down
  when the deadline passes, which ends whatever step waits on it (the TLS handshake,
  the proxy's CONNECT, a header line) with an error reported as the timeout.

Only the status is read (with urllib, the status line and the headers): the body says
nothing a delivery needs, and the connection is closed right after.
"""

from __future__ import annotations

import socket
import threading
import time

READ_MAX = 65536  # bytes of a plain response read, looking for the status line


class Deadline:
    """The end of one request, and the sockets to shut down when it comes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._held: list[socket.socket] = []  # duplicates: shutdown reaches the shared socket
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def left(self) -> float:
        """The seconds left; TimeoutError once there are none."""
        left = self.end - time.monotonic()
        if left <= 0:
            self.expired = True
            raise TimeoutError(f"timed out after {self.seconds:g}s")
        return left

    def over(self) -> bool:
        return self.expired or time.monotonic() >= self.end

    def resolve(self, host: str, port: int) -> list:
        """getaddrinfo within what is left (see the module's docstring)."""
        try:
            return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0,
                                      socket.AI_NUMERICHOST)
        except (socket.gaierror, UnicodeError):
            pass
        box: list = []

        def run() -> None:
            try:
                box.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
            except Exception as exc:  # handed to the waiting thread, raised there
                box.append(exc)

        lookup = threading.Thread(target=run, name="tma-resolve", daemon=True)
        lookup.start()
        lookup.join(self.left())
        if not box:
            self.expired = True
            raise TimeoutError(f"timed out after {self.seconds:g}s")
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]

    def connect(self, address: tuple, timeout: object = None,
                source_address: tuple | None = None) -> socket.socket:
        """socket.create_connection within what is left (`timeout` is ignored: the
        deadline is the timeout). The socket's timeout is what was left at the connect."""
        host, port = address[0], address[1]
        err: OSError | None = None
        for family, kind, proto, _name, addr in self.resolve(host, port):
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(self.left())
                if source_address:
                    sock.bind(source_address)
                sock.connect(addr)
            except OSError as exc:
                sock.close()
                if isinstance(exc, TimeoutError):
                    raise
                err = exc
                continue
            return sock
        raise err or OSError(f"no address for {host}")

    def connect_watched(self, address: tuple, timeout: object = None,
                        source_address: tuple | None = None) -> socket.socket:
        """connect, and shut the socket down when the deadline passes (for code that
        gives every read a timeout of its own: http.client)."""
        sock = self.connect(address, timeout, source_address)
        try:
            self._watch(sock)
        except BaseException:
            sock.close()
            raise
        return sock

    def _watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._held.append(sock.dup())
            if self._timer is None:
                self._timer = threading.Timer(self.left(), self._shut)
                self._timer.daemon = True
                self._timer.start()

    def _shut(self) -> None:
        with self._lock:
            self.expired = True  # before the shutdown: the woken reader must see it
            for s in self._held:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        """Stop the timer and let go of the duplicates (the request is over)."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            for s in self._held:
                s.close()
            self._held = []


# ------------------------------------------------------------------ plain http


def plain(url: str, headers: dict[str, str], body: bytes, dl: Deadline) -> int:
    """POST over plain http on a bare socket; the response's status. Raises OSError
    (TimeoutError included) or ValueError."""
    rest = url.split("://", 1)[1]
    hostport, _slash, path = rest.partition("/")
    path = "/" + path.split("#", 1)[0]
    if "?" in hostport:  # http://host?x=1
        hostport, q = hostport.split("?", 1)
        path = "/?" + q
    host, port = hostport, 80
    if hostport.startswith("["):
        host, _, tail = hostport[1:].partition("]")
        if tail.startswith(":"):
            port = int(tail[1:])
    elif ":" in hostport:
        host, p = hostport.rsplit(":", 1)
        port = int(p) if p else 80
    if not host:
        raise ValueError("no host in the URL")
    head = [f"POST {path} HTTP/1.1", f"Host: {hostport}", f"Content-Length: {len(body)}",
            "Connection: close"]
    for k, v in headers.items():
        if "\r" in k + v or "\n" in k + v:
            raise ValueError(f"a line break in header {k}")
        head.append(f"{k}: {v}")
    data = ("\r\n".join([*head, "", ""])).encode("latin-1", "replace") + body
    with dl.connect((host, port)) as sock:
        sock.settimeout(dl.left())
        sock.sendall(data)  # one call: its timeout bounds the whole send
        got = b""
        while b"\r\n" not in got and len(got) < READ_MAX:
            sock.settimeout(dl.left())
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
        parts = got.split(b"\r\n", 1)[0].split()
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise ValueError("not an HTTP response")
        return int(parts[1])


# ------------------------------------------------------------------ urllib (https, proxies)

_handlers: tuple = ()


def _urllib_opener():
    """No redirects (a 3xx surfaces as an HTTPError instead of handing the signed body
    to a host nobody configured), and every connection made by the request's Deadline
    (the daemon's workers share the handlers; the deadline rides on each request). A
    new opener per request: its ProxyHandler reads the environment's proxies when it
    is built."""
    global _handlers
    import urllib.request  # here, on the worker's thread: the daemon's loop never pays

    if not _handlers:
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        class Bounded:
            def do_open(self, http_class, req, **kwargs):
                dl = req.tma_deadline

                def make(host, **args):
                    conn = http_class(host, **args)
                    # http.client's own seam for making the socket (its tests use it)
                    conn._create_connection = dl.connect_watched
                    return conn

                return super().do_open(make, req, **kwargs)  # type: ignore[misc]

        class Http(Bounded, urllib.request.HTTPHandler):
            pass

        class Https(Bounded, urllib.request.HTTPSHandler):
            pass

        _handlers = (NoRedirect, Http, Https)
    return urllib.request.build_opener(*_handlers)


def via_urllib(url: str, headers: dict[str, str], body: bytes, dl: Deadline) -> int:
    """POST through urllib (https, or a proxy from the environment); the status, a 4xx
    or 5xx included. Raises OSError (urllib's URLError unwrapped) or http.client's
    errors."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    req.tma_deadline = dl  # type: ignore[attr-defined]
    try:
        with _urllib_opener().open(req, timeout=dl.left()) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        return int(exc.code)
    except urllib.error.URLError as exc:  # urllib's wrapper says no more than its reason
        if isinstance(exc.reason, BaseException):
            raise exc.reason from None
        raise OSError(str(exc.reason)) from None


def why(exc: BaseException) -> str:
    """A failed request's words: the OS's for a socket error, else the exception's type
    and text (http.client's may quote the receiver: the caller cleans it)."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}"


def timed_out(exc: BaseException, dl: Deadline) -> bool:
    """Did this request fail because its deadline came (whatever step it broke)?"""
    return dl.over() or isinstance(exc, TimeoutError)

"""`tma web`: the HTTP server (standard library only; ARCHITECTURE.md decision 14).

Its own process, bound to loopback only; a person reaches it from elsewhere through
`tailscale serve`, `ssh -L` or a reverse proxy, which this process cannot tell apart
from a local browser, hence the gates on every request, in order:

1. Host: a loopback name (127.0.0.1, localhost, [::1], any port: `ssh -L` keeps the
   browser's) or a name listed in `[web] hosts`; anything else is refused 403 (DNS
   rebinding: a page of evil.example that resolves to 127.0.0.1 names its own host).
2. A POST needs an Origin whose host and port are the Host's, or whose host is a name
   of `[web] hosts` (a cross-site form or fetch names its own).
3. Everything under /api but /api/pair needs the `tma_web` cookie of a paired device
   (tma.runtime.web.devices, read again on every request: a revoke is felt at once);
   none or an unknown one is 401.
4. A dispatch needs the scope its action needs (serve's table); short of it, 403.

Every response carries a strict Content-Security-Policy (no inline script), nosniff,
no-referrer; /api responses are never cached. Every /api body is a schema-1 protocol
frame (tma.core.proto); a refusal is an `error` frame with a 4xx status. Agent text
leaves only inside JSON.

One reader (`Reader`) owns the rows: it follows this tmux server's daemon as `tma
serve` does (tma.runtime.follow: one stamps read per wake, no detection; without a
daemon its own cycle every interval and the stamps alone between), and every stream
waits on it: N browsers cost one read per wake, never N. Each change becomes an `edge`
frame (or a `snapshot` frame when rows changed without a state edge) numbered in one
sequence and kept in a short history (HISTORY frames), so a stream that reconnects
with `Last-Event-ID` gets what it missed, or a fresh snapshot when that fell out.

The requests a protocol device makes over `tma serve` are answered by serve's own
`Conn` (card, window, event, dispatch through the host's one dispatch ledger with
its slot, episode binder and broker, receipts), built per request for the device the
cookie names. The rows of the fleet hosts the daemon links join this machine's (named
by their host); a `HOST:%N` card, window or event is asked over the host's link
(tma.runtime.fleet.read) and a dispatch fired as `tma act ACTION --pane HOST:%N` is
(tma.runtime.fleet.act: its slot names the prompt and the answer, so the host's ledger
answers a double tap).
"""

from __future__ import annotations

import http.server
import ipaddress
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tma import __version__
from tma.core import proto, untrusted
from tma.core.paths import here
from tma.install.binary import running_tma
from tma.runtime.act import card, card_screen
from tma.runtime.fleet import (
    act as fleet_act,
    hosts as fleet_hosts,
    read as fleet_read,
    serve,
    view as fleet_view,
)
from tma.runtime.fleet.ledger import Ledger
from tma.runtime.follow import Follow, Plan
from tma.runtime.git import GitInfo
from tma.runtime.web.devices import DeviceError, Store
from tma.tmux import spawn

DEFAULT_PORT = 7330
COOKIE = "tma_web"
#: The edges (and changed snapshots) a reconnecting stream may be replayed.
HISTORY = 512
#: A comment line on every open stream this often (proxies close a silent one), and
#: the moment a revoked device's stream is noticed at the latest.
KEEPALIVE_S = 15.0
#: Streams open at once (each holds a thread); one more is refused 503.
MAX_STREAMS = 64
MAX_BODY = proto.MAX_LINE_BYTES
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".ico": "image/x-icon", ".json": "application/json",
         ".webmanifest": "application/manifest+json"}
HOST_OFFLINE = "host-offline"  # a dispatch to a stale row (its host offline): nothing fired
#: HTTP status of an error frame's code.
STATUS = {proto.BAD_REQUEST: 400, "unauthorized": 401, proto.SCOPE_DENIED: 403,
          "forbidden": 403, proto.NOT_FOUND: 404, proto.CURSOR_INVALID: 410,
          proto.UNSUPPORTED: 422, proto.TOO_MANY_CONNECTIONS: 503, proto.INTERNAL: 500,
          "host-down": 502, HOST_OFFLINE: 409}
RID = "web"  # the id of a frame that answers a GET (no request frame, no id)


class BindRefused(Exception):
    """--bind names an address that is not loopback."""


def check_bind(addr: str) -> str:
    """The loopback address to bind, or BindRefused saying how to reach it instead."""
    if addr == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(addr.strip("[]"))
    except ValueError:
        ip = None
    if ip is None or not ip.is_loopback:
        raise BindRefused(
            f"--bind {addr}: tma web listens on loopback only (127.0.0.1 or ::1). To "
            "reach it from a phone or another machine, put something that authenticates "
            "in front: `tailscale serve` (your tailnet), `ssh -L PORT:127.0.0.1:PORT` "
            "(an SSH login), or a reverse proxy; see docs/how-to/phone.md")
    return str(ip)


def check_args(bind: str, port: int, interval_ms: int) -> None:
    """ValueError or BindRefused for flags `tma web` cannot serve with."""
    check_bind(bind)
    if not 0 <= port <= 65535:
        raise ValueError(f"--port: 0-65535, got {port}")
    if interval_ms < 250:
        raise ValueError(f"--interval needs at least 250 ms, got {interval_ms}")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def remote_row(d: dict) -> proto.FleetRow | None:
    """A fleet host's ls --json row (tma.ui.rows.fleet_row_dict) as the FleetRow it came
    from; None for one that does not read as one."""
    try:
        quota = None
        if isinstance(d.get("quota"), int):
            quota = proto.Quota(pct=d["quota"], window=d.get("quota_window") or "",
                                resets_at_ms=d.get("quota_resets_at_ms"))
        since_ms = int(d["since_ms"])
        state = d["state"] if d["state"] in proto.STATES else "unknown"
        return proto.FleetRow(
            pane=str(d["pane"]), agent=str(d["agent"]), state=state, detail=d.get("detail"),
            since=since_ms // 1000, since_ms=since_ms, episode_ms=int(d["episode_ms"]),
            locator=str(d["locator"]), attention=bool(d["attention"]), done=bool(d["done"]),
            session=d.get("session"), transcript=d.get("transcript"),
            permission_request=d.get("permission_request"),
            stamped_at_ms=d.get("stamped_at_ms"), context=d.get("context"),
            context_at_ms=d.get("context_at_ms"), muted=bool(d.get("muted")),
            tokens=d.get("tokens"), quota=quota, cost_usd=d.get("cost_usd"),
            repo=d.get("repo"), branch=d.get("branch"), worktree=d.get("worktree"),
            pending_tool=d.get("pending_tool"), pending_call=d.get("pending_call"),
            pending_summary=d.get("pending_summary"), server=str(d.get("server") or ""),
            host=str(d["host"]))
    except (KeyError, TypeError, ValueError):
        return None


def split_pane(pane: str, host: str) -> tuple[str, str]:
    """`HOST:%N` or `%N` -> (host, %N); this machine's name for a bare pane."""
    name, sep, rest = pane.rpartition(":")
    return (name, rest) if sep else (host, pane)


# ------------------------------------------------------------------ the one reader


class Reader:
    """The rows, read once per wake and shared by every stream (see the module)."""

    def __init__(self, session, *, host: str, interval_ms: int, socket_path: str | None,
                 log, history: int = HISTORY) -> None:
        self.session, self.host, self.interval_ms, self.log = session, host, interval_ms, log
        self.lock = threading.RLock()  # the session: one read at a time
        self.cond = threading.Condition()
        self.boot = format(now_ms(), "x")
        self.seq = 0
        self.history: deque[tuple[int, proto.Frame]] = deque(maxlen=history)
        self.rows: tuple[proto.FleetRow, ...] = ()
        self.keyed: dict[str, proto.FleetRow] | None = None
        self.reads = 0  # reads of the rows since the start (the bench counts them)
        self.failing = False  # the last read failed (logged once a failing run)
        self.git = GitInfo()
        self.follow = Follow(session, socket_path, who="tma web")
        self.light = False
        self.asks = serve.ScreenAsks(lambda rows: card_screen.screen_pending(
            session.server, rows, session.manifests), now_ms)
        self.stopped = threading.Event()
        self._r, self._w = os.pipe()

    # -- reading
    def cycle_rows(self, sel=None):
        """One read of the cycle's rows, for serve's Conn: (rows, socket path, git). A
        daemon's stamps (one listing, no capture) while one runs, else a cycle of its own
        (or the stamps alone between cycles)."""
        with self.lock:
            if self.follow.on or self.light:
                result = self.session.cycle(produce=False, report=False)
            else:
                result = self.session.cycle()
            picked = (self.session.select(result.rows, sel, self.git) if sel is not None
                      else result.rows)
            return picked, result.snapshot.socket_path, self.git

    def remote_rows(self) -> tuple[proto.FleetRow, ...]:
        """The fleet hosts' rows the daemon's links hold (no SSH here: without a daemon
        that holds exactly the configured hosts, none); a stale row (its host offline)
        stays, as what was last heard, marked `stale` (the page greys it and offers no
        action on it; a dispatch to it is refused: see stale())."""
        try:
            remote = fleet_view.Remote(self.session, probe=False)
        except fleet_hosts.HostError as exc:
            self.log(f"tma web: hosts.toml: {exc}")
            return ()
        if remote.cached is None:
            return ()
        out = []
        for d in remote.rows():
            row = remote_row(d)
            if row is not None and row.host != self.host:
                out.append(row.replace(stale=True) if d.get("stale") else row)
        return tuple(out)

    def read(self) -> None:
        """Read the rows, and number what changed into the history."""
        with self.lock:
            rows, server, git = self.cycle_rows()
            screen = self.asks(rows)
            self.reads += 1
            fresh = tuple(serve.fleet_row(r, host=self.host, server=server, git=git,
                                          screen=screen) for r in rows) + self.remote_rows()
        current = {f"{r.host}:{r.pane}": r for r in fresh}
        with self.cond:
            before, self.keyed = self.keyed, current
            changed = fresh != self.rows
            self.rows = fresh
            if before is None or not changed:
                return
            now = now_ms()
            out: list[proto.Frame] = list(serve.edges("", before, current, now, with_host=True))
            if not out:
                out = [proto.Snapshot("", fresh)]
            for frame in out:
                self.seq += 1
                self.history.append((self.seq, frame.replace(id=self.event_id(self.seq))))
            self.cond.notify_all()

    def stale(self, host: str, pane: str) -> bool:
        """Whether the rows now hold HOST:%N as stale (its host offline)."""
        with self.cond:
            row = (self.keyed or {}).get(f"{host}:{pane}")
        return row is not None and bool(row.stale)

    def wait(self, seq: int, timeout: float) -> None:
        """Until the sequence passes `seq`, the reader stops, or `timeout` seconds."""
        with self.cond:
            self.cond.wait_for(lambda: self.seq > seq or self.closing, timeout=timeout)

    def event_id(self, seq: int) -> str:
        return f"{self.boot}.{seq}"

    def snapshot(self, rid: str = RID) -> tuple[int, proto.Snapshot]:
        """The rows now and the sequence number they stand at."""
        with self.cond:
            return self.seq, proto.Snapshot(rid, self.rows)

    def after(self, last_id: str | None) -> int | None:
        """The sequence number a stream resumes after, from its Last-Event-ID; None when
        it cannot (no id, another process's, or older than the history kept)."""
        if not last_id:
            return None
        boot, _, num = last_id.partition(".")
        if boot != self.boot or not num.isdigit() or len(num) > 18:
            return None
        seq = int(num)
        with self.cond:
            if seq > self.seq:
                return None
            oldest = self.history[0][0] if self.history else self.seq + 1
            if seq + 1 < oldest and seq != self.seq:
                return None
            return seq

    def since(self, seq: int) -> tuple[int, list[tuple[int, proto.Frame]]] | None:
        """The frames after `seq` (None: some fell out of the history)."""
        with self.cond:
            if seq >= self.seq:
                return seq, []
            if not self.history or self.history[0][0] > seq + 1:
                return None
            return self.seq, [(n, f) for n, f in self.history if n > seq]

    # -- the loop
    def start(self) -> None:
        """Look for the daemon and read the baseline (before the first request)."""
        self.follow.probe(self.log)
        self._read_logged()

    def run(self) -> None:
        """Read until stop(): on the daemon's wake, else on the plan's clock."""
        plan = Plan(self.interval_ms)
        try:
            while not self.closing:
                timeout = plan.timeout(self.follow.on)
                if not self.follow.on:
                    timeout = min(timeout, max(0.0, self.follow.probe_at - time.monotonic()))
                fds = [self._r] + ([self.follow.fd] if self.follow.on else [])
                ready, _, _ = select.select(fds, [], [], timeout)
                if self._r in ready:
                    break  # stop()
                woke = self.follow.on and self.follow.fd in ready and self.follow.settle(
                    self.log)
                if not self.follow.on and time.monotonic() >= self.follow.probe_at:
                    self.follow.probe(self.log)
                what = plan.what(woke, self.follow.on)
                if not what:
                    continue
                self.light = what == "stamps"
                try:
                    self._read_logged()
                finally:
                    self.light = False
        finally:
            self.follow.close()

    def _read_logged(self) -> None:
        try:
            self.read()
        except Exception as exc:  # tmux gone or failing: tried again next time
            if not self.failing:  # once a failing run: not a line every read
                self.log(f"tma web: reading the rows failed: {serve._trouble(exc)}")
            self.failing = True
            self._local_gone()
        else:
            if self.failing:
                self.log("tma web: reading the rows works again")
            self.failing = False

    def _local_gone(self) -> None:
        """The local rows can no longer be read: they are dropped (a page must not show a
        dead server's agents as live), the hosts' rows stay as last heard."""
        with self.cond:
            if self.keyed is None:
                return
            kept = tuple(r for r in self.rows if r.host != self.host)
            if kept == self.rows:
                return
            self.rows = kept
            self.keyed = {f"{r.host}:{r.pane}": r for r in kept}
            self.seq += 1
            self.history.append((self.seq, proto.Snapshot(self.event_id(self.seq), kept)))
            self.cond.notify_all()

    @property
    def closing(self) -> bool:
        return self.stopped.is_set()

    def stop(self) -> None:
        self.stopped.set()
        with self.cond:
            self.cond.notify_all()
        try:
            os.write(self._w, b"x")
        except OSError:
            pass


# ------------------------------------------------------------------ the app


class App:
    """What every request shares: the reader, the device store, the ledger, the config."""

    def __init__(self, session, reader: Reader, *, allowed_hosts: tuple[str, ...] = ()) -> None:
        self.session, self.reader = session, reader
        paths = here(session.env)
        self.store = Store(paths.state_dir)
        self.ledger = Ledger(os.path.join(paths.state_dir, "serve", "ledger.jsonl"))
        self.named = frozenset(h.lower() for h in allowed_hosts)
        self.allowed = LOOPBACK_HOSTS | self.named
        self.streams = 0
        self.streams_lock = threading.Lock()

    def conn(self, device) -> serve.Conn:
        """serve's Conn for one request of `device` (its scopes, its name)."""
        session = self.session

        def fire(argv: list[str]) -> tuple[int, bytes]:
            tma = running_tma() or sys.argv[0]
            code, out, _err = spawn.run([tma, *session.server.flags(), *argv],
                                        timeout=serve.DISPATCH_TIMEOUT_S)
            return code, out

        def card_for(row, rid):
            with self.reader.lock:
                return card.for_row(session, row, rid)

        def transcripts(row, req):
            return serve.transcript_answer(row, req, session.env)

        c = serve.Conn(host=self.reader.host, version=__version__, scopes=device.scopes,
                       device=device.name, interval_ms=self.reader.interval_ms,
                       rows=self.reader.cycle_rows, write=lambda _data: None,
                       ledger=self.ledger, fire=fire, card=card_for, clock=now_ms,
                       log=log, transcripts=transcripts)
        c.greeted = True
        return c


def log(text: str) -> None:
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Refusal(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tma-web"
    sys_version = ""
    app: App  # set on the class made per server

    # -- plumbing
    #: a client that sends nothing (or a stream reader that reads nothing) is cut after
    #: this long: the socket's timeout, for reading a request and for writing a stream
    timeout = 30

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base's name
        # the request line is the client's text, logged before any gate: no control
        # character reaches the terminal the server runs in (the base's own escaping is
        # what this override replaces)
        log("tma web: " + untrusted.clean(format % args, 2048))

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The server library's own refusals (a request line it cannot parse, a verb it
        has no handler for) with the headers every other answer carries, as JSON."""
        self.close_connection = True
        data = proto.encode(proto.Error(RID, proto.BAD_REQUEST,
                                        untrusted.clean(message or "bad request", 200)))
        try:
            self._headers(code, "application/json; charset=utf-8", len(data), api=True)
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            pass

    def _headers(self, status: int, ctype: str, length: int | None, *,
                 api: bool, extra: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cache-Control", "no-store" if api else "no-cache")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def frame(self, frame: proto.Frame, status: int = 200,
              extra: tuple[tuple[str, str], ...] = ()) -> None:
        if isinstance(frame, proto.Error) and status == 200:
            status = STATUS.get(frame.code, 400)
        data = proto.encode(frame)
        self._headers(status, "application/json; charset=utf-8", len(data), api=True,
                      extra=extra)
        if self.command != "HEAD":
            self.wfile.write(data)

    def refuse(self, code: str, message: str, rid: str = RID) -> None:
        self.frame(proto.Error(rid, code, message))

    # -- the gates
    def host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        name = host
        if host.startswith("["):
            name = host[: host.find("]") + 1] if "]" in host else host
        elif host.count(":") == 1:
            name = host.partition(":")[0]
        return bool(name) and name in self.app.allowed

    def origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        host = (self.headers.get("Host") or "").strip().lower()
        if not origin or origin == "null":
            return False
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https"):
            return False
        # the page's own origin; or a name of [web] hosts on its scheme's own port (a
        # proxy that rewrites Host still passes the browser's Origin: a name the person
        # listed is theirs, but another server on another port of it is not)
        try:
            port = parts.port
        except ValueError:
            return False
        return parts.netloc.lower() == host or (
            port is None and (parts.hostname or "") in self.app.named)

    def token(self) -> str | None:
        """The tma_web cookie's value. Read by hand: every other server on this host's
        name sends its cookies here too, and the library's parser drops every cookie
        after the first one it cannot parse."""
        for raw in self.headers.get_all("Cookie") or ():
            for part in raw.split(";"):
                name, eq, value = part.strip().partition("=")
                if eq and name == COOKIE and value:
                    return value.strip('"')
        return None

    def device(self):
        try:
            dev = self.app.store.device_for(self.token())
        except DeviceError as exc:
            log(f"tma web: {exc}")  # the file's path and why: the log's, not the client's
            raise Refusal(proto.INTERNAL, "the devices file cannot be read: see the "
                          "server's log") from None
        if dev is None:
            raise Refusal("unauthorized", "this browser is not paired (or its pairing was "
                          "revoked): run `tma web pair` on the machine and open the URL "
                          "it prints")
        return dev

    # -- the verbs
    def do_GET(self) -> None:  # noqa: N802 - the base's name
        self._route("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        if urlsplit(self.path).path.startswith("/api/"):
            self.close_connection = True
            self.refuse(proto.BAD_REQUEST, "HEAD reaches the page's files only")
            return
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def _route(self, method: str) -> None:
        url = urlsplit(self.path)
        try:
            if not self.host_ok():
                raise Refusal("forbidden", "this server answers only to a loopback Host or "
                              "a name in [web] hosts (DNS rebinding refused)")
            if method == "POST" and not self.origin_ok():
                raise Refusal("forbidden", "a request that changes something needs an "
                              "Origin that matches the Host")
            if method == "POST" and (self.headers.get("Content-Type") or "").partition(
                    ";")[0].strip().lower() != "application/json":
                # a form or a text/plain fetch crosses origins without asking; a JSON
                # one must ask first (a preflight), which this server never answers
                raise Refusal(proto.BAD_REQUEST, "a request that changes something is "
                              "application/json")
            if not url.path.startswith("/api/"):
                if method != "GET":
                    raise Refusal(proto.BAD_REQUEST, "only GET reaches the page's files")
                self.static(url.path)
                return
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            self.api(method, url.path[len("/api/"):], query)
        except Refusal as r:
            if method == "POST":
                self.close_connection = True  # its body may be unread
            self.refuse(r.code, r.message)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the client went, or stopped reading its stream for Handler.timeout
        except Exception as exc:  # noqa: BLE001 - one request's failure is its error frame
            log(f"tma web: {method} {url.path} failed: {exc!r}")
            try:
                self.refuse(proto.INTERNAL, serve._trouble(exc))
            except OSError:
                pass

    def static(self, path: str) -> None:
        name = "index.html" if path in ("/", "/index.html") else path.lstrip("/")
        ok = name and "/" not in name and not name.startswith(".") and all(
            c.isalnum() or c in "._-" for c in name)
        file = STATIC / name
        if not ok or not file.is_file():
            data = b"not found\n"
            self._headers(404, "text/plain; charset=utf-8", len(data), api=False)
            if self.command != "HEAD":
                self.wfile.write(data)
            return
        data = file.read_bytes()
        self._headers(200, TYPES.get(file.suffix, "application/octet-stream"), len(data),
                      api=False)
        if self.command != "HEAD":
            self.wfile.write(data)

    def body(self) -> dict:
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            raise Refusal(proto.BAD_REQUEST, f"a body of at most {MAX_BODY} bytes, with "
                          "its Content-Length")
        raw = self.rfile.read(n)
        try:
            doc = json.loads(raw)
        except ValueError:
            raise Refusal(proto.BAD_REQUEST, "the body is not JSON") from None
        if not isinstance(doc, dict):
            raise Refusal(proto.BAD_REQUEST, "the body is not a JSON object")
        return doc

    #: GET /api/<name> -> its method (each takes the device and the query).
    GETS = {"hello": "get_hello", "snapshot": "get_snapshot", "stream": "get_stream",
            "card": "get_card", "window": "get_window", "event": "get_event",
            "receipts": "get_receipts"}

    def api(self, method: str, what: str, q: dict[str, str]) -> None:
        if (method, what) == ("POST", "pair"):
            self.pair()
            return
        dev = self.device()
        if (method, what) == ("POST", "dispatch"):
            self.dispatch(dev)
            return
        name = self.GETS.get(what) if method == "GET" else None
        if name is None:
            raise Refusal(proto.NOT_FOUND, f"no {method} /api/{what}")
        getattr(self, name)(dev, q)

    def get_hello(self, dev, _q) -> None:
        r = self.app.reader
        self.frame(proto.HelloResponse(RID, r.host, __version__, r.interval_ms, dev.scopes))

    def get_snapshot(self, _dev, _q) -> None:
        self.frame(self.app.reader.snapshot()[1])

    def get_stream(self, _dev, _q) -> None:
        self.stream()

    def get_card(self, dev, q) -> None:
        host, pane = self.pane_of(q)
        if host != self.app.reader.host:
            self.frame(self.remote(lambda: fleet_read.card(
                self.app.session, f"{host}:{pane}").replace(id=RID)))
        else:
            self.frame(self.app.conn(dev).card(proto.CardRequest(RID, pane)))

    def get_window(self, dev, q) -> None:
        host, pane = self.pane_of(q)
        last = q.get("last")
        if last is not None and not last.isdigit():
            raise Refusal(proto.BAD_REQUEST, "last: a whole number")
        n, before = int(last) if last else None, q.get("before") or None
        if host != self.app.reader.host:
            self.frame(self.remote(lambda: fleet_read.window(
                self.app.session, f"{host}:{pane}", last=n, before=before).replace(id=RID)))
        else:
            self.frame(self.app.conn(dev).transcript(proto.WindowRequest(RID, pane, n, before)))

    def get_event(self, dev, q) -> None:
        host, pane = self.pane_of(q)
        cursor = q.get("cursor")
        if not cursor:
            raise Refusal(proto.BAD_REQUEST, "event needs ?cursor=")
        if host != self.app.reader.host:
            self.frame(self.remote(lambda: fleet_read.event(
                self.app.session, f"{host}:{pane}", cursor).replace(id=RID)))
        else:
            self.frame(self.app.conn(dev).transcript(proto.EventRequest(RID, pane, cursor)))

    def get_receipts(self, dev, q) -> None:
        since = q.get("since_ms")
        if since is not None and not since.isdigit():
            raise Refusal(proto.BAD_REQUEST, "since_ms: a whole number")
        self.frame(proto.Receipts(RID, self.app.conn(dev).receipts(proto.ReceiptsRequest(
            RID, q.get("slot") or None, int(since) if since else None))))

    def pane_of(self, q: dict[str, str]) -> tuple[str, str]:
        """(host, %N) the request's ?pane= names (this machine's for a bare %N)."""
        pane = q.get("pane")
        if not pane:
            raise Refusal(proto.BAD_REQUEST, "name the pane: ?pane=%N or HOST:%N")
        host, bare = split_pane(pane, self.app.reader.host)
        if not bare.startswith("%") or not bare[1:].isdigit():
            raise Refusal(proto.BAD_REQUEST, f"{pane}: a pane is %N or HOST:%N")
        return host, bare

    def remote(self, ask) -> proto.Frame:
        """A fleet host's answer over its link (fleet.read), or the error frame for why
        none came."""
        try:
            return ask()
        except fleet_hosts.HostError as exc:
            return proto.Error(RID, proto.NOT_FOUND, str(exc))
        except LookupError as exc:
            return proto.Error(RID, proto.NOT_FOUND, f"no agent pane {exc}")
        except fleet_read.Refused as exc:
            return proto.Error(RID, exc.code, exc.message)
        except fleet_read.HostDown as exc:
            return proto.Error(RID, "host-down", str(exc))

    def pair(self) -> None:
        code = self.body().get("code")
        if not isinstance(code, str) or not code.strip():
            raise Refusal(proto.BAD_REQUEST, 'the body is {"code": "..."}')
        try:
            token, dev = self.app.store.redeem(code)
        except DeviceError as exc:
            log(f"tma web: a pairing failed: {exc}")
            raise Refusal("unauthorized", str(exc)) from None
        log(f"tma web: paired device {dev.name!r} ({', '.join(dev.scopes)})")
        secure = (self.headers.get("X-Forwarded-Proto") or "").lower() == "https"
        cookie = (f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; "
                  f"Max-Age={400 * 86400}" + ("; Secure" if secure else ""))
        r = self.app.reader
        self.frame(proto.HelloResponse(RID, r.host, __version__, r.interval_ms, dev.scopes),
                   extra=(("Set-Cookie", cookie),))

    def dispatch(self, dev) -> None:
        doc = self.body()
        given = doc.get("id")
        rid = given if isinstance(given, str) else RID
        doc.setdefault("schema", proto.SCHEMA)
        doc.setdefault("id", RID)
        doc.setdefault("t", "dispatch")
        if doc.get("host") is None:  # left out (or null): this machine's pane
            doc["host"] = self.app.reader.host
        try:
            d = proto.parse_line(json.dumps(doc), proto.REQUEST)
        except proto.ProtoError as exc:
            raise Refusal(exc.code, exc.message) from None
        if not isinstance(d, proto.Dispatch):
            raise Refusal(proto.BAD_REQUEST, "the body is a dispatch frame")
        host, pane = split_pane(d.pane, d.host)
        if not untrusted.pane_id_ok(pane):
            raise Refusal(proto.BAD_REQUEST, f"{untrusted.clean(d.pane, 80)}: a pane is %N "
                          "or HOST:%N")
        need = serve.SCOPE_OF.get(d.action)
        if need is None or need not in dev.scopes:
            self.frame(proto.Error(rid, proto.SCOPE_DENIED, (
                f"`{d.action}` is never fired from the web" if need is None else
                f"`{d.action}` needs {need}, and this device ({dev.name}) is granted "
                f"{', '.join(dev.scopes)}")))
            return
        if host != self.app.reader.host and self.app.reader.stale(host, pane):
            # as `tma act --menu` offers nothing on a stale row: the host is offline, and
            # what the row says is what was last heard, not what the pane shows now
            self.frame(proto.Error(rid, HOST_OFFLINE, (
                f"host {host} is offline: {host}:{pane} shows what was last heard, and "
                "its actions come back with it")))
            return
        if host != self.app.reader.host:
            self.frame(self.remote(lambda: proto.Receipt(rid, self.remote_dispatch(
                dev, d, host, pane))))
            return
        row = self.app.conn(dev).dispatch(d.replace(pane=pane, host=host))
        self.frame(proto.Receipt(rid, row))

    def remote_dispatch(self, dev, d: proto.Dispatch, host: str,
                        pane: str) -> proto.ReceiptRow:
        """A fleet host's pane: fired as `tma act ACTION --pane HOST:%N` is
        (tma.runtime.fleet.act: this machine's outbox, the host's ledger, whose slot
        names the answer to the prompt, so a double tap is answered from it)."""
        # The page's slot is claimed and answered in this machine's ledger too, as a
        # local dispatch's is: a page whose response was lost asks for its receipt by
        # that slot (and found none: "unknown"). Firing twice is the host's to refuse
        # (fleet.act's own slot names the prompt and the answer), so a failure before an
        # answer gives the claim back rather than caching an error for the retry.
        ledger = self.app.ledger
        prior = ledger.claim(d.slot, pane, d.action, dev.name, now_ms())
        if prior is not None:
            return prior
        try:
            fired = fleet_act.fire(self.app.session, f"{host}:{pane}", d.action,
                                   text=d.text, answers=d.answers,
                                   expect_episode=d.binder.expect_episode_ms)
        except BaseException:
            ledger.release(d.slot)
            raise
        log(f"tma web: {dev.name} fired {d.action} at {host}:{pane}: {fired.outcome}")
        row = proto.ReceiptRow(d.slot, pane, d.action, fired.outcome, fired.reason,
                               fired.exit_code, fired.cached, dev.name, now_ms(),
                               fired.message or None)
        if fired.reason == "locked":
            ledger.release(d.slot)
        else:
            ledger.finish(row)
        return row

    # -- the stream
    def stream(self) -> None:
        app = self.app
        with app.streams_lock:
            if app.streams >= MAX_STREAMS:
                raise Refusal(proto.TOO_MANY_CONNECTIONS,
                              f"at most {MAX_STREAMS} streams at once")
            app.streams += 1
        try:
            self._stream()
        finally:
            with app.streams_lock:
                app.streams -= 1

    def _stream(self) -> None:
        reader, token = self.app.reader, self.token()
        self.close_connection = True
        self._headers(200, "text/event-stream; charset=utf-8", None, api=True,
                      extra=(("Connection", "close"), ("X-Accel-Buffering", "no")))
        self.wfile.write(b"retry: 2000\n\n")
        at = reader.after(self.headers.get("Last-Event-ID"))
        if at is None:
            at = self.send_snapshot()
        while not reader.closing:
            got = reader.since(at)
            if got is None:
                at = self.send_snapshot()
                continue
            at, frames = got
            for n, frame in frames:
                self.event(reader.event_id(n), frame)
            if not frames:
                self.wfile.write(b": keepalive\n\n")
            self.wfile.flush()
            reader.wait(at, KEEPALIVE_S)
            if self.app.store.device_for(token) is None:  # revoked: the stream ends
                log("tma web: a stream's device was revoked; stream ended")
                return

    def send_snapshot(self) -> int:
        reader = self.app.reader
        seq, snap = reader.snapshot()
        eid = reader.event_id(seq)
        self.event(eid, snap.replace(id=eid))
        self.wfile.flush()
        return seq

    def event(self, eid: str, frame: proto.Frame) -> None:
        self.wfile.write(f"id: {eid}\nevent: {frame.T}\ndata: ".encode() + proto.encode(frame)
                         + b"\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:
        """One line for a request that failed outside the handler's own catch (a client
        that reset the connection while its request line was read): the library's
        default prints a whole traceback."""
        exc = sys.exc_info()[1]
        log(f"tma web: a connection failed: {type(exc).__name__}")


class Server6(Server):
    address_family = socket.AF_INET6


def make(session, *, bind: str, port: int, interval_ms: int, socket_path: str | None,
         allowed_hosts: tuple[str, ...] = ()) -> tuple[Server, Reader]:
    addr = check_bind(bind)
    reader = Reader(session, host=os.uname().nodename, interval_ms=interval_ms,
                    socket_path=socket_path, log=log)
    app = App(session, reader, allowed_hosts=allowed_hosts)
    handler = type("BoundHandler", (Handler,), {"app": app})
    cls: type[Server] = Server6 if ":" in addr else Server
    return cls((addr, port), handler), reader


def run(session, *, bind: str, port: int, interval_ms: int, socket_path: str | None,
        allowed_hosts: tuple[str, ...] = ()) -> int:
    """Serve until SIGTERM or Ctrl-C; prints the URL first (exit 1: cannot listen)."""
    web = getattr(session.config, "web", None) or {}
    try:
        httpd, reader = make(session, bind=bind, port=port, interval_ms=interval_ms,
                             socket_path=socket_path,
                             allowed_hosts=allowed_hosts or tuple(web.get("hosts", ())))
    except OSError as exc:
        sys.stderr.write(f"tma web: cannot listen on {bind}:{port}: {exc.strerror or exc}\n")
        return 1
    reader.start()
    host, real_port = str(httpd.server_address[0]), int(httpd.server_address[1])
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"tma web: serving http://{shown}:{real_port}/ (pair a browser: "
                     f"tma web pair --port {real_port})\n")
    sys.stdout.flush()

    def stop(_signo, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    thread = threading.Thread(target=reader.run, name="tma-web-reader", daemon=True)
    thread.start()
    try:
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        reader.stop()
        httpd.server_close()
        thread.join(timeout=5)
    return 0



"""The daemon's socket: status, handed-off hook events, subscribers and history.

One part owns the listening socket and every connection on it; the loop only polls
their fds. Each connection opens with a 4-byte request (docs/explanation/daemon.md,
"The socket protocol"):

    TMAQ  status: one JSON line (the status document), then EOF
    TMA1  a hook event: six u32-LE length-prefixed UTF-8 fields (pane, agent, kind,
          payload, at, scope); answered ACK 0x06 (the daemon stamps it) or NAK 0x15
          (the hook stamps it itself), then EOF
    TMAS  subscribe: 0x11, then the connection is kept and gets one 0x12 per
          state-affecting loop iteration (a wake hint, never data)
    TMAH  history: 0x13, a u32-LE length and the transitions document, then EOF
    TMAW  wake the subscribers (a hook stamped a pane itself): 0x06, then EOF
    TMAF  the fleet: one JSON line (every host's state and the hosts' rows, as
          tma.daemon.fleet keeps them), then EOF

Single-threaded and bounded: every socket is non-blocking, a partial request is
parked in the poll set with a whole-request deadline, at most MAX_PARTIAL are parked
(the oldest is dropped for a new one), fields are capped, at most MAX_SUBSCRIBERS are
kept and one whose buffer is full (or gone) is dropped. A slow or hostile client can
cost the loop a recv, never a wait.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections import deque

from tma.core.codec import clamp_future
from tma.daemon.fleet import Fleet
from tma.daemon.parts import Part, Transition
from tma.daemon.stamper import Stamper
from tma.runtime import handoff, manifests
from tma.runtime.notify import gate as notify_gate
from tma.tmux import spawn

MAGIC_EVENT, MAGIC_STATUS, MAGIC_SUB, MAGIC_HISTORY, MAGIC_WAKE, MAGIC_SEGMENT = (
    b"TMA1", b"TMAQ", b"TMAS", b"TMAH", b"TMAW", b"TMAT")
MAGIC_FLEET = b"TMAF"
FLEET_SEND_S = 1.0  # a fleet document larger than the socket's buffer: at most this long
ACK, NAK, SUBSCRIBED, WAKE, HISTORY = b"\x06", b"\x15", b"\x11", b"\x12", b"\x13"
FIELDS = ("pane", "agent", "kind", "payload", "at", "scope")
SMALL_CAP = 4096
PAYLOAD_CAP = 1 << 20
DEADLINE_MS = 2000
MAX_PARTIAL = 32
MAX_SUBSCRIBERS = 16
HISTORY_CAP = 256
ACCEPT_BURST = 64
REFRESH_MS = 250  # handed-off stamps are listed together (no capture), at most this often
BATCH_MS = 25  # stamping rounds per loop turn before the sockets are polled again
CLOSE_STAMP_MS = 1000  # what a stopping daemon spends stamping what it ACKed
# kinds intake handles without a [[hooks.map]] entry (tma.runtime.hook.handle)
_OWN_KINDS = frozenset({"context", "permission-replied", "question-replied", "SubagentStart",
                        "SubagentStop"})


def parse_scope(buf: bytes) -> str | None:
    """A TMAT request's body: one length-prefixed field (the caller's scope). None while
    incomplete; Refused when malformed."""
    if len(buf) < 4:
        return None
    n = int.from_bytes(buf[:4], "little")
    if n > 2 * SMALL_CAP:
        raise Refused("scope too long")
    if len(buf) < 4 + n:
        return None
    if len(buf) > 4 + n:
        raise Refused("bytes after the request")
    try:
        return buf[4:4 + n].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused("scope is not UTF-8") from exc


def _digits(text: str) -> bool:
    """ASCII digits, at most 15 of them (an epoch ms, a pane number): str.isdigit
    alone takes `²` and 4000-digit numbers, which fail only after the ACK."""
    return 0 < len(text) <= 15 and text.isascii() and text.isdigit()


def _mono() -> int:
    return time.monotonic_ns() // 1_000_000


class _Conn:
    """One parked connection: what it has sent so far, and until when it may."""

    __slots__ = ("sock", "fd", "buf", "deadline")

    def __init__(self, sock: socket.socket, deadline: int) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.buf = b""
        self.deadline = deadline


class Refused(Exception):
    """A request that breaks the protocol or a bound: the connection is closed."""


def parse_event(buf: bytes) -> list[str] | None:
    """The fields of a complete event frame (after the magic), None while incomplete.
    Raises Refused for an over-long field, trailing bytes or bad UTF-8."""
    out: list[str] = []
    i = 0
    for n, name in enumerate(FIELDS):
        if len(buf) < i + 4:
            return None
        size = int.from_bytes(buf[i:i + 4], "little")
        cap = PAYLOAD_CAP if name == "payload" else SMALL_CAP
        if size > cap:
            raise Refused(f"{name} field of {size} bytes (cap {cap})")
        i += 4
        if len(buf) < i + size:
            return None
        try:
            out.append(buf[i:i + size].decode("utf-8"))
        except UnicodeDecodeError:
            raise Refused(f"{name} field is not UTF-8") from None
        i += size
        if n == len(FIELDS) - 1 and len(buf) > i:
            raise Refused("bytes after the frame")
    return out


class Server(Part):
    name = "server"

    def __init__(self, daemon) -> None:
        super().__init__(daemon)
        self.listener: socket.socket | None = None
        self.partial: dict[int, _Conn] = {}
        self.parked: set[int] = set()  # read during a spawn, answered by the loop
        self.subscribers: dict[int, socket.socket] = {}
        self.history: deque[Transition] = deque(maxlen=HISTORY_CAP)
        self.recorded = 0
        self.wake_due = False
        self.refresh_at: int | None = None
        self.counts = {"handoffs": 0, "handoff_naks": 0, "handoffs_abandoned": 0,
                       "segment_answers": 0, "segment_naks": 0,
                       "refused": 0, "wakes": 0}

        self.scope = handoff.scope({"config": daemon.config_path or "",
                                    "manifest-dir": daemon.manifest_dir or ""})
        self.tables: dict | None = None
        self.blocking_sink = False

        self.stamper = Stamper(daemon)
        self._bind()  # first: `daemon --ensure` returns once the lock is held and this exists

        # while the loop waits on tmux, hooks are still answered (and queued)
        spawn.set_side(self._side_fds, self._side_ready)
        self.reloaded()

    # ------------------------------------------------------------ the part
    def _bind(self) -> None:
        path = self.daemon.paths.sock
        try:
            os.unlink(path)  # a stale socket: the lock is ours, so nobody serves it
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        sock.listen(64)
        sock.setblocking(False)
        self.listener = sock

    def fds(self) -> list[int]:
        out = [self.listener.fileno()] if self.listener is not None else []
        return out + list(self.partial) + list(self.subscribers)

    def ready(self, fd: int) -> None:
        if self.listener is not None and fd == self.listener.fileno():
            self._accept()
        elif fd in self.partial:
            self._receive(self.partial[fd])
        elif fd in self.subscribers:
            self._subscriber_readable(fd)

    def deadline(self) -> int | None:
        if self.wake_due or self.stamper.queue or self.parked:
            return 0
        times = [c.deadline for c in self.partial.values()]
        if self.refresh_at is not None:
            times.append(self.refresh_at)
        return min(times, default=None)

    def tick(self, now_mono: int) -> None:
        for fd in list(self.parked):
            self.parked.discard(fd)
            conn = self.partial.get(fd)
            if conn is not None:
                self._resume(conn)
        if self.stamper.queue and self.stamper.stamp(now_mono + BATCH_MS, _mono):
            self.wake_due = True
            if self.refresh_at is None:
                self.refresh_at = _mono() + REFRESH_MS
        for conn in [c for c in self.partial.values() if c.deadline <= now_mono]:
            self.counts["refused"] += 1
            self._drop(conn)
        if self.refresh_at is not None and self.refresh_at <= now_mono:
            self.refresh_at = None
            self.daemon.refresh()  # the history and every part hear the change
        if self.wake_due:
            self.wake_due = False
            self._wake()

    def on_read(self, rows: list, transitions: list[Transition], now: int) -> None:
        if transitions:
            self.history.extend(transitions)
            self.recorded += len(transitions)
            self.wake_due = True

    def poke(self) -> None:
        """The fleet part heard a host change (its rows, or online/offline): subscribers
        look now, as after a loop iteration that changed a local pane."""
        self.wake_due = True

    def status(self) -> dict:
        return {**self.counts, "subscribers": len(self.subscribers),
                "queued": self.stamper.pending(), "stamps_dropped": self.stamper.dropped}

    def reloaded(self) -> None:

        cfg = self.daemon.cfg
        try:
            self.tables = manifests.hook_tables(self.daemon.manifest_dir, cfg.agents)
        except Exception as exc:  # no tables: every event is NAKed, the hooks stamp
            self.tables = None
            self.daemon.log(f"tma daemon: hook tables unavailable: {exc}")
        # with from_event the intake notifies, and a notify command may run for 10 s in
        # the process that stamps: not this loop (without it the notifier part rings)
        self.blocking_sink = notify_gate.blocking_sink(cfg)

    def close(self) -> None:
        spawn.set_side(None)
        # what was ACKed is stamped first, for a second at most; never onto a server that
        # replaced the one these events came from (pane ids start again at %0)
        if self.stamper.queue and not getattr(self.daemon, "replaced", False):
            try:
                self.stamper.stamp(_mono() + CLOSE_STAMP_MS, _mono)
            except Exception as exc:  # the server is gone: nothing left to stamp on
                self.daemon.log(f"tma daemon: queued events not stamped: {exc}")
        for conn in list(self.partial.values()):
            self._drop(conn)
        for fd in list(self.subscribers):
            self._unsubscribe(fd)
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        try:
            os.unlink(self.daemon.paths.sock)
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------ connections
    def _side_fds(self) -> list[int]:
        """What one of the loop's tmux spawns also watches: the listener, and the
        connections that may still become hook events (nothing parked for the loop)."""
        out = [self.listener.fileno()] if self.listener is not None else []
        return out + [fd for fd, c in self.partial.items() if fd not in self.parked
                      and MAGIC_EVENT.startswith(bytes(c.buf[:4]))]

    def _side_ready(self, fd: int) -> None:
        """Called inside one of the loop's tmux spawns: take hook events now; any other
        request waits, parked, for the loop."""
        if self.listener is not None and fd == self.listener.fileno():
            self._accept(events_only=True)
        elif fd in self.partial and fd not in self.parked:
            self._receive(self.partial[fd], events_only=True)

    def _accept(self, events_only: bool = False) -> None:
        listener = self.listener
        if listener is None:  # closed: nothing to accept
            return
        for _ in range(ACCEPT_BURST):
            try:
                sock, _addr = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE and friends: try again next turn
                self.daemon.log(f"tma daemon: accept: {exc}")
                return
            sock.setblocking(False)
            if len(self.partial) >= MAX_PARTIAL:
                oldest = min(self.partial.values(), key=lambda c: c.deadline)
                self.counts["refused"] += 1
                self._drop(oldest)
            conn = _Conn(sock, _mono() + DEADLINE_MS)
            self.partial[conn.fd] = conn
            self._receive(conn, events_only)  # a client writes right after connecting

    def _resume(self, conn: _Conn) -> None:
        """A request parked during a spawn: answer what is whole, read the rest."""
        try:
            if self._complete(conn):
                return
        except Refused:
            self.counts["refused"] += 1
            self._drop(conn)
            return
        except OSError:
            self._drop(conn)
            return
        self._receive(conn)

    def _drop(self, conn: _Conn) -> None:
        self.parked.discard(conn.fd)
        self.partial.pop(conn.fd, None)
        conn.sock.close()

    def _receive(self, conn: _Conn, events_only: bool = False) -> None:
        try:
            while True:
                chunk = conn.sock.recv(65536)
                if not chunk:
                    break  # EOF before a whole request: nothing to answer
                conn.buf += chunk
                if len(conn.buf) > PAYLOAD_CAP + 6 * 4 + 5 * SMALL_CAP + 4:
                    raise Refused("request too long")
                if events_only and conn.buf[:4] != MAGIC_EVENT[:len(conn.buf[:4])]:
                    self.parked.add(conn.fd)  # the loop reads the rest and answers
                    return
                if self._complete(conn):
                    return
            self.counts["refused"] += 1
            self._drop(conn)
        except (BlockingIOError, InterruptedError):
            return
        except Refused:
            self.counts["refused"] += 1
            self._drop(conn)
        except OSError:
            self._drop(conn)

    def _complete(self, conn: _Conn) -> bool:
        """Act on the request once it is whole; True when the connection is handled."""
        magic = conn.buf[:4]
        if len(magic) < 4:
            if not any(m.startswith(magic) for m in (MAGIC_EVENT, MAGIC_STATUS, MAGIC_SUB,
                                                     MAGIC_HISTORY, MAGIC_WAKE,
                                                     MAGIC_SEGMENT, MAGIC_FLEET)):
                raise Refused("unknown request")
            return False
        if magic == MAGIC_EVENT:
            fields = parse_event(conn.buf[4:])
            if fields is None:
                return False
            self.partial.pop(conn.fd, None)
            self._event(conn.sock, fields)
            return True
        if magic == MAGIC_SEGMENT:
            scope_ = parse_scope(conn.buf[4:])
            if scope_ is None:
                return False
            self.partial.pop(conn.fd, None)
            self._reply(conn.sock, self._segment(scope_))
            return True
        if len(conn.buf) > 4:
            raise Refused("bytes after the request")
        self.partial.pop(conn.fd, None)
        if magic == MAGIC_STATUS:
            self._reply(conn.sock, (json.dumps(self.daemon.status()) + "\n").encode())
        elif magic == MAGIC_HISTORY:
            doc = json.dumps(self.transitions_doc()).encode()
            self._reply(conn.sock, HISTORY + len(doc).to_bytes(4, "little") + doc)
        elif magic == MAGIC_WAKE:
            # a hook stamped a pane itself: subscribers look now, and the parts (the
            # notifier, the segment, the history) hear it at the next listing
            self.wake_due = True
            if self.refresh_at is None:
                self.refresh_at = _mono() + REFRESH_MS
            self._reply(conn.sock, ACK)
        elif magic == MAGIC_SUB:
            self._subscribe(conn.sock)
        elif magic == MAGIC_FLEET:
            self._fleet(conn.sock)
        else:
            self.partial[conn.fd] = conn  # dropped (and counted) by the caller
            raise Refused("unknown request")
        return True

    @staticmethod
    def _reply(sock: socket.socket, data: bytes) -> None:
        """A whole answer, or nothing: a fresh socket's buffer takes a status line; a
        history document that does not fit at once is cut off (the client sees EOF
        early and says so) rather than waited for."""
        try:
            sock.send(data)
        except OSError:
            pass
        finally:
            sock.close()

    def _fleet(self, sock: socket.socket) -> None:
        """The fleet document (tma.daemon.fleet), sent whole: a few hundred rows outgrow a
        socket buffer, so this one send may wait, FLEET_SEND_S at most."""
        part = next((p for p in self.daemon.parts if isinstance(p, Fleet)), None)
        doc = part.doc() if part is not None else {"schema": 1, "hosts": [], "agents": []}
        try:
            sock.settimeout(FLEET_SEND_S)
            sock.sendall((json.dumps(doc) + "\n").encode())
        except OSError:
            pass
        finally:
            sock.close()

    def _segment(self, scope_: str) -> bytes:
        """`tma status`'s answer from the status segment the daemon keeps, when it is
        fresh and rendered for the caller's config; NAK otherwise (the caller runs its
        own cycle)."""
        from tma.daemon.segment import Segment  # loaded already: the daemon runs one

        part = next((p for p in self.daemon.parts if isinstance(p, Segment)), None)
        text = part.serve(_mono()) if part is not None and scope_ == self.scope else None
        if text is None:
            self.counts["segment_naks"] += 1
            return NAK
        self.counts["segment_answers"] += 1
        raw = text.encode("utf-8")
        return ACK + len(raw).to_bytes(4, "little") + raw

    def transitions_doc(self) -> dict:
        return {"schema": 1, "cap": HISTORY_CAP, "recorded": self.recorded,
                "transitions": [t.to_json() for t in self.history]}

    # ------------------------------------------------------------ subscribers
    def _subscribe(self, sock: socket.socket) -> None:
        if len(self.subscribers) >= MAX_SUBSCRIBERS:
            self.counts["refused"] += 1
            sock.close()  # the client polls instead
            return
        try:
            sock.send(SUBSCRIBED)
        except OSError:
            sock.close()
            return
        self.subscribers[sock.fileno()] = sock

    def _subscriber_readable(self, fd: int) -> None:
        """A subscriber only listens: readable means it went away (or talks: drop it)."""
        self._unsubscribe(fd)

    def _unsubscribe(self, fd: int) -> None:
        sock = self.subscribers.pop(fd, None)
        if sock is not None:
            sock.close()

    def _wake(self) -> None:
        self.counts["wakes"] += 1
        for fd, sock in list(self.subscribers.items()):
            try:
                sock.send(WAKE)
            except OSError:  # full (it stopped reading) or gone
                self._unsubscribe(fd)

    # ------------------------------------------------------------ events
    def _event(self, sock: socket.socket, fields: list[str]) -> None:
        """ACK and queue the stamp (tma.daemon.stamper), or NAK; the stamp is the hook's
        own intake (runtime.hook), run off the loop in the pane's order."""
        pane, agent, kind, payload, at, scope_ = fields
        table = self._table(pane, agent, kind, payload, at, scope_)
        if table is None or not self.stamper.has_room(len(payload)):
            self.counts["handoff_naks"] += 1
            self._reply(sock, NAK)
            return
        try:
            gone = sock.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            gone = False
        except OSError:
            gone = True
        if not gone:
            try:
                gone = sock.send(ACK) != 1
            except OSError:
                gone = True
        sock.close()
        if gone:  # the hook gave up waiting and stamps the event itself
            self.counts["handoffs_abandoned"] += 1
            return
        self.counts["handoffs"] += 1

        # the hook's clock may be ahead of this one (or forged): never write evidence
        # from the future beyond the skew
        fields[4] = str(clamp_future(int(at), time.time_ns() // 1_000_000))
        # room was checked before the ACK and only this thread adds: put cannot refuse
        self.stamper.put(fields, table)

    def _table(self, pane: str, agent: str, kind: str, payload: str, at: str, scope_: str):
        """The agent's hook table when the daemon takes the event on, else None."""
        if scope_ != self.scope or self.tables is None or self.blocking_sink:
            return None
        if not (pane[:1] == "%" and _digits(pane[1:]) and _digits(at) and kind):
            return None  # NAK before the ACK: the hook stamps it itself
        table = self.tables.get(agent)
        if table is None:
            return None
        if table.holds_reply(kind):
            return None  # the reply lane holds in the hook's own process
        if kind not in _OWN_KINDS and table.map_event(kind, payload) is None:
            return None  # unmapped (a manifest newer than the daemon's, perhaps)
        return table

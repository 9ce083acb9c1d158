"""`tma serve --stdio`: this host's agents, spoken as the public wire protocol (schema 1).

A device (another machine's tma, or any client of the protocol) runs this over a pipe,
normally an SSH forced command, and exchanges NDJSON frames with it: requests on stdin,
responses and streamed frames on stdout, logs on stderr and nothing else anywhere.

What a connection may do comes from the argv the spawner wrote (the forced command in
`authorized_keys`: `--scope read,act:answer`), never from the stream: no frame widens a
scope. Detection stays here; the device only reads what this host decided:
- `hello` first (a second one is a bad request), answered with the host's name, tma's
  version, the stream interval and the scopes;
- `snapshot` and `subscribe` (an `ack`, then per cycle `edge` frames or whole `snapshot`
  frames when they changed; the first cycle is the baseline and sends nothing);
- `card` (what a blocked pane asks, from tma.runtime.card when it is there);
- `dispatch` -> `receipt`, through three gates in order: the scope, the slot (claimed in the
  host's ledger before anything fires: a repeat gets the stored receipt), then the broker
  itself (`tma act` with the episode binder, which re-reads the screen under the pane's lock);
- `receipts` from the ledger, this connection's device's only (below);
  `window` and `event` (transcripts) answer `unsupported`.
Pane titles never leave the host: a FleetRow has no title.

Who a connection is comes from the argv too: `--device` (none: the unnamed device). A
frame's `device` (hello's, dispatch's) is a client's claim and is only logged; a
dispatch is recorded in the ledger under `--device`, and a `receipts` request reads
that device's receipts alone. The ledger is still one for the host: a slot repeated by
any device gets its stored receipt (the same answer to the same prompt fires once).

Where the rows come from (two modes, switched without a word on the stream):
- this tmux server's daemon runs: serve follows its push (`TMAS`, one wake byte per
  state-affecting loop iteration, coalesced over 100 ms) and reads the stamps the
  daemon wrote with one listing and no capture (`Cycle.run(produce=False)`), so N
  connections cost N listings, never N detections; a belt read runs every interval;
- no daemon: serve runs its own detection cycle every interval (the `hello`'s
  reconcile_interval_ms either way), capped by the connection seats, and between its
  cycles reads the stamps alone every STAMPS_MS (what a hook's `tma event` wrote
  reaches the stream without waiting for the cycle); it looks for a daemon every
  PROBE_S; a daemon that goes away mid-stream is dropped at once and the next read is
  an own cycle.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable

from tma import __version__
from tma.core import proto
from tma.core.paths import here
from tma.install.binary import running_tma
from tma.runtime import card, daemon_files, procs, rundir
from tma.runtime.feed import Wakes
from tma.runtime.git import GitInfo
from tma.runtime.ledger import Ledger
from tma.runtime.selectors import Selector
from tma.tmux import control, spawn

#: What each grant allows. An action outside this table (exec actions, compact) is
#: refused whatever the grants.
SCOPE_OF = {
    "approve": "act:answer", "deny": "act:answer", "question_reply": "act:answer",
    "question_reject": "act:answer", "steer": "act:steer", "steer_now": "act:steer",
    "interrupt": "act:steer", "deny_with_message": "act:steer",
    "approve_always": "act:always",
}
SCOPES = ("read", "act:answer", "act:steer", "act:always")
DEFAULT_INTERVAL_MS = 2000
DISPATCH_TIMEOUT_S = 15.0
#: Serve processes one host runs at once (`[serve] max_connections`; 0 counts as 1): each
#: runs its own cycle when no daemon runs, so a reconnect storm must not become a cycle
#: storm.
MAX_CONNECTIONS = 4
#: How often a serve without the daemon looks for one (a daemon started later is
#: followed from then on).
PROBE_S = 5.0
#: Without a daemon, how often serve reads the stamps alone between its cycles (one
#: listing, no capture): hooks stamp at once, and this is how soon the stream sees it.
STAMPS_MS = 500


class Seat:
    """One of the host's numbered connection seats: `serve/slot-N.conn` in the runtime
    dir, made with O_EXCL and holding the owner's pid; a dead owner's seat is taken over."""

    def __init__(self, directory: str, cap: int) -> None:
        self.dir, self.cap, self.path = directory, max(1, cap), ""

    def take(self, device: str | None) -> bool:
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        for n in range(self.cap):
            path = os.path.join(self.dir, f"slot-{n}.conn")
            for _attempt in range(2):
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    if _seat_alive(path):
                        break
                    try:
                        os.unlink(path)  # its process died: the seat is free again
                    except FileNotFoundError:
                        pass
                    continue
                with os.fdopen(fd, "w") as fh:
                    fh.write(f"pid={os.getpid()}\ndevice={device or ''}\n")
                self.path = path
                return True
        return False

    def leave(self) -> None:
        if self.path:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = ""


def _seat_alive(path: str) -> bool:
    try:
        with open(path) as fh:
            pid = int(fh.readline().partition("=")[2] or 0)
    except (OSError, ValueError):
        return True  # being written right now: not ours to take
    return pid <= 0 or procs.running(pid)  # no pid yet: being written, not ours to take


def parse_scopes(text: str) -> tuple[str, ...]:
    """`read,act:answer` -> the grants (read is always held); ValueError names a bad one."""
    out = ["read"]
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part not in SCOPES:
            raise ValueError(f"unknown scope {part!r} (expected: {', '.join(SCOPES)})")
        if part not in out:
            out.append(part)
    return tuple(out)


def fleet_row(row, *, host: str, server: str, git=None) -> proto.FleetRow:
    """One cycle row as the protocol's FleetRow (everything `ls --json` says but the title)."""
    stamp, opts = row.stamp, row.pane.options
    repo = branch = worktree = None
    if git is not None:
        repo, branch, worktree = git(row.pane.current_path)

    def num(key: str) -> int | None:
        raw = opts.get(key, "")
        return int(raw) if raw.isdigit() else None

    def text(key: str) -> str | None:
        return opts.get(key) or None

    context = num("@agent_context_pct")
    quota = num("@agent_quota_pct")
    cost = None
    try:
        cost = float(opts.get("@agent_cost_usd", ""))
        cost = cost if cost == cost and cost >= 0 and cost != float("inf") else None
    except ValueError:
        pass
    state = stamp.state if stamp.state in proto.STATES else "unknown"
    return proto.FleetRow(
        pane=row.pane.pane_id, agent=row.agent, state=state, detail=stamp.detail or None,
        since=stamp.since // 1000, since_ms=stamp.since, episode_ms=stamp.episode_ms,
        locator=row.pane.locator, attention=stamp.attention,
        done=stamp.state == "idle" and stamp.attention, session=stamp.session or None,
        transcript=text("@agent_transcript"),
        permission_request=text("@agent_permission_request"),
        stamped_at_ms=stamp.stamped_at or None,
        context=context if context is not None and context <= 100 else None,
        context_at_ms=num("@agent_context_at"), muted=row.muted, tokens=num("@agent_tokens"),
        quota=None if quota is None else proto.Quota(
            pct=quota, window=opts.get("@agent_quota_window", ""),
            resets_at_ms=num("@agent_quota_resets_at")),
        cost_usd=cost, repo=repo, branch=branch if repo is not None else None,
        worktree=worktree if repo is not None else None,
        pending_tool=text("@agent_pending_tool"), pending_call=text("@agent_pending_call"),
        pending_summary=text("@agent_pending_summary"), server=server, host=host)


def _selector(sel: proto.Selector | None):
    if sel is None:
        return None
    return Selector(session=sel.session, repo=sel.repo, branch=sel.branch, agent=sel.agent,
                    states=sel.state)


class Conn:
    """One device's connection. `rows()` runs a cycle and returns (rows, socket path);
    `fire(argv)` runs the broker and returns (exit code, stdout); `write` takes one
    encoded frame. All three are injected so a test can drive the protocol alone."""

    def __init__(self, *, host: str, version: str, scopes: tuple[str, ...], device: str | None,
                 interval_ms: int, rows: Callable, write: Callable[[bytes], None],
                 ledger, fire: Callable, card: Callable | None, clock: Callable[[], int],
                 log: Callable[[str], object]) -> None:
        self.host, self.version, self.scopes, self.device = host, version, scopes, device
        self.interval_ms, self._rows, self.write = interval_ms, rows, write
        self.ledger, self._fire, self._card = ledger, fire, card
        self.clock, self.log = clock, log
        self.greeted = False
        self.sub: proto.Subscribe | None = None
        self.baseline: dict[str, proto.FleetRow] | None = None
        self.last_snapshot: tuple[proto.FleetRow, ...] | None = None
        self.failing = False

    # -- the stream's lines
    def line(self, raw: bytes | proto.ProtoError) -> None:
        if isinstance(raw, proto.ProtoError):
            self.send(raw.frame())
            return
        try:
            frame = proto.parse_line(raw, proto.REQUEST)
        except proto.ProtoError as exc:
            self.send(exc.frame())
            return
        try:
            self.handle(frame)
        except Exception as exc:  # one request's failure is its error frame, not the end
            self.log(f"tma serve: {frame.T} failed: {exc!r}")
            self.send(proto.Error(frame.id, proto.INTERNAL, _trouble(exc)))

    def send(self, frame: proto.Frame) -> None:
        self.write(proto.encode(frame))

    def handle(self, frame: proto.Frame) -> None:
        if isinstance(frame, proto.HelloRequest):
            if self.greeted:
                self.send(proto.Error(frame.id, proto.BAD_REQUEST, "a second hello"))
                return
            self.greeted = True
            self.log(f"tma serve: hello from {frame.app} {frame.app_version} "
                     f"(device says {frame.device!r})")
            self.send(proto.HelloResponse(frame.id, self.host, self.version,
                                          self.interval_ms, self.scopes))
            return
        if not self.greeted:
            self.send(proto.Error(frame.id, proto.BAD_REQUEST, "the first frame must be hello"))
            return
        if isinstance(frame, proto.SnapshotRequest):
            self.send(proto.Snapshot(frame.id, self.fleet(frame.selector)))
        elif isinstance(frame, proto.Subscribe):
            self.sub, self.baseline, self.last_snapshot = frame, None, None
            # the baseline is read before the ack goes: a change the device makes once it
            # holds the ack is an edge (a failure's error frame still follows the ack)
            held: list[bytes] = []
            write, self.write = self.write, held.append
            try:
                self.tick()
            finally:
                self.write = write
            self.send(proto.Ack(frame.id))
            for data in held:
                self.write(data)
        elif isinstance(frame, proto.CardRequest):
            self.send(self.card(frame))
        elif isinstance(frame, proto.Dispatch):
            self.send(proto.Receipt(frame.id, self.dispatch(frame)))
        elif isinstance(frame, proto.ReceiptsRequest):
            self.send(proto.Receipts(frame.id, self.receipts(frame)))
        else:
            self.send(proto.unsupported(frame))  # type: ignore[arg-type]

    # -- reading
    def fleet(self, selector: proto.Selector | None = None) -> tuple[proto.FleetRow, ...]:
        rows, server, git = self._rows(_selector(selector))
        return tuple(fleet_row(r, host=self.host, server=server, git=git) for r in rows)

    def tick(self) -> None:
        """One stream cycle for the subscription (nothing without one)."""
        sub = self.sub
        if sub is None:
            return
        try:
            rows = self.fleet(sub.selector)
        except Exception as exc:  # tmux gone or failing: said once, retried every tick
            if not self.failing:
                self.log(f"tma serve: the stream's cycle failed: {exc}")
                self.send(proto.Error(sub.id, proto.INTERNAL, _trouble(exc)))
            self.failing = True
            return
        self.failing = False
        now = self.clock()
        if not sub.events:
            if self.last_snapshot is not None and rows != self.last_snapshot:
                self.send(proto.Snapshot(sub.id, rows))
            self.last_snapshot = rows
            return
        current = {r.pane: r for r in rows}
        before, self.baseline = self.baseline, current
        if before is None:
            return
        for pane, r in current.items():
            prior = before.get(pane)
            if prior is None or prior.state != r.state:
                self.send(proto.Edge(sub.id, now, pane, r.agent,
                                     prior.state if prior else "", r.state, r.detail,
                                     r.locator, r.repo, r.branch))
        for pane, r in before.items():
            if pane not in current:
                self.send(proto.Edge(sub.id, now, pane, r.agent, r.state, "", None,
                                     r.locator, r.repo, r.branch))

    def card(self, req: proto.CardRequest) -> proto.Frame:
        rows, _server, _git = self._rows(None)
        row = next((r for r in rows if r.pane.pane_id == req.pane), None)
        if row is None:
            return proto.Error(req.id, proto.NOT_FOUND, f"no agent pane {req.pane} here")
        if self._card is None:
            if row.stamp.state != "blocked":
                return proto.NoCard(req.id)
            return proto.InformationalCard(req.id, row.stamp.detail or "unknown",
                                           f"{row.agent} is blocked")
        return self._card(row, req.id)

    def receipts(self, req: proto.ReceiptsRequest) -> tuple[proto.ReceiptRow, ...]:
        """This connection's device's receipts (those recorded without one, for a serve
        without --device): the ledger is the host's, shared by every key that reaches it,
        and what one device answered, where and when is not another's to read, whatever
        its scope. A retry's own slot is found here, as the dispatch's replay is."""
        return tuple(r for r in self.ledger.query(req.slot, req.since_ms)
                     if r.device == self.device)

    # -- acting
    def dispatch(self, d: proto.Dispatch) -> proto.ReceiptRow:
        now = self.clock()
        # who acts is the forced command's --device, never the frame's: a client naming
        # another device would have its dispatch recorded (and its receipts read) as that
        # device's. What the frame says is only logged.
        if d.device is not None and d.device != self.device:
            self.log(f"tma serve: dispatch {d.action} on {d.pane} says device "
                     f"{d.device!r}; recorded as {self.device!r}")

        def receipt(outcome: str, reason: str | None, code: int,
                    cached: bool = False) -> proto.ReceiptRow:
            return proto.ReceiptRow(d.slot, d.pane, d.action, outcome, reason, code, cached,
                                    self.device, now)

        need = SCOPE_OF.get(d.action)
        if need is None or need not in self.scopes:  # costs nothing: before slot and tmux
            return receipt("refused", "scope-denied", 4)
        if d.text is not None and len(d.text.encode()) > proto.MAX_DISPATCH_TEXT_BYTES:
            return receipt("refused", "too-long", 4)
        prior = self.ledger.claim(d.slot, d.pane, d.action, self.device, now)
        if prior is not None:
            return prior
        argv = ["act", d.action, "--pane", d.pane, "--json"]
        if d.binder.expect_episode_ms:
            argv += ["--expect-episode", str(d.binder.expect_episode_ms)]
        if d.text is not None:
            argv += ["--text", d.text]
        for number, answer in enumerate(d.answers or (), 1):
            for label in answer:  # tma act takes one label a flag, keyed by question
                argv += ["--answer", f"{number}={label}"]
        try:
            code, out = self._fire(argv)
        except Exception as exc:
            self.log(f"tma serve: dispatch {d.action} on {d.pane} failed: {exc!r}")
            row = receipt("error", "fired-unknown", 1)
            self.ledger.finish(row)
            return row
        outcome, reason = _act_result(out, code)
        row = receipt(outcome, reason, code)
        if reason == "locked":
            self.ledger.release(d.slot)  # the one refusal a retry may clear
        else:
            self.ledger.finish(row)
        return row


def _trouble(exc: Exception) -> str:
    """The error frame's words for a host-side failure (tmux gone is the common one)."""
    if type(exc).__name__ == "NoServer":
        return "no tmux server running on this host"
    return f"the host failed: {exc}"


def _act_result(out: bytes, code: int) -> tuple[str, str | None]:
    """`tma act --json`'s outcome and reason; a broker that said nothing readable may have
    fired (`error` / `fired-unknown`)."""
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("outcome"), str):
        reason = doc.get("reason")
        return doc["outcome"], reason if isinstance(reason, str) else None
    if code == 3:
        return "vanished", "pane-gone"
    return "error", "fired-unknown"


# ------------------------------------------------------------------ the process


def run(session, *, scopes: tuple[str, ...], device: str | None, interval_ms: int,
        socket_path: str | None = None, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Serve one connection until stdin closes or SIGTERM (exit 0); 2 when the host's
    connection seats are all taken. `socket_path`: the tmux server's, which names its
    daemon (asked of tmux when not given)."""
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(stdout_fd, view):]

    paths = here(session.env)
    cap = session.config.serve.get("max_connections", MAX_CONNECTIONS)
    seat = Seat(os.path.join(rundir.make(paths.runtime_dir), "serve"), cap)
    if not seat.take(device):
        write(proto.encode(proto.Error(proto.NO_REQUEST_ID, proto.TOO_MANY_CONNECTIONS,
                                       f"this host serves at most {max(1, cap)} "
                                       "connections at once")))
        return 2
    def stop(_signo, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        return _serve(session, scopes=scopes, device=device, interval_ms=interval_ms,
                      paths=paths, write=write, stdin_fd=stdin_fd,
                      socket_path=socket_path)
    finally:
        seat.leave()


def _serve(session, *, scopes, device, interval_ms, paths, write, stdin_fd,
           socket_path=None) -> int:
    git = GitInfo()
    follow = Follow(session, socket_path)
    light = [False]  # this read is the stamps alone (set around a between-cycles read)

    def rows(sel):
        if follow.on or light[0]:  # the daemon (or a hook) stamped: read, capture nothing
            result = session.cycle(produce=False, report=False)
        else:
            result = session.cycle()
        picked = session.select(result.rows, sel, git) if sel is not None else result.rows
        return picked, result.snapshot.socket_path, git

    def fire(argv: list[str]) -> tuple[int, bytes]:
        tma = running_tma() or sys.argv[0]
        flags = session.server.flags()
        code, out, _err = spawn.run([tma, *flags, *argv], timeout=DISPATCH_TIMEOUT_S)
        return code, out

    log = lambda text: sys.stderr.write(text + "\n")  # noqa: E731
    conn = Conn(host=os.uname().nodename, version=__version__, scopes=scopes, device=device,
                interval_ms=interval_ms, rows=rows, write=write,
                ledger=Ledger(os.path.join(paths.state_dir, "serve", "ledger.jsonl")),
                fire=fire, card=_card_builder(session), clock=_now_ms, log=log)
    splitter = proto.LineSplitter()
    follow.probe(log)
    plan = _Plan(interval_ms)
    try:
        while True:
            timeout = plan.timeout(follow.on) if conn.sub is not None else None
            if not follow.on:
                timeout = min(timeout if timeout is not None else PROBE_S,
                              max(0.0, follow.probe_at - time.monotonic()))
            fds = [stdin_fd] + ([follow.fd] if follow.on else [])
            ready, _, _ = select.select(fds, [], [], timeout)
            if stdin_fd in ready:
                chunk = os.read(stdin_fd, 65536)
                if not chunk:
                    return 0
                for item in splitter.feed(chunk):
                    conn.line(item)
            woke = follow.on and follow.fd in ready and follow.settle(log)
            if not follow.on and time.monotonic() >= follow.probe_at:
                follow.probe(log)
            if conn.sub is None:
                continue
            what = plan.what(woke, follow.on)
            light[0] = what == "stamps"
            try:
                if what:
                    conn.tick()
            finally:
                light[0] = False
    finally:
        follow.close()


class _Plan:
    """When the stream reads next: a full read every interval (the own cycle, or the belt
    while following the daemon), at once on the daemon's wake, and without a daemon
    the stamps alone every STAMPS_MS in between (a hook's stamp, written by `tma event`,
    reaches the stream without waiting for the cycle)."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms = interval_ms
        self.due = self.peek = 0

    def timeout(self, following: bool) -> float:
        now = _now_ms()
        self.due = self.due or now + self.interval_ms
        self.peek = self.peek or now + STAMPS_MS
        at = self.due if following or STAMPS_MS >= self.interval_ms else min(self.due,
                                                                             self.peek)
        return max(0, at - now) / 1000

    def what(self, woke: bool, following: bool) -> str:
        """'full', 'stamps' or '' (nothing to read now); the next times are set."""
        now = _now_ms()
        if woke or now >= self.due:
            self.due, self.peek = now + self.interval_ms, now + STAMPS_MS
            return "full"
        if not following and STAMPS_MS < self.interval_ms and now >= self.peek:
            self.peek = now + STAMPS_MS
            return "stamps"
        return ""


class Follow:
    """This server's daemon's push (`TMAS`), while one runs: a wake (coalesced over
    feed.COALESCE_S) is the cue to read its stamps, so no connection runs detection of
    its own. Looked for at the start and every PROBE_S while none runs; one that goes
    away is dropped at once (the next read is an own cycle)."""

    def __init__(self, session, socket_path: str | None) -> None:
        self.session, self.socket_path = session, socket_path
        self.wakes: Wakes | None = None
        self.probe_at = 0.0

    @property
    def on(self) -> bool:
        return self.wakes is not None and self.wakes.sock is not None

    @property
    def fd(self) -> int:
        sock = self.wakes.sock if self.wakes is not None else None
        return sock.fileno() if sock is not None else -1

    def probe(self, log) -> bool:
        self.probe_at = time.monotonic() + PROBE_S
        if self.wakes is None:
            path = self.socket_path
            if not path:
                try:
                    path, _pid = control.server_facts(self.session.server)
                except Exception:  # no server (yet): looked for again later
                    return False
                self.socket_path = path
            self.wakes = Wakes(daemon_files.Files(path).sock)
        if self.wakes.probe():
            log("tma serve: following this host's daemon (no cycle of its own)")
            return True
        return False

    def settle(self, log) -> bool:
        """After the daemon's socket turned readable (a wake, or the daemon went away:
        either way the stream reads now, an own cycle in the second case)."""
        if self.wakes is not None:
            self.wakes.settle()
        if not self.on:
            log("tma serve: the daemon went away; cycling on its own")
            self.probe_at = time.monotonic() + PROBE_S
        return True

    def close(self) -> None:
        if self.wakes is not None:
            self.wakes.close()


def _card_builder(session):
    """tma.runtime.card's builder, adapted to the frame: (row, request id) -> card."""
    return lambda row, rid: card.for_row(session, row, rid)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000

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
- `card` (what a blocked pane asks, from tma.runtime.act.card when it is there);
- `dispatch` -> `receipt`, through three gates in order: the scope, the slot (claimed in the
  host's ledger before anything fires: a repeat gets the stored receipt), then the broker
  itself (`tma act` with the episode binder, which re-reads the screen under the pane's lock);
- `receipts` from the ledger, this connection's device's only (below);
- `window` and `event` (scope `read`): a page of the pane's transcript, newest first,
  within the budget the device asks for and the host clamps, and one event with its body
  (tma.runtime.transcript: the host alone picks the file; a device names a pane, never a
  path). A cursor that no longer addresses its file is `cursor-invalid`; a pane whose
  transcript tma cannot read (no reader for the agent, no file found) `unsupported`,
  saying why; a pane with no agent `not-found`.
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
  the one capture is a new permission prompt's, when no hook names its call: once per
  prompt, to say what it asks (ScreenAsks);
- no daemon: serve runs its own detection cycle every interval (the `hello`'s
  reconcile_interval_ms either way), capped by the connection seats, and between its
  cycles reads the stamps alone every STAMPS_MS (what a hook's `tma event` wrote
  reaches the stream without waiting for the cycle); it looks for a daemon every
  PROBE_S; a daemon that goes away mid-stream is dropped at once and the next read is
  an own cycle. (tma.runtime.follow's Follow and Plan, which `tma web` shares.)

The seats (`[serve]`; every key that reaches this host shares them, so none may keep
the others out, least of all the device's own daemon link):
- at most `max_connections` (4) serve processes at once; one more is refused
  `too-many-connections` (id "0", exit 2), saying why;
- one `--device` holds at most `max_per_device` of them (half the seats, rounded up:
  2 of 4), so one key, however many connections it opens, leaves the other half to
  the rest. Connections without `--device` have no identity to share by and no share
  (whoever runs serve without a forced command has a shell there anyway);
- a connection that sends no request (no line at all) for `idle_secs` (300) is ended:
  an error frame `too-many-connections` that says it was idle, then exit 0. tma's own
  links never are: the daemon's asks for `receipts` every `[fleet] keepalive_secs`
  (5 s, at most 60), the others ask a few things and leave. A subscriber that only
  listens must ask something now and then. A device that stops reading is ended the
  same way once a frame has waited `idle_secs` to be written (a serve stuck in a write
  hears no bound, and would keep its seat for good);
- eviction: when the seats are full (or the newcomer's device holds its share), a
  newcomer takes the seat of the connection quiet longest, if that one has been quiet
  for half of `idle_secs` (150 s), and of the same device when it is the share that is
  full. That is what a person expects of a host that turns them away: the seats go to
  who uses them. Their own dead links are the usual squatters (a laptop that slept or
  changed networks leaves serve processes sshd has not noticed yet) and they should
  not wait out the whole bound for them; a connection quiet for half the bound was
  ending soon anyway, while one in use (the daemon's link, an act) is never that
  quiet, so no newcomer, however hostile, can push out a connection that is working.
  The evicted one gets an error frame saying it gave its seat up (exit 0). The owner
  is asked with EVICT_SIGNAL only when the process at the seat's pid has the start
  time the seat recorded (a reused pid is never signalled), through a pidfd.
Each seat is a file `serve/slot-N.conn` in the runtime dir (pid, start time, device;
its mtime is when it last heard a request), and newcomers decide one at a time under
`serve/seats.lock`.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from tma import __version__
from tma.core import proto
from tma.core.paths import here
from tma.install.binary import running_tma
from tma.runtime import procs, rundir
from tma.runtime.act import card, card_screen
from tma.runtime.fleet.ledger import Ledger
from tma.runtime.follow import PROBE_S, Follow, Plan
from tma.runtime.git import GitInfo
from tma.runtime.selectors import Selector
from tma.runtime.transcript import locate as transcript_locate, read as transcript, stores
from tma.tmux import spawn

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
#: A connection that sends no request for this long is ended (`[serve] idle_secs`). tma's
#: own links are never that quiet: the daemon's sends a `receipts` keepalive every
#: `[fleet] keepalive_secs` (5 s, at most 60) and every other one is a few requests and
#: gone; five minutes also leaves a person typing frames by hand time to think.
IDLE_S = 300
#: How long a newcomer waits for an evicted connection to leave its seat.
EVICT_WAIT_S = 3.0
#: What a newcomer sends the seat's owner to ask for the seat (its handler ends it).
EVICT_SIGNAL = signal.SIGUSR1


@dataclass(frozen=True)
class Held:
    """A seat some live process holds: its file, owner (pid and start time, which name the
    process across pid reuse; None from a tma that did not write it), device and how long
    since it last heard a request (the file's mtime)."""

    path: str
    pid: int
    start: int | None
    device: str | None
    idle_s: float


class Seat:
    """One of the host's numbered connection seats: `serve/slot-N.conn` in the runtime
    dir, made with O_EXCL and holding the owner's pid, start time and device; its mtime is
    when the owner last heard a request. A dead owner's seat is taken over. Newcomers
    decide one at a time, under `serve/seats.lock`: the count, the device's share and an
    eviction are one decision, never two newcomers' halves of one."""

    def __init__(self, directory: str, cap: int, *, share: int | None = None,
                 evict_after: float | None = None) -> None:
        self.dir, self.cap, self.path = directory, max(1, cap), ""
        self.share = self.cap if share is None else max(1, min(share, self.cap))
        self.evict_after = evict_after  # None: never evict

    def take(self, device: str | None) -> str | None:
        """Seat this process: None when it has a seat, else why not (the refusal's
        words). A full host, or a device at its share, evicts the seat quiet longest when
        that one has been quiet `evict_after` seconds or more."""
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        lock = os.open(os.path.join(self.dir, "seats.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            why = "no seat came free"
            for _round in range(2):  # at most one eviction, then the seat it freed
                held = self.held()
                why, pick = self._verdict(held, device)
                if not why:
                    return None if self._claim(device) else (
                        f"this host serves at most {self.cap} connections at once")
                if pick is None or not _ask_to_leave(pick):
                    return why
                if not _left(pick, EVICT_WAIT_S):
                    return why + "; the quietest was asked to leave and has not yet"
            return why
        finally:
            os.close(lock)

    def held(self) -> list[Held]:
        """The live seats (every slot file, whatever the cap says now); a dead owner's
        file is removed on the way."""
        out = []
        now = time.time()
        try:
            names = sorted(n for n in os.listdir(self.dir)
                           if n.startswith("slot-") and n.endswith(".conn"))
        except FileNotFoundError:
            return []
        for name in names:
            path = os.path.join(self.dir, name)
            facts = _seat_facts(path)
            if facts is None:
                continue  # gone meanwhile
            pid, start, device, mtime = facts
            # its process died, or it never got a pid (two lines take no 10 s to write):
            # the seat is free again
            if (not procs.running(pid)) if pid > 0 else now - mtime > 10:
                try:
                    os.unlink(path)
                except OSError:
                    pass
                continue
            # pid 0: being written right now (a tma from before the lock): live, not ours
            out.append(Held(path, pid, start if pid > 0 else None, device,
                            max(0.0, now - mtime) if pid > 0 else 0.0))
        return out

    def _verdict(self, held: list[Held], device: str | None) -> tuple[str, Held | None]:
        """('' , None) when a seat is free for `device`; else the refusal's words and the
        seat an eviction may free (None: none may go)."""
        if device is not None:
            mine = [h for h in held if h.device == device]
            if len(mine) >= self.share:
                return (f"device {device!r} already holds {len(mine)} of this host's "
                        f"{self.cap} connections, its share ([serve] max_per_device = "
                        f"{self.share}), and none of them has been idle long enough to give "
                        f"its seat up{self._quiet_note(mine)}"), self._quietest(mine)
        if len(held) >= self.cap:
            return (f"this host serves at most {self.cap} connections at once, and none has "
                    f"been idle long enough to give its seat up{self._quiet_note(held)}"
                    ), self._quietest(held)
        return "", None

    def _quiet_note(self, held: list[Held]) -> str:
        if self.evict_after is None or not held:
            return ""
        return (f" ({self.evict_after:g} s; the quietest has been idle "
                f"{max(h.idle_s for h in held):.0f} s)")

    def _quietest(self, held: list[Held]) -> Held | None:
        ask = [h for h in held if h.start is not None and h.pid != os.getpid()]
        if self.evict_after is None or not ask:
            return None
        pick = max(ask, key=lambda h: h.idle_s)
        return pick if pick.idle_s >= self.evict_after else None

    def _claim(self, device: str | None) -> bool:
        for n in range(self.cap):
            path = os.path.join(self.dir, f"slot-{n}.conn")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue  # live (held() removed the dead), or an older tma's racing claim
            with os.fdopen(fd, "w") as fh:
                fh.write(f"pid={os.getpid()}\nstart={_start_time(os.getpid()) or ''}\n"
                         f"device={device or ''}\n")
            self.path = path
            return True
        return False

    def touch(self) -> None:
        """A request was heard: the seat is not idle (what a newcomer reads)."""
        if self.path:
            try:
                os.utime(self.path)
            except OSError:
                pass

    def leave(self) -> None:
        if self.path:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = ""


def _seat_facts(path: str) -> tuple[int, int | None, str | None, float] | None:
    """(pid, start, device, mtime) of a seat file; pid 0 while it is being written; None
    when it is gone."""
    try:
        with open(path) as fh:
            mtime = os.fstat(fh.fileno()).st_mtime
            text = fh.read(4096)
    except FileNotFoundError:
        return None
    except OSError:
        return 0, None, None, time.time()
    facts = dict(line.partition("=")[::2] for line in text.splitlines())
    try:
        pid = int(facts.get("pid") or 0)
    except ValueError:
        pid = 0
    start = facts.get("start", "")
    return (pid, int(start) if start.isdigit() else None, facts.get("device") or None,
            mtime)


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, /proc/PID/stat's 22nd field):
    with the pid, a name for the process that a reused pid never matches. None off Linux."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return int(data.rsplit(b") ", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _ask_to_leave(h: Held) -> bool:
    """EVICT_SIGNAL to the seat's owner, only when the process at its pid is the one that
    wrote the seat (same start time): a pid reused by another process is never signalled.
    A pidfd, opened before the check, makes the check and the signal about one process."""
    pidfd = None
    try:
        pidfd = os.pidfd_open(h.pid) if hasattr(os, "pidfd_open") else None
        if _start_time(h.pid) != h.start:
            return False
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, EVICT_SIGNAL)
        else:
            os.kill(h.pid, EVICT_SIGNAL)
        return True
    except OSError:
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _left(h: Held, timeout: float) -> bool:
    """Wait for an evicted owner to leave its seat (its file removed, or another's now)."""
    deadline = time.monotonic() + timeout
    while True:
        facts = _seat_facts(h.path)
        if facts is None or facts[0] != h.pid:
            return True
        if not procs.running(h.pid):
            return True  # died without leaving: the next held() frees the seat
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


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


def fleet_row(row, *, host: str, server: str, git=None,
              screen: dict[str, tuple[str, str]] | None = None) -> proto.FleetRow:
    """One cycle row as the protocol's FleetRow (everything `ls --json` says but the title).
    `screen`: pane id -> (tool, summary) its dialog names, for the blocked panes no hook
    speaks for (ScreenAsks), as `ls --json` fills pending_tool and pending_summary."""
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
    seen = (screen or {}).get(row.pane.pane_id, ("", ""))
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
        pending_tool=text("@agent_pending_tool") or seen[0] or None,
        pending_call=text("@agent_pending_call"),
        pending_summary=text("@agent_pending_summary") or seen[1] or None, server=server,
        host=host)


def _selector(sel: proto.Selector | None):
    if sel is None:
        return None
    return Selector(session=sel.session, repo=sel.repo, branch=sel.branch, agent=sel.agent,
                    states=sel.state)


class ScreenAsks:
    """What each blocked pane no hook speaks for asks, read off its dialog on the screen
    (tma.runtime.act.card_screen, the card's screen lane): the summary a device's
    notification and preview show, as this host's own `ls --json` and card do. Read once
    per pane and episode (a prompt does not change within its episode), so a stream read
    every 500 ms captures each prompt once, and a serve that follows the daemon (which
    otherwise captures nothing) captures only a new prompt; a read that found nothing is
    tried again after RETRY_MS (a dialog still being drawn)."""

    RETRY_MS = 2000

    def __init__(self, read: Callable[[list], dict[str, tuple[str, str]]],
                 clock: Callable[[], int]) -> None:
        self.read, self.clock = read, clock
        self.seen: dict[tuple[str, int], tuple[tuple[str, str], int]] = {}

    def __call__(self, rows) -> dict[str, tuple[str, str]]:
        now = self.clock()
        keys = {(r.pane.pane_id, r.stamp.episode_ms): r for r in rows
                if card_screen.wants_screen(r)}
        self.seen = {k: v for k, v in self.seen.items() if k in keys}  # this cycle's only
        due = [r for k, r in keys.items() if k not in self.seen
               or (not self.seen[k][0][1] and now - self.seen[k][1] >= self.RETRY_MS)]
        if due:
            try:
                got = self.read(due)
            except Exception:  # noqa: BLE001 - best effort: the row goes without it
                got = {}
            for r in due:
                self.seen[(r.pane.pane_id, r.stamp.episode_ms)] = (
                    got.get(r.pane.pane_id, ("", "")), now)
        return {pane: ask for (pane, _ep), (ask, _at) in self.seen.items() if ask[1]}


class Conn:
    """One device's connection. `rows()` runs a cycle and returns (rows, socket path);
    `fire(argv)` runs the broker and returns (exit code, stdout); `write` takes one
    encoded frame. All three are injected so a test can drive the protocol alone."""

    def __init__(self, *, host: str, version: str, scopes: tuple[str, ...], device: str | None,
                 interval_ms: int, rows: Callable, write: Callable[[bytes], None],
                 ledger, fire: Callable, card: Callable | None, clock: Callable[[], int],
                 log: Callable[[str], object],
                 asks: Callable[[list], dict[str, tuple[str, str]]] | None = None,
                 transcripts: Callable | None = None) -> None:
        self.host, self.version, self.scopes, self.device = host, version, scopes, device
        self.interval_ms, self._rows, self.write = interval_ms, rows, write
        self.ledger, self._fire, self._card = ledger, fire, card
        self.clock, self.log = clock, log
        self._asks = asks
        self._transcripts = transcripts
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
        elif isinstance(frame, (proto.WindowRequest, proto.EventRequest)):
            self.send(self.transcript(frame))
        else:
            self.send(proto.unsupported(frame))  # type: ignore[arg-type]

    # -- reading
    def fleet(self, selector: proto.Selector | None = None) -> tuple[proto.FleetRow, ...]:
        rows, server, git = self._rows(_selector(selector))
        screen = self._asks(rows) if self._asks is not None else None
        return tuple(fleet_row(r, host=self.host, server=server, git=git, screen=screen)
                     for r in rows)

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
        for edge in edges(sub.id, before, current, now):
            self.send(edge)

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

    def transcript(self, req: proto.WindowRequest | proto.EventRequest) -> proto.Frame:
        """A `window` or an `event` of the pane's transcript (scope read)."""
        if "read" not in self.scopes:
            return proto.Error(req.id, proto.SCOPE_DENIED, "reading a transcript needs read")
        if self._transcripts is None:
            return proto.unsupported(req)
        rows, _server, _git = self._rows(None)
        row = next((r for r in rows if r.pane.pane_id == req.pane), None)
        if row is None:
            return proto.Error(req.id, proto.NOT_FOUND, f"no agent pane {req.pane} here")
        return self._transcripts(row, req)

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

        def receipt(outcome: str, reason: str | None, code: int, cached: bool = False,
                    message: str | None = None) -> proto.ReceiptRow:
            return proto.ReceiptRow(d.slot, d.pane, d.action, outcome, reason, code, cached,
                                    self.device, now, message)

        need = SCOPE_OF.get(d.action)
        if need is None or need not in self.scopes:  # costs nothing: before slot and tmux
            return receipt("refused", "scope-denied", 4, message=(
                f"`{d.action}` is never fired over the link" if need is None else
                f"`{d.action}` needs {need}, and this connection is granted "
                f"{', '.join(self.scopes)}"))
        if d.text is not None and len(d.text.encode()) > proto.MAX_DISPATCH_TEXT_BYTES:
            return receipt("refused", "too-long", 4, message=(
                f"the text is {len(d.text.encode())} bytes; a dispatch carries at most "
                f"{proto.MAX_DISPATCH_TEXT_BYTES}"))
        prior = self.ledger.claim(d.slot, d.pane, d.action, self.device, now)
        if prior is not None:
            return prior
        argv = ["act", d.action, "--pane", d.pane, "--json"]
        if d.binder.expect_episode_ms:
            argv += ["--expect-episode", str(d.binder.expect_episode_ms)]
        if d.text is not None:
            argv.append(f"--text={d.text}")  # a message starting with - is still the text
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
        outcome, reason, message = _act_result(out, code)
        row = receipt(outcome, reason, code, message=message)
        if reason == "locked":
            self.ledger.release(d.slot)  # the one refusal a retry may clear
        else:
            self.ledger.finish(row)
        return row


def edges(rid: str, before: dict, current: dict, now: int, *,
          with_host: bool = False) -> list[proto.Edge]:
    """The edge frames from one read of the rows to the next (each a mapping of a key
    naming the pane to its FleetRow): one per pane whose state changed, appeared (`from`
    "") or went away (`to` ""), in the current read's order, then the gone. `with_host`:
    each edge names its row's host (`tma web`, whose rows are many hosts')."""
    out = []
    for key, r in current.items():
        prior = before.get(key)
        if prior is None or prior.state != r.state:
            out.append(proto.Edge(rid, now, r.pane, r.agent, prior.state if prior else "",
                                  r.state, r.detail, r.locator, r.repo, r.branch,
                                  r.host if with_host else None))
    for key, r in before.items():
        if key not in current:
            out.append(proto.Edge(rid, now, r.pane, r.agent, r.state, "", None, r.locator,
                                  r.repo, r.branch, r.host if with_host else None))
    return out


def _trouble(exc: Exception) -> str:
    """The error frame's words for a host-side failure (tmux gone is the common one)."""
    if type(exc).__name__ == "NoServer":
        return "no tmux server running on this host"
    return f"the host failed: {exc}"


def _act_result(out: bytes, code: int) -> tuple[str, str | None, str | None]:
    """`tma act --json`'s outcome, reason and sentence (the receipt's `message`: why a
    refusal refused, in the words a local act says it); a broker that said nothing
    readable may have fired (`error` / `fired-unknown`)."""
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("outcome"), str):
        reason, message = doc.get("reason"), doc.get("message")
        return (doc["outcome"], reason if isinstance(reason, str) else None,
                message if isinstance(message, str) and message else None)
    if code == 3:
        return "vanished", "pane-gone", None
    return "error", "fired-unknown", None


# ------------------------------------------------------------------ the process


def settings(cfg) -> tuple[int, int, int]:
    """([serve] max_connections, max_per_device, idle_secs), defaulted (tma.runtime.config
    checks them): the share defaults to half the seats, rounded up."""
    serve = getattr(cfg, "serve", None) or {}
    cap = max(1, int(serve.get("max_connections", MAX_CONNECTIONS)))
    share = min(cap, max(1, int(serve.get("max_per_device", (cap + 1) // 2))))
    return cap, share, int(serve.get("idle_secs", IDLE_S))


def run(session, *, scopes: tuple[str, ...], device: str | None, interval_ms: int,
        socket_path: str | None = None, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Serve one connection until stdin closes, SIGTERM, or it ends idle or evicted
    (exit 0, the last two with an error frame saying so); 2 when no seat is to be had
    (the cap, or the device's share). `socket_path`: the tmux server's, which names its
    daemon (asked of tmux when not given)."""
    device = device or None  # `--device ''` is no name
    paths = here(session.env)
    cap, share, idle_s = settings(session.config)
    # the handler is in place before the seat is: a newcomer may ask for it at once
    quiet = Quiet(idle_s)
    out = _Out(stdout_fd, quiet)
    seat = Seat(os.path.join(rundir.make(paths.runtime_dir), "serve"), cap, share=share,
                evict_after=idle_s / 2)
    why = seat.take(device)
    if why is not None:
        out.write(proto.encode(proto.Error(proto.NO_REQUEST_ID, proto.TOO_MANY_CONNECTIONS,
                                           why)))
        out.close()
        quiet.close()
        return 2
    quiet.seat = seat

    def stop(_signo, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        return _serve(session, scopes=scopes, device=device, interval_ms=interval_ms,
                      paths=paths, write=out.write, stdin_fd=stdin_fd,
                      socket_path=socket_path, quiet=quiet)
    except _Stalled as exc:
        sys.stderr.write(f"tma serve: {exc}\n")
        return 0
    finally:
        seat.leave()
        out.close()
        quiet.close()


class _Stalled(BaseException):
    """The device read nothing for the idle bound, or its seat was asked for while a
    frame waited: the connection ends with no last frame (none would get through). A
    BaseException, so no request's error handling turns it into a frame to write."""


class _Out:
    """Frames to the device, bounded in time. On a pipe or a socket (what sshd gives)
    stdout is made non-blocking for the connection's life: a device that stops reading
    would otherwise block a write forever, and a serve stuck in a write hears neither
    the idle bound nor an eviction, holding its seat for good. A write that makes no
    progress for the idle bound ends the connection. A terminal is left blocking (its
    mode is the shell's too), as is anything else."""

    def __init__(self, fd: int, quiet: Quiet) -> None:
        self.fd, self.quiet = fd, quiet
        try:
            mode = os.fstat(fd).st_mode
            self.bounded = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        except OSError:
            self.bounded = False
        if self.bounded:
            os.set_blocking(fd, False)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        since = time.monotonic()
        while view:
            try:
                view = view[os.write(self.fd, view):]
                since = time.monotonic()
                continue
            except BlockingIOError:
                pass
            left = since + self.quiet.idle_s - time.monotonic()
            if left <= 0:
                raise _Stalled(f"the device read nothing for {self.quiet.idle_s:g} s "
                               "([serve] idle_secs): connection ended")
            if self.quiet.evicted:
                raise _Stalled("the seat was given to a new connection while this one "
                               "read nothing")
            select.select([self.quiet.fd], [self.fd], [], left)

    def close(self) -> None:
        if self.bounded:
            try:
                os.set_blocking(self.fd, True)
            except OSError:
                pass


class Quiet:
    """How long since this connection sent a request, and whether a newcomer asked for
    its seat (EVICT_SIGNAL: a flag and a byte on a pipe the serve loop selects on, so
    the request being answered, if any, is answered first). `ended()` is the frame that
    ends the connection, or None while it may go on."""

    def __init__(self, idle_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_s, self.clock = idle_s, clock
        self.at = clock()
        self.seat: Seat | None = None
        self.evicted = False
        self.fd, self._w = os.pipe()
        for fd in (self.fd, self._w):
            os.set_blocking(fd, False)
        signal.signal(EVICT_SIGNAL, self._asked)

    def _asked(self, _signo, _frame) -> None:
        self.evicted = True
        try:
            os.write(self._w, b"!")
        except OSError:
            pass  # the pipe is full: a wake is already waiting

    def heard(self) -> None:
        self.at = self.clock()
        if self.seat is not None:
            self.seat.touch()

    def left_s(self) -> float:
        return max(0.0, self.at + self.idle_s - self.clock())

    def drain(self) -> None:
        try:
            while os.read(self.fd, 64):
                pass
        except OSError:
            pass

    def ended(self) -> proto.Error | None:
        quiet_s = self.clock() - self.at
        if self.evicted:
            return proto.Error(proto.NO_REQUEST_ID, proto.TOO_MANY_CONNECTIONS,
                               f"this connection gave its seat to a new one: it had sent "
                               f"no request for {quiet_s:.0f} s and every seat it could "
                               "use was taken; connect again when you need the host")
        if quiet_s >= self.idle_s:
            return proto.Error(proto.NO_REQUEST_ID, proto.TOO_MANY_CONNECTIONS,
                               f"idle: no request for {self.idle_s:g} s ([serve] "
                               "idle_secs), so this host ended the connection and freed "
                               "its seat; connect again when you need the host")
        return None

    def close(self) -> None:
        for fd in (self.fd, self._w):
            try:
                os.close(fd)
            except OSError:
                pass


def _serve(session, *, scopes, device, interval_ms, paths, write, stdin_fd,
           socket_path=None, quiet: Quiet) -> int:
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
                fire=fire, card=_card_builder(session), clock=_now_ms, log=log,
                asks=ScreenAsks(lambda rows: card_screen.screen_pending(
                    session.server, rows, session.manifests), _now_ms),
                transcripts=lambda row, req: transcript_answer(row, req, session.env))
    splitter = proto.LineSplitter()
    follow.probe(log)
    plan = Plan(interval_ms)
    try:
        while True:
            timeout = plan.timeout(follow.on) if conn.sub is not None else None
            if not follow.on:
                timeout = min(timeout if timeout is not None else PROBE_S,
                              max(0.0, follow.probe_at - time.monotonic()))
            # the idle bound wakes the loop too; a line, any line, is a request heard
            timeout = min(timeout if timeout is not None else quiet.idle_s, quiet.left_s())
            fds = [stdin_fd, quiet.fd] + ([follow.fd] if follow.on else [])
            ready, _, _ = select.select(fds, [], [], timeout)
            if quiet.fd in ready:
                quiet.drain()
            if stdin_fd in ready and not _requests(stdin_fd, splitter, conn, quiet):
                return 0
            end = quiet.ended()
            if end is not None:
                log(f"tma serve: {end.message}")
                conn.send(end)
                return 0
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


def _requests(stdin_fd: int, splitter: proto.LineSplitter, conn: Conn, quiet: Quiet) -> bool:
    """One read of the device's requests, each answered; False at the end of stdin."""
    try:
        chunk = os.read(stdin_fd, 65536)
    except BlockingIOError:
        # sshd may give one socket as stdin and stdout, so _Out's non-blocking mode is
        # stdin's too: a read select woke for that finds nothing is no end of stream
        return True
    if not chunk:
        return False
    items = splitter.feed(chunk)
    if items:
        quiet.heard()
    for item in items:
        conn.line(item)
    if items:
        quiet.heard()  # after a long answer (a dispatch) too
    return True


def transcript_answer(row, req: proto.WindowRequest | proto.EventRequest, env) -> proto.Frame:
    """The host's answer to a `window` or `event` request for a cycle row's pane: the
    frame, or the error a device branches on."""
    t = transcript_locate.target_of(row)
    try:
        if isinstance(req, proto.WindowRequest):
            return transcript.window(t, env, last=req.last, before=req.before,
                                     budget=req.budget, rid=req.id)
        return transcript.event(t, env, req.cursor, rid=req.id)
    except stores.CursorInvalid as exc:
        return proto.Error(req.id, proto.CURSOR_INVALID, str(exc))
    except (stores.NoTranscript, stores.TooLarge) as exc:
        return proto.Error(req.id, proto.UNSUPPORTED, f"{row.agent} on {req.pane}: {exc}")


def _card_builder(session):
    """tma.runtime.act.card's builder, adapted to the frame: (row, request id) -> card."""
    return lambda row, rid: card.for_row(session, row, rid)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000

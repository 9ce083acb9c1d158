"""The daemon's fleet: one long-lived link per configured host (hosts.toml).

Each host gets a thread of its own that holds one transport process (tma.runtime.fleet.link:
ssh or a `--via` argv) with `tma serve --stdio` at its far end, so a slow or hung host
costs its own thread only, never the loop's detection or another host, and sshd sees
one session per host for the daemon's life (polling would open one per look and run
into its MaxSessions). The conversation on the link:

    hello                    the banner skipped and counted, as a probe does
    snapshot                 the baseline: every row the host has now (a resync)
    subscribe (no events)    the host sends a snapshot whenever its rows change
    receipts every keepalive the proof that the host still answers: `since_ms` now,
                             so the answer is an empty list (about 60 bytes where a
                             snapshot of 25 panes is 13 KiB); it also keeps the link
                             from idling out of its seat on the host (tma.runtime.fleet.serve:
                             `[serve] idle_secs`, 300 s, above any keepalive_secs)

The subscription is the resync while it flows (a pipe loses no frame, and the host's
stream ends in an error frame when it cannot read its rows, which ends the link); every
new link starts from a full snapshot. A host that answers the receipts request with an
error (a serve that does not know it) gets a snapshot as its keepalive instead.

A host that sends no frame for MISSES keepalives is `offline`, as is one whose link
ends: its rows stay, `stale`, with the age of the last frame that vouched for them,
and the thread reconnects with a jittered exponential backoff capped near a minute.
The first snapshot of a new link replaces the stale rows.

The loop hears of new rows through a pipe (this part's fd) and, on its own thread,
rings a remote pane's blocked episode once through the normal notify path. What was
rung is kept by (host, pane, episode) in the state dir, so neither a reconnect (which
sends the same episode again) nor a restarted daemon rings it twice.

A host is not trusted (docs/explanation/security.md). What it sends is made data at the
link (tma.core.inbound: pane ids `%N`, strings cleaned and bounded, at most
inbound.MAX_ROWS rows a snapshot), its bytes are read at a bounded rate (link.Throttle:
a host that streams without pause costs its thread a few percent of a core, never the
loop), and its rings are bounded: at most `[fleet] rings_per_minute` a host, the surplus
folded into one "N more blocked on HOST" ring a minute.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
import types
from collections import deque

from tma.core import proto, states
from tma.core.paths import here
from tma.daemon.notifier import Notifier
from tma.daemon.parts import Part
from tma.runtime.fleet import hosts as store, link as link_mod
from tma.runtime.notify import dispatch as notify, gate as notify_gate
from tma.runtime.notify.note import Note
from tma.tmux import notify as tnotify
from tma.ui import rows as render, status as counts_render

KEEPALIVE_S = 5
MISSES = 3  # keepalives without a frame before a host is offline
CONNECT_S = 10.0  # hello and the first snapshot of a new link
BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 60.0
RUNG_CAP = 4096
RUNG_KEEP_MS = 7 * 86_400_000
STOP_POLL_S = 0.5  # how soon a thread hears the daemon stop
WATCH_MS = 2000  # hosts.toml is looked at this often (`tma host add` needs no reload)
#: A host's bytes: a first snapshot of any legal size at once, then at most this rate.
READ_RATE = 1 << 20
READ_BURST = link_mod.MAX_RESPONSE_BYTES + 65536
RINGS_PER_MINUTE = 6  # `[fleet] rings_per_minute`: a host's individual rings in 60 s
RING_WINDOW_MS = 60_000
PROBLEM_LOG_MS = 60_000  # a host's refused frames and rows are logged this often at most

#: Every link's row generations come from one counter, so a link that replaces another
#: (a hosts.toml edit) never repeats a number the loop already saw for that host.
_GENERATIONS = itertools.count(1)


def _wall() -> int:
    return time.time_ns() // 1_000_000


def _mono() -> int:
    return time.monotonic_ns() // 1_000_000


def backoff(attempt: int, rand=random.random) -> float:
    """The wait before reconnect number `attempt` (1-based): doubling from a second,
    capped at BACKOFF_MAX_S, each drawn in its upper half so hosts cut together do
    not come back in step."""
    top = min(BACKOFF_MAX_S, BACKOFF_MIN_S * 2 ** max(0, attempt - 1))
    return top / 2 + rand() * top / 2


class HostLink:
    """One host's stream, run on its own thread; its fields are read by the loop under
    `lock`."""

    def __init__(self, host: store.Host, argv: list[str], env: dict[str, str],
                 keepalive_s: float, wake, log=None) -> None:
        self.host, self.name, self.argv, self.env = host, host.name, argv, env
        self.keepalive_s = keepalive_s
        self.wake = wake
        self.log = log or (lambda _text: None)
        self.problems: list[str] = []  # what the host sent that was refused or cut
        self._logged_at = 0
        self.lock = threading.Lock()
        self.state = "connecting"  # the first link is being made; online; offline
        self.link_state: str | None = None  # link.py's named state of the last failure
        self.error: str | None = None
        self.rows: tuple[proto.FleetRow, ...] = ()
        self.at_ms = 0  # wall ms of the last frame from the host (0: none yet)
        self.remote: str | None = None  # what the host calls itself, and its tma
        self.scopes: tuple[str, ...] | None = None  # what its serve grants (its hello)
        self.banner = 0
        self.connects = 0
        self.failures = 0
        self.retry_at_ms: int | None = None
        self.generation = next(_GENERATIONS)  # new at every new set of rows (the loop's cue)
        self._online_since_fail = False  # a fresh backoff after a link that worked
        self.stopping = threading.Event()
        self.current: link_mod.Link | None = None
        self.thread = threading.Thread(target=self._run, name=f"tma-fleet-{self.name}",
                                       daemon=True)

    # ------------------------------------------------------------ the thread
    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        current = self.current
        if current is not None:
            current.kill()

    def _run(self) -> None:
        attempt = 0
        while not self.stopping.is_set():
            state, error = "closed", ""
            try:
                self._stream()
            except link_mod.LinkFailed as exc:
                state, error = exc.state, exc.error
            except Exception as exc:  # a bug here names the host rather than end the thread
                state, error = "closed", f"tma failed: {exc!r}"
            finally:
                current, self.current = self.current, None
            if current is not None:
                state, error = link_mod.ended(current, state, error)
            if self.stopping.is_set():
                return
            attempt = 1 if self._was_online() else attempt + 1
            wait = backoff(attempt)
            with self.lock:
                self.state = "offline"  # its rows, if any, stay: stale
                self.link_state, self.error = state, error or state
                self.failures += 1
                self.retry_at_ms = _wall() + int(wait * 1000)
                self.generation = next(_GENERATIONS)
            self.wake()
            self.stopping.wait(wait)

    def _was_online(self) -> bool:
        with self.lock:
            online, self._online_since_fail = self._online_since_fail, False
        return online

    def _stream(self) -> None:
        lk = link_mod.Link(self.argv, env=self.env,
                           throttle=link_mod.Throttle(READ_RATE, READ_BURST))
        self.current = lk
        if self.stopping.is_set():
            return
        probe = link_mod.Probe(self.name)
        deadline = time.monotonic() + CONNECT_S
        hello = link_mod.greet(lk, probe, deadline)
        snap_id = lk.next_id()
        lk.send(proto.SnapshotRequest(snap_id, None))
        while True:
            frame = link_mod.next_frame(lk, deadline)
            if frame.id == snap_id:
                break
        self._answered(frame, snap_id)
        with self.lock:
            self.remote = f"{hello.host} (tma {hello.tma_version})"
            self.scopes = hello.scopes
            self.banner = probe.banner
            self.connects += 1
            self._online_since_fail = True
        self._rows(frame)
        sub_id = lk.next_id()
        lk.send(proto.Subscribe(sub_id, False))
        silent = self.keepalive_s * MISSES
        last = time.monotonic()
        keep = _Keepalive(sub_id, last + self.keepalive_s)
        while not self.stopping.is_set():
            now = time.monotonic()
            if now - last >= silent:
                raise link_mod.LinkFailed("timeout", f"no frame from the host for {silent:g} s")
            if now >= keep.due:
                keep.send(lk, now + self.keepalive_s)
            until = min(keep.due, last + silent, now + STOP_POLL_S)
            try:
                frame = link_mod.next_frame(lk, until)
            except link_mod.LinkFailed as exc:
                if exc.state == "timeout":
                    continue
                raise
            last = time.monotonic()
            if keep.answered(frame, last):
                self._seen()
            elif frame.id in keep.asks:
                self._answered(frame, frame.id)
                if isinstance(frame, proto.Snapshot):
                    if frame.id != sub_id:
                        keep.asks.discard(frame.id)
                    self._rows(frame)
                else:
                    self._seen()
            else:
                self._seen()

    @staticmethod
    def _answered(frame: proto.Frame, rid: str) -> None:
        """An error answer is the link's end, named as a probe names it."""
        if isinstance(frame, proto.Error):
            if "no tmux server" in frame.message:
                raise link_mod.LinkFailed("tmux-down", f"remote: {frame.message}")
            if frame.code == proto.UNSUPPORTED_SCHEMA:
                raise link_mod.LinkFailed("unsupported-schema", f"remote: {frame.message}")
            raise link_mod.LinkFailed("refused", f"remote said {frame.code}: {frame.message}")
        if not isinstance(frame, (proto.Snapshot, proto.Ack)):
            raise link_mod.LinkFailed("bad-frame", f"the remote answered {rid} with "
                                      f"{frame.T!r}")

    def _rows(self, frame) -> None:
        self._problems()
        with self.lock:
            changed = frame.agents != self.rows or self.state != "online"
            self.rows = frame.agents
            self.at_ms = _wall()
            self.state, self.link_state, self.error = "online", "ok", None
            self.retry_at_ms = None
            if changed:
                self.generation = next(_GENERATIONS)
        if changed:
            self.wake()

    def _seen(self) -> None:
        with self.lock:
            self.at_ms = _wall()

    def _problems(self) -> None:
        """What the link refused or cut (tma.core.inbound), kept for the status and logged
        at most once a PROBLEM_LOG_MS: a hostile host cannot fill the log."""
        current = self.current
        found = list(current.problems) if current is not None else []
        if not found or found == self.problems:
            return
        fresh = [p for p in found if p not in self.problems]
        with self.lock:
            self.problems = found
        now = _wall()
        if fresh and now - self._logged_at >= PROBLEM_LOG_MS:
            self._logged_at = now
            self.log(f"tma daemon: fleet: host {self.name}: {fresh[-1]}")

    # ------------------------------------------------------------ the loop's view
    def view(self, now: int) -> tuple[dict, tuple[proto.FleetRow, ...], bool]:
        """(the host's entry, its rows, stale) as they stand."""
        with self.lock:
            stale = self.state != "online"
            age = max(0, now - self.at_ms) if self.at_ms else None
            entry = {"name": self.name, "state": self.state, "link": self.link_state,
                     "error": self.error, "age_ms": age, "stale": stale,
                     "remote": self.remote, "connects": self.connects,
                     # the action menus offer only what the host's serve grants
                     "scopes": list(self.scopes) if self.scopes is not None else None,
                     "failures": self.failures,
                     "retry_in_ms": (max(0, self.retry_at_ms - now)
                                     if self.retry_at_ms is not None else None),
                     "problems": list(self.problems)}
            return entry, self.rows, stale


class _Keepalive:
    """A link's proofs of life: a `receipts` request with `since_ms` now (an empty
    answer), or a snapshot once the host refused one. `asks`: the requests whose answer
    is a snapshot (the subscription's id among them)."""

    def __init__(self, sub_id: str, due: float) -> None:
        self.sub_id, self.due = sub_id, due
        self.asks = {sub_id}
        self.keeps: set[str] = set()  # receipts keepalives not answered yet
        self.full = False

    def send(self, lk, due: float) -> None:
        rid = lk.next_id()
        if self.full:
            lk.send(proto.SnapshotRequest(rid, None))
            self.asks.add(rid)
        else:
            lk.send(proto.ReceiptsRequest(rid, None, _wall()))
            self.keeps.add(rid)
        if len(self.asks) > 2 * MISSES:  # answers never came: a bound, not a leak
            self.asks = {self.sub_id, rid}
        if len(self.keeps) > 2 * MISSES:
            self.keeps = {rid}
        self.due = due

    def answered(self, frame: proto.Frame, now: float) -> bool:
        """True for a receipts keepalive's answer (any answer vouches for the host)."""
        if frame.id not in self.keeps:
            return False
        self.keeps.discard(frame.id)
        if isinstance(frame, proto.Error):
            self.full, self.due = True, now  # the snapshot keepalive goes out now
        return True


class Rung:
    """The remote blocked episodes already rung here: (host, pane, episode) -> when,
    in a small JSON file (written by an atomic rename) that outlives the daemon."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seen: dict[str, int] = {}
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
            if isinstance(doc, dict) and isinstance(doc.get("rung"), dict):
                self.seen = {k: int(v) for k, v in doc["rung"].items()
                             if isinstance(k, str) and isinstance(v, int)}
        except (OSError, ValueError):
            pass

    @staticmethod
    def key(host: str, pane: str, episode: int) -> str:
        return f"{host}\t{pane}\t{episode}"

    def claim(self, key: str, now: int) -> bool:
        """True (and recorded) the first time a key is seen; False ever after."""
        return self.claim_many([key], now) == [key]

    def claim_many(self, keys: list[str], now: int) -> list[str]:
        """The keys seen for the first time, recorded with one write of the file."""
        new = []
        for key in keys:
            if key not in self.seen:
                self.seen[key] = now
                new.append(key)
        if not new:
            return new
        self.seen = {k: v for k, v in self.seen.items() if now - v < RUNG_KEEP_MS}
        if len(self.seen) > RUNG_CAP:
            keep = sorted(self.seen, key=self.seen.__getitem__)[len(self.seen) - RUNG_CAP:]
            self.seen = {k: self.seen[k] for k in keep}
        self.save()
        return new

    def save(self) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"schema": 1, "rung": self.seen}, fh)
        os.replace(tmp, self.path)


def settings(cfg) -> tuple[bool, int]:
    """([fleet] status, [fleet] keepalive_secs), defaulted (tma.runtime.config checks them)."""
    f = getattr(cfg, "fleet", None) or {}
    return bool(f.get("status", True)), int(f.get("keepalive_secs", KEEPALIVE_S))


def rings_per_minute(cfg) -> int:
    f = getattr(cfg, "fleet", None) or {}
    return int(f.get("rings_per_minute", RINGS_PER_MINUTE))


class RingBudget:
    """One host's rings: at most `per_minute` in any RING_WINDOW_MS, and the surplus owed
    as one "N more" ring, at most one a window (the first as soon as the surplus
    appears, later ones when the window since the last has passed)."""

    def __init__(self) -> None:
        self.rung: deque[int] = deque()
        self.owed = 0
        self.owed_pane = ""
        self.summary_at = -RING_WINDOW_MS

    def take(self, now: int, per_minute: int) -> bool:
        while self.rung and now - self.rung[0] >= RING_WINDOW_MS:
            self.rung.popleft()
        if len(self.rung) >= per_minute:
            return False
        self.rung.append(now)
        return True

    def owe(self, pane: str) -> None:
        self.owed += 1
        self.owed_pane = self.owed_pane or pane

    def summary_due(self) -> int | None:
        """When the owed summary may ring (None: nothing owed)."""
        if not self.owed:
            return None
        return self.summary_at + RING_WINDOW_MS

    def pay(self, now: int) -> tuple[int, str]:
        owed, pane = self.owed, self.owed_pane
        self.owed, self.owed_pane, self.summary_at = 0, "", now
        return owed, pane


class Fleet(Part):
    name = "fleet"

    def __init__(self, daemon) -> None:
        super().__init__(daemon)
        self.paths = here()
        self.links: dict[str, HostLink] = {}
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)
        self.rung = Rung(os.path.join(self.paths.state_dir, "fleet", "rung.json"))
        self.seen_gen: dict[str, int] = {}
        self.budgets: dict[str, RingBudget] = {}
        self.counts = {"rung": 0, "folded": 0, "hosts_error": 0}
        self.hosts_error: str | None = None
        self._file = store.path(types.SimpleNamespace(paths=self.paths))
        self._file_seen = self._stat()
        self._watch_at = _mono() + WATCH_MS
        self._start()

    # ------------------------------------------------------------ hosts
    def _stat(self) -> tuple:
        try:
            st = os.stat(self._file)
        except OSError:
            return ()
        return st.st_mtime_ns, st.st_size, st.st_ino

    def deadline(self) -> int | None:
        due = [b.summary_due() for b in self.budgets.values()]
        owed = [d for d in due if d is not None]
        if not owed:
            return self._watch_at
        # the budgets count wall ms; the loop's deadlines are monotonic
        return min(self._watch_at, _mono() + max(0, min(owed) - _wall()))

    def tick(self, now_mono: int) -> None:
        self._pay_summaries(_wall())
        if now_mono < self._watch_at:
            return
        self._watch_at = now_mono + WATCH_MS
        seen = self._stat()
        if seen != self._file_seen:
            self._file_seen = seen
            self._start()

    def _configured(self) -> list[store.Host]:
        try:
            found = store.load(types.SimpleNamespace(paths=self.paths))
        except store.HostError as exc:
            self.hosts_error = str(exc)
            self.counts["hosts_error"] += 1
            self.daemon.log(f"tma daemon: fleet: {exc}")
            return [h.host for h in self.links.values()]  # keep what runs
        self.hosts_error = None
        return found

    def _start(self) -> None:
        wanted = self._configured()
        keepalive = settings(self.daemon.cfg)[1]
        control = self.paths.runtime_dir
        env = dict(os.environ)
        names = {h.name for h in wanted}
        for name in [n for n in self.links if n not in names]:
            self.links.pop(name).stop()
        for host in wanted:
            argv = link_mod.argv_for(host, control)
            running = self.links.get(host.name)
            if running is not None and running.argv == argv \
                    and running.keepalive_s == keepalive:
                continue
            if running is not None:
                running.stop()
            hl = HostLink(host, argv, env, keepalive, self._wake, log=self.daemon.log)
            self.links[host.name] = hl
            hl.start()

    def _wake(self) -> None:
        try:
            os.write(self._w, b"f")
        except OSError:  # full: the loop has a wake pending already
            pass

    # ------------------------------------------------------------ the Part hooks
    def fds(self) -> list[int]:
        return [self._r]

    def ready(self, fd: int) -> None:
        try:
            while os.read(self._r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        self._ring(_wall())
        for part in self.daemon.parts:
            poke = getattr(part, "poke", None)
            if poke is not None:
                poke()  # the segment: the hosts' counts changed

    def reloaded(self) -> None:
        self._file_seen = self._stat()
        self._start()

    def status(self) -> dict:
        now = _wall()
        return {"fleet": {"hosts": [hl.view(now)[0] for hl in self.links.values()],
                          "hosts_error": self.hosts_error, **self.counts}}

    def close(self) -> None:
        for hl in self.links.values():
            hl.stop()
        for hl in self.links.values():
            hl.thread.join(timeout=1.0)
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass

    # ------------------------------------------------------------ what surfaces ask
    def counts_now(self) -> dict[str, int]:
        now = _wall()
        return counts_render.fleet_counts([r for hl in self.links.values()
                                           for r in hl.view(now)[1]])

    def doc(self) -> dict:
        """The merged remote rows and every host's state: what `tma ls --hosts` and
        `tma status` read over the daemon's socket (TMAF)."""
        now = _wall()
        hosts, agents, live = [], [], []
        for hl in self.links.values():
            entry, rows, stale = hl.view(now)
            hosts.append(entry)
            for frow in rows:
                d = render.fleet_row_dict(frow, host=hl.name, stale=stale)
                d["age_ms"] = entry["age_ms"]
                agents.append(d)
                live.append(frow)
        return {"schema": 1, "hosts": hosts, "agents": agents,
                "counts": counts_render.fleet_counts(live),
                "status": settings(self.daemon.cfg)[0]}

    # ------------------------------------------------------------ notifications
    def _ring(self, now: int) -> None:
        cfg = self.daemon.cfg
        if not notify_gate.enabled(cfg, "blocked"):
            return
        per_minute = rings_per_minute(cfg)
        for hl in list(self.links.values()):
            with hl.lock:
                if hl.generation == self.seen_gen.get(hl.name) or hl.state != "online":
                    continue
                self.seen_gen[hl.name] = hl.generation
                rows = hl.rows
            blocked = {Rung.key(hl.name, frow.pane, frow.episode_ms or frow.since_ms): frow
                       for frow in rows if frow.state == states.BLOCKED and not frow.muted}
            if not blocked:
                continue
            budget = self.budgets.setdefault(hl.name, RingBudget())
            for key in self.rung.claim_many(list(blocked), now):
                frow = blocked[key]
                if budget.take(now, per_minute):
                    self._send(hl.name, frow, now)
                else:
                    budget.owe(frow.pane)
        self._pay_summaries(now)

    def _pay_summaries(self, now: int) -> None:
        """Ring each host's owed "N more" once its window allows."""
        for name, budget in self.budgets.items():
            due = budget.summary_due()
            if due is None or due > now:
                continue
            owed, pane = budget.pay(now)
            self.counts["folded"] += owed
            self._send_note(Note(trigger="blocked", agent=f"{owed} more",
                                 pane=f"{name}:{pane}", locator=name,
                                 title=f"{owed} more blocked on {name}", tty="-",
                                 host=name), now)

    def _send(self, host: str, frow: proto.FleetRow, now: int) -> None:
        self.counts["rung"] += 1
        note = Note(trigger="blocked", agent=frow.agent, pane=f"{host}:{frow.pane}",
                    detail=frow.detail, session=frow.session,
                    locator=f"{host}:{frow.locator}", repo=frow.repo or "",
                    branch=frow.branch or "", since_ms=max(0, now - frow.since_ms),
                    context_pct=frow.context,
                    # never resolved here: `HOST:%N` could name a local session's pane,
                    # and a bell or OSC for a remote pane has no local tty to go to
                    tty="-", tool=frow.pending_tool or "", summary=frow.pending_summary or "",
                    host=host)  # the sinks that name a machine name this one
        self._send_note(note, now)

    def _send_note(self, note: Note, now: int) -> None:
        try:
            clients, _tty = tnotify.targets(self.daemon.server, "", False)
        except Exception:  # the message line only; every other sink still rings
            clients = []
        started = notify.dispatch(self.daemon.server, self.daemon.cfg, note, wait=False,
                                  now=now, clients=clients, daemon=True)
        keeper = next((p for p in self.daemon.parts if isinstance(p, Notifier)), None)
        for child in started:
            if keeper is not None:
                keeper.adopt(child)

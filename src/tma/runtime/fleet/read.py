"""Reading a fleet host over time: one remote pane's card (the protocol's `card` request
over the link), its transcript (`window` and `event` requests: `tma transcript`, `tma
last`), and the hosts' rows followed tick by tick (`tma wait`, `tma subscribe`).

Following: when the running daemon holds exactly the configured hosts, every tick reads
its fleet document over the local socket (no SSH; the daemon's one link per host is the
only session). Without it, the hosts a surface needs are probed (hello + snapshot, in
parallel, on a thread) at most every `probe_s` seconds and the last answer is kept
between: a probe is an ssh session over the ControlMaster connection plus a `tma serve`
start and one poll cycle on the host, a cost paid per look, so a follower never looks
more often than that.

A host that is not online contributes no rows to a decision: the daemon keeps an offline
host's last rows (`stale`), and a stale row's state is what the host said before it went
quiet, not what it is now.
"""

from __future__ import annotations

import dataclasses
import threading
import time

from tma.core import proto
from tma.core.transcript.window import last_turns
from tma.runtime.fleet import hosts, link, links as fleet, view as fleet_view
from tma.runtime.selectors import split_target
from tma.ui import rows as render

#: Without a daemon, the hosts are probed at most this often (seconds).
PROBE_S = 2.0
ONLINE = ("online", "ok")


class HostDown(Exception):
    """The host did not answer the request: its named state (link.py) and error."""

    def __init__(self, host: str, state: str, error: str | None) -> None:
        super().__init__(f"host {host}: {state}: {error}")
        self.host, self.state, self.error = host, state, error


def card(session, name: str, *, timeout: float = link.DEFAULT_TIMEOUT_S) -> proto.Card:
    """The card HOST:%N's host builds for %N (its own `tma card`), with no request id, as
    a local card is. Raises hosts.HostError for an unknown host, HostDown when the host
    does not answer (bounded by `timeout`), and LookupError when the host has no agent
    pane %N."""
    parts = split_target(name)
    assert parts is not None, name
    host = hosts.get(session, parts[0])
    pane = parts[1]
    ex = link.exchange(host.name, fleet.argv(session, host),
                       lambda _probe, rid: proto.CardRequest(rid, pane),
                       timeout=timeout, env=dict(session.env))
    answer, probe = ex.answer, ex.probe
    if isinstance(answer, (proto.PermissionCard, proto.QuestionCard, proto.InformationalCard,
                           proto.NoCard)):
        return answer.replace(id=proto.NO_REQUEST_ID)
    if ex.sent and probe.state == "refused" and f"said {proto.NOT_FOUND}:" in (probe.error or ""):
        raise LookupError(name)
    raise HostDown(host.name, probe.state, probe.error)


class Refused(Exception):
    """The host answered a transcript request with an error other than not-found:
    `code` (cursor-invalid, unsupported, ...) and its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


def _ask(session, name: str, make, *, timeout: float, follow=None) -> proto.Frame:
    """One conversation with HOST:%N's host: `make(pane, id)` (and `follow`, as
    link.exchange takes it). The last answer; hosts.HostError for an unknown host,
    LookupError for not-found, Refused for another error the host answered, HostDown
    when it did not answer."""
    parts = split_target(name)
    assert parts is not None, name
    host = hosts.get(session, parts[0])
    pane = parts[1]
    ex = link.exchange(host.name, fleet.argv(session, host),
                       lambda _probe, rid: make(pane, rid), timeout=timeout,
                       env=dict(session.env), follow=follow)
    probe = ex.probe
    if ex.answer is not None and probe.ok:
        return ex.answer
    said = probe.error or ""
    if ex.sent and probe.state == "refused" and said.startswith("remote said "):
        code, _, message = said.removeprefix("remote said ").partition(": ")
        if code == proto.NOT_FOUND:
            raise LookupError(name)
        raise Refused(code, message)
    raise HostDown(host.name, probe.state, probe.error)


def window(session, name: str, *, last: int | None = None, before: str | None = None,
           timeout: float = link.DEFAULT_TIMEOUT_S) -> proto.Window:
    """HOST:%N's transcript page, as its host answers the `window` request (headers only:
    the protocol's window never carries bodies)."""
    frame = _ask(session, name, lambda pane, rid: proto.WindowRequest(rid, pane, last, before),
                 timeout=timeout)
    if not isinstance(frame, proto.Window):
        raise HostDown(name.partition(":")[0], "bad-frame", f"a window request got {frame.T!r}")
    return frame


def event(session, name: str, cursor: str, *,
          timeout: float = link.DEFAULT_TIMEOUT_S) -> proto.Event:
    """One event of HOST:%N's transcript with its body."""
    frame = _ask(session, name, lambda pane, rid: proto.EventRequest(rid, pane, cursor),
                 timeout=timeout)
    if not isinstance(frame, proto.Event):
        raise HostDown(name.partition(":")[0], "bad-frame", f"an event request got {frame.T!r}")
    return frame


#: The kinds whose bodies `conversation` fetches: what a person reads in a chat.
MESSAGES = ("user_message", "assistant_text")


def conversation(session, name: str, *, last: int | None = None, bodies: int = 8,
                 timeout: float = link.DEFAULT_TIMEOUT_S) -> proto.Window:
    """HOST:%N's newest transcript page with the bodies of its newest `bodies` messages
    (yours and the agent's), all over one link: the `window`, then an `event` request
    for each of them. The window without the bodies that did not come (a cursor the host
    no longer honours, the link's time running out) rather than nothing."""
    parts = split_target(name)
    assert parts is not None, name
    got: dict[str, proto.EventBody] = {}
    windows: list[proto.Window] = []
    wanted: list[str] = []

    def follow(answer: proto.Frame, rid: str) -> proto.Frame | None:
        if isinstance(answer, proto.Window):
            windows.append(answer)
            wanted.extend([h.cursor for h in answer.events if h.kind in MESSAGES][:bodies])
        elif isinstance(answer, proto.Event):
            if answer.header.body is not None:
                got[answer.header.cursor] = answer.header.body
        else:
            return None
        return proto.EventRequest(rid, parts[1], wanted.pop(0)) if wanted else None

    try:
        _ask(session, name, lambda pane, rid: proto.WindowRequest(rid, pane, last, None),
             timeout=timeout, follow=follow)
    except (Refused, HostDown):
        if not windows:
            raise
    if not windows:
        raise HostDown(parts[0], "bad-frame", "a window request got no window")
    w = windows[0]
    return w.replace(events=tuple(h.replace(body=got[h.cursor]) if h.cursor in got else h
                                  for h in w.events))


#: `last_answer` asks for at most this many windows looking for its turns.
LAST_PAGES = 20


def last_answer(session, name: str, turns: int = 1, *,
                timeout: float = link.DEFAULT_TIMEOUT_S) -> list[str]:
    """HOST:%N's agent's last answer, as `tma last` reads a local one: windows newest
    first until the newest `turns` turns with assistant text are whole, then each of
    their events' bodies; all over one link, in order."""
    pane = split_target(name)
    assert pane is not None, name
    seen: list[tuple[str, str]] = []
    wanted: list[str] = []
    texts: list[str] = []
    pages = [0]

    def follow(answer: proto.Frame, rid: str) -> proto.Frame | None:
        if isinstance(answer, proto.Window):
            pages[0] += 1
            seen.extend((h.cursor, h.kind) for h in answer.events)
            picked = last_turns(seen, turns, at_start=answer.older is None)
            if not picked.complete and answer.older and pages[0] < LAST_PAGES:
                return proto.WindowRequest(rid, pane[1], None, answer.older)
            wanted.extend(picked.cursors)
        elif isinstance(answer, proto.Event):
            body = answer.header.body
            texts.append(body.text if body is not None else "")
        else:
            return None
        return proto.EventRequest(rid, pane[1], wanted.pop(0)) if wanted else None

    _ask(session, name, lambda p, rid: proto.WindowRequest(rid, p, None, None),
         timeout=timeout, follow=follow)
    return texts


def daemon_state(session, host: str) -> dict | None:
    """The host's entry in the running daemon's fleet document (None: no daemon holds it)."""
    doc = session.daemon_fleet()
    if doc is None:
        return None
    return next((h for h in doc.get("hosts", ()) if h.get("name") == host), None)


@dataclasses.dataclass
class View:
    """One look at the hosts: every host's entry (fleet_view.Remote.entries) and the rows
    of the hosts that answered (ls --json rows with `host`); `source` is "daemon" or
    "probe"."""

    hosts: list[dict]
    rows: list[dict]
    source: str

    def online(self, host: str) -> bool:
        return any(h["name"] == host and h["state"] in ONLINE for h in self.hosts)

    def live_rows(self) -> list[dict]:
        """The rows a decision may use: an online host's, never a stale one."""
        up = {h["name"] for h in self.hosts if h["state"] in ONLINE}
        return [d for d in self.rows if d["host"] in up and not d.get("stale")]


class Follow:
    """The hosts' rows, one `look()` per tick. `names`: only these hosts (None: every
    configured one). Raises hosts.HostError for a broken hosts file.

    Without a daemon the probes run on a thread of their own: a tick returns the last
    finished probe's view at once (the first look waits for one), so a hung host costs
    its probe's timeout on that thread, never the caller's local cycle."""

    def __init__(self, session, names: list[str] | None = None, *, probe_s: float = PROBE_S,
                 timeout: float = link.DEFAULT_TIMEOUT_S, clock=time.monotonic) -> None:
        self.session, self.names = session, names
        self.probe_s, self.timeout, self.clock = probe_s, timeout, clock
        self._probed: View | None = None
        self._probe_at = 0.0
        self._running: threading.Thread | None = None

    def look(self) -> View:
        remote = fleet_view.Remote(self.session, probe=False)
        wanted = self.names if self.names is not None else remote.configured
        if remote.cached is not None:
            return View([e for e in remote.entries() if e["name"] in wanted],
                        [d for d in remote.rows() if d["host"] in wanted], "daemon")
        if self._running is None and self.clock() >= self._probe_at:
            configured = {h.name: h for h in hosts.load(self.session)}
            named = [(n, fleet.argv(self.session, configured[n])) for n in wanted
                     if n in configured]
            self._running = threading.Thread(target=self._probe, args=(remote, named),
                                             name="tma-fleet-probe", daemon=True)
            self._running.start()
        if self._probed is None and self._running is not None:
            self._running.join()  # the first look: nothing to show before it
        if self._running is not None and not self._running.is_alive():
            self._running = None
        return self._probed if self._probed is not None else View([], [], "probe")

    def _probe(self, remote, named) -> None:
        try:
            remote.probes = link.probe_all(named, timeout=self.timeout,
                                           env=dict(self.session.env))
            self._probed = View(remote.entries(), remote.rows(), "probe")
        finally:
            self._probe_at = self.clock() + self.probe_s


class _Stamp:
    __slots__ = ("state", "attention", "episode_ms", "detail")

    def __init__(self, d: dict) -> None:
        self.state, self.attention = d["state"], bool(d["attention"])
        self.episode_ms, self.detail = int(d.get("episode_ms") or 0), d.get("detail")


class _Pane:
    __slots__ = ("pane_id",)

    def __init__(self, pane_id: str) -> None:
        self.pane_id = pane_id


class RemoteRow:
    """A remote ls row in the shape tma.runtime.waiting reads (`stamp`, `pane.pane_id`
    as HOST:%N); `doc` is the row itself."""

    __slots__ = ("doc", "stamp", "pane", "agent")

    def __init__(self, d: dict) -> None:
        self.doc = d
        self.stamp = _Stamp(d)
        self.pane = _Pane(f"{d['host']}:{d['pane']}")
        self.agent = d["agent"]


def host_state(h: dict) -> tuple[str, str | None]:
    """(online, offline or connecting; the link's named state): a probe's failure is
    offline with the probe's state as the link's."""
    if h["state"] in ONLINE:
        return "online", "ok"
    if h["state"] == "connecting":
        return "connecting", h.get("link")
    return "offline", h.get("link") or h["state"]


def host_records(before: dict[str, str] | None, view: View, now: int
                 ) -> tuple[dict[str, str], list[dict]]:
    """subscribe --events: one record per host whose state (online, offline, connecting;
    "" for a host added or removed) changed since `before` (host -> state); none against
    no baseline."""
    states = {h["name"]: host_state(h)[0] for h in view.hosts}
    if before is None:
        return states, []
    out = []
    for h in view.hosts:
        prior = before.get(h["name"], "")
        state, link_state = host_state(h)
        if prior != state:
            out.append({"schema": 1, "at_ms": now, "host": h["name"], "from": prior,
                        "to": state, "link": link_state,
                        "error": h.get("error") if state != "online" else None})
    for name, prior in before.items():
        if name not in states:
            out.append({"schema": 1, "at_ms": now, "host": name, "from": prior, "to": "",
                        "link": None, "error": None})
    return states, out


def row_edges(before: dict | None, view: View, rows: list[dict], now: int
              ) -> tuple[dict, list[dict]]:
    """subscribe --events for the hosts' rows (`rows`: the view's, selectors applied):
    (host, pane) -> (state, row), and an edge record (tma.ui.rows.edge plus `host`) per
    row of an online host whose state changed. A host that is not online keeps its last
    states and makes no edge: its rows say nothing new (its own record says why)."""
    up = {h["name"] for h in view.hosts if h["state"] in ONLINE}
    states = {k: v for k, v in (before or {}).items() if k[0] not in up}
    for d in rows:
        if d["host"] in up and not d.get("stale"):
            states[(d["host"], d["pane"])] = ("done" if d["done"] else d["state"], d)
    if before is None:
        return states, []
    out = []
    for key, (state, d) in states.items():
        prior = before.get(key)
        if prior is None or prior[0] != state:
            out.append(dict(render.edge(now, d, prior[0] if prior else "", state),
                            host=key[0]))
    for key, (state, d) in before.items():
        if key not in states:
            out.append(dict(render.edge(now, d, state, ""), host=key[0]))
    return states, out

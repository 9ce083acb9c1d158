"""`tma act ACTION --pane HOST:%N`: an action fired at another machine's pane, through the
link (tma.runtime.fleet.link) as the protocol's `dispatch`, answered by that host's
`tma serve --stdio` (which claims the slot in its own ledger, then runs `tma act` there
with the episode binder).

Firing at most once across a dropped link takes both ends. The host keeps a ledger of
slots it has fired; this side makes the slot and keeps it here, in a small ledger of its
own (`fleet/dispatch.jsonl` in the state dir), written BEFORE the dispatch goes out:

- the slot is a hash of (host, pane, episode, action, text, answers): the same answer to
  the same prompt is the same slot, whoever sends it and however often;
- the episode is the one the caller saw (`--expect-episode`), else the one a fresh
  snapshot over the same link shows just before the dispatch;
- a dispatch sent and never answered (the link dropped) stays `pending` here: the next
  identical command re-sends that slot with that episode, rather than reading a new one
  (the prompt it answered may be gone by then), and the host answers with the receipt it
  kept (`cached: true`), firing nothing;
- a receipt answers for this dispatch only when it names its slot, pane and action: one
  for another dispatch (a host that lies, or a confused one) is an error (exit 1) that
  leaves the line `pending`, so the retry asks about this slot again.

Refused (exit 4) unless both ends grant the scope: this machine's hosts.toml (`act`) and
the host's serve (its hello's scopes, from its forced command).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from dataclasses import dataclass

from tma.core import proto
from tma.core.actions import gate
from tma.runtime.fleet import hosts as store, link, links as fleet, view
from tma.runtime.fleet.serve import SCOPE_OF
from tma.runtime.selectors import split_target
from tma.ui.rows import fleet_row_dict

#: A dispatch whose answer never came is retried with its own slot for this long.
PENDING_MS = 15 * 60 * 1000
KEEP_MS = 7 * 24 * 3600 * 1000
MAX_BYTES = 256 * 1024
#: The host runs `tma act` with a 15 s budget; the link gets that and a margin.
TIMEOUT_S = 25.0

#: What this machine's hosts.toml `act` lets it ask for: steer is the wider grant.
LOCAL_GRANTS = {None: (), "answer": ("act:answer",), "steer": ("act:answer", "act:steer")}


def scope_of(action: str) -> str | None:
    """The grant an action needs over the link (None: it never crosses the link)."""
    return SCOPE_OF.get(action)


def offered(actions, host: store.Host, name: str, row: dict | None,
            scopes: tuple[str, ...] | None) -> tuple[list, str]:
    """(the actions a menu offers on the host's pane `name` (HOST:%N), why none when it
    offers nothing). An entry is one the host would fire: it crosses the link and needs
    nothing typed (no text, no answers), this machine's hosts.toml grants its scope, the
    host's serve does (`scopes`, its hello's: None when no link has greeted it yet, and
    then the host decides), and the pane's row admits it (its state and detail, its
    agent: tma.core.actions.gate.row_gate; `row` is the ls --hosts row)."""
    granted = LOCAL_GRANTS.get(host.act, ())
    if not granted:
        return [], (f"host {host.name} is read-only here: no actions (tma host set "
                    f"{host.name} --act answer grants them)")
    if row is None:
        return [], f"no agent pane {name} (it closed, or the host has not said yet)"
    menu = [a for a in actions if not a.text and not a.takes_answers
            and scope_of(a.name) in granted]
    if scopes is not None:
        menu = [a for a in menu if scope_of(a.name) in scopes]
        if not menu:
            return [], (f"host {host.name} grants nothing to fire here: its serve allows "
                        f"{', '.join(scopes) or 'nothing'} (its forced command: "
                        f"`tma serve --stdio --scope read,act:{host.act}`)")
    target = gate.Target(pane=name, agent=str(row.get("agent") or ""),
                         state=row.get("state") or None, detail=row.get("detail") or "",
                         attention=bool(row.get("attention")))
    fireable = [a for a in menu if gate.row_gate(a, target) is None]
    if fireable:
        return fireable, ""
    state = str(row.get("state") or "unknown") + (f"/{row['detail']}" if row.get("detail")
                                                  else "")
    return [], (f"no action from here fires on {name} now: it is {state}, and hosts.toml "
                f"grants act:{host.act} ({', '.join(a.name for a in menu) or 'nothing'})")


def menu(session, host: store.Host, name: str, actions) -> tuple[list, str]:
    """`offered` for `tma act --menu --pane HOST:%N`: the pane's row and the host's
    grants from the running daemon's link (no SSH), else from one probe of that host
    (a menu asked for by hand, with no daemon holding the hosts)."""
    if not LOCAL_GRANTS.get(host.act, ()):
        return offered(actions, host, name, None, None)  # read-only: nothing to read
    pane = name.rpartition(":")[2]
    side = view.Remote(session, probe=False)
    if side.cached is not None:
        row = next((d for d in side.rows() if d["host"] == host.name and d["pane"] == pane),
                   None)
        if row is not None and row.get("stale"):
            return [], (f"host {host.name} is offline: its actions come back with it")
        return offered(actions, host, name, row, side.scopes(host.name))
    probe = link.converse(host.name, fleet.argv(session, host), env=dict(session.env))
    if not probe.ok:
        return [], (f"host {host.name}: {probe.state}: {probe.error} (tma host check "
                    f"{host.name} says more)")
    frow = next((r for r in probe.rows if r.pane == pane), None)
    row = fleet_row_dict(frow, host=host.name) if frow is not None else None
    return offered(actions, host, name, row, probe.hello.scopes if probe.hello else None)


def slot_for(host: str, pane: str, episode_ms: int, action: str, text: str | None,
             answers: tuple[tuple[str, ...], ...] | None) -> str:
    key = json.dumps([host, pane, episode_ms, action, text, answers], separators=(",", ":"))
    return "tma-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def _intent(host: str, pane: str, action: str, text: str | None,
            answers: tuple[tuple[str, ...], ...] | None) -> str:
    return json.dumps([host, pane, action, text, answers], separators=(",", ":"))


class Outbox:
    """The local ledger: one JSON line per slot sent (`pending`) and answered (`done`);
    the newest line for a slot wins."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _open(self) -> int:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)

    @staticmethod
    def _read(fd: int) -> dict[str, dict]:
        os.lseek(fd, 0, os.SEEK_SET)
        data = b""
        while chunk := os.read(fd, 1 << 16):
            data += chunk
        out: dict[str, dict] = {}
        for raw in data.split(b"\n"):
            try:
                doc = json.loads(raw)
            except ValueError:
                continue  # a torn line reads as absent
            if isinstance(doc, dict) and isinstance(doc.get("slot"), str):
                out[doc["slot"]] = doc
        return out

    def pending(self, intent: str, now: int) -> dict | None:
        """The newest unanswered dispatch of this intent, while it may still be retried."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            seen = self._read(fd)
        finally:
            os.close(fd)
        hits = [d for d in seen.values() if d.get("intent") == intent
                and d.get("status") == "pending" and now - int(d.get("at_ms") or 0) < PENDING_MS]
        return max(hits, key=lambda d: int(d.get("at_ms") or 0)) if hits else None

    def write(self, doc: dict) -> None:
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_size > MAX_BYTES:
                now = int(doc.get("at_ms") or 0)
                keep = [d for d in self._read(fd).values()
                        if now - int(d.get("at_ms") or 0) < KEEP_MS]
                os.ftruncate(fd, 0)
                for d in keep:
                    os.write(fd, (json.dumps(d, separators=(",", ":")) + "\n").encode())
            line = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            os.write(fd, line)
        finally:
            os.close(fd)


def outbox(session) -> Outbox:
    return Outbox(os.path.join(session.paths.state_dir, "fleet", "dispatch.jsonl"))


@dataclass
class Fired:
    """A remote act's result in tma act's terms (tma.runtime.act.fire.Result's keys)
    plus the slot and whether the host answered from its ledger."""

    action: str
    pane: str  # HOST:%N
    outcome: str
    reason: str | None
    exit_code: int
    message: str
    host: str
    slot: str | None = None
    cached: bool = False

    def as_json(self) -> dict:
        return {"schema": 1, "action": self.action, "pane": self.pane,
                "outcome": self.outcome, "exit_code": self.exit_code, "reason": self.reason,
                "message": self.message, "host": self.host, "slot": self.slot,
                "cached": self.cached}


def fire(session, name: str, action: str, *, text: str | None = None,
         answers: tuple[tuple[str, ...], ...] | None = None, expect_episode: int = 0,
         timeout: float = TIMEOUT_S, now=lambda: time.time_ns() // 1_000_000) -> Fired:
    """Fire `action` at `name` (HOST:%N). Raises HostError for an unknown host."""
    parts = split_target(name)
    assert parts is not None, name
    host_name, pane = parts
    host = store.get(session, host_name)

    def done(outcome: str, reason: str | None, code: int, message: str,
             slot: str | None = None, cached: bool = False) -> Fired:
        return Fired(action, name, outcome, reason, code, message, host.name, slot, cached)

    need = scope_of(action)
    if need is None:
        return done("refused", "scope-denied", 4,
                    f"`{action}` is not fired at a remote pane: over the link tma sends "
                    "approve, deny, question_reply, question_reject, steer, steer_now and "
                    "interrupt")
    if need not in LOCAL_GRANTS.get(host.act, ()):
        want = "steer" if need == "act:steer" else "answer"
        return done("refused", "scope-denied", 4,
                    f"host {host.name} is read-only here: `{action}` needs the {need} scope, "
                    f"and hosts.toml grants {('act:' + host.act) if host.act else 'none'} "
                    f"(tma host set {host.name} --act {want})")
    box = outbox(session)
    intent = _intent(host.name, pane, action, text, answers)
    prior = None if expect_episode else box.pending(intent, now())
    state: dict = {}

    def make(probe: link.Probe, rid: str):
        granted = probe.hello.scopes if probe.hello else ()
        if need not in granted:
            state["refused"] = (f"host {host.name} does not grant {need}: its serve allows "
                                f"{', '.join(granted) or 'nothing'} (its forced command: "
                                f"`tma serve --stdio --scope read,{need}`)")
            return None
        if prior is not None:
            slot, episode = prior["slot"], int(prior.get("episode_ms") or 0)
        else:
            episode = expect_episode
            if not episode:
                row = next((r for r in probe.rows if r.pane == pane), None)
                if row is None:
                    state["gone"] = True
                    return None
                episode = row.episode_ms
            slot = slot_for(host.name, pane, episode, action, text, answers)
        state["slot"] = slot
        # kept before it goes out: a link that drops now leaves this line `pending`
        box.write({"slot": slot, "intent": intent, "host": host.name, "pane": pane,
                   "action": action, "episode_ms": episode, "status": "pending",
                   "at_ms": now()})
        return proto.Dispatch(rid, slot, host.name, pane, action, proto.Binder(episode),
                              text, answers, _device())

    ex = link.exchange(host.name, fleet.argv(session, host), make, timeout=timeout,
                       env=dict(session.env), snapshot=not expect_episode and prior is None)
    slot = state.get("slot")
    if "refused" in state:
        return done("refused", "scope-denied", 4, state["refused"])
    if state.get("gone"):
        return done("vanished", None, 3, f"no agent pane {name} (it closed, or never "
                                         f"existed): nothing to {action}")
    answer = ex.answer
    if isinstance(answer, proto.Receipt):
        row = answer.receipt
        if (row.slot, row.pane, row.action) != (slot, pane, action):
            # a receipt names the dispatch it answers; one for another slot (or pane, or
            # action) says nothing about this one, which may or may not have fired. The
            # outbox line stays `pending`, so the same command re-sends this very slot
            # and the host's ledger answers for it, rather than a new slot firing twice.
            return done("error", None, 1,
                        f"the host answered with a receipt for another dispatch ({row.action} "
                        f"on {row.pane}, slot {row.slot[:48]}), not this {action} on {pane}: "
                        f"host {host.name} may or may not have fired it; run the same "
                        "command again to learn its fate (it re-sends the same slot)", slot)
        box.write({"slot": row.slot, "intent": intent, "status": "done",
                   "outcome": row.outcome, "reason": row.reason, "at_ms": now()})
        return _from_receipt(row, name, host.name)
    probe = ex.probe
    if ex.sent and probe.state == "refused":  # an error frame: the host fired nothing
        box.write({"slot": slot, "intent": intent, "status": "done", "outcome": "error",
                   "reason": None, "at_ms": now()})
        return done("error", None, 1, f"host {host.name} did not take the dispatch: "
                                      f"{probe.error}", slot)
    if ex.sent:
        return done("error", None, 1,
                    f"the link to {host.name} dropped after the dispatch was sent "
                    f"({probe.state}: {probe.error}): it may have landed; run the same "
                    "command again to learn its fate (it re-sends the same slot, which "
                    "the host never answers twice)", slot)
    return done("error", None, 1, f"host {host.name}: {probe.state}: {probe.error} "
                                  f"(tma host check {host.name} says more); nothing was sent",
                slot)


def _from_receipt(row: proto.ReceiptRow, name: str, host: str) -> Fired:
    outcome, reason, code = row.outcome, row.reason, row.exit_code
    said = {
        "sent": f"{row.action} sent to {name}",
        "replied": f"{row.action} answered on {name}",
        "vanished": f"no pane {name} (it closed, or never existed): nothing to {row.action}",
    }.get(outcome)
    if outcome == "refused":
        said = {
            "scope-denied": f"host {host} refused: `{row.action}` is outside the scopes its "
                            "serve grants" + (f" ({row.message})" if row.message else ""),
            "locked": f"another tma act on {host} holds {row.pane}'s lock: try again",
            "answered": f"another tma act already answered this prompt on {name}",
            "episode-changed": f"{name} is no longer in the episode this answer was for "
                               "(its prompt was answered or replaced): nothing sent",
            "too-long": "the text is longer than the protocol carries",
        }.get(reason or "")
        if said is None:
            # the host's own sentence, as a local act says it ("%3 is working, not at a
            # permission prompt"); a host that sends none leaves its reason token
            said = (f"host {host} refused {row.action} on {name}: {row.message}"
                    if row.message else f"{host} refused {row.action} on {row.pane}: {reason}")
    elif outcome == "error":
        said = (f"{host} may have fired {row.action} on {row.pane} without saying so "
                f"({reason or 'error'}): look at the pane before trying again")
    if said is None:
        said = f"{row.action} on {name}: {outcome}"
    if row.cached:
        said += " (the host's stored receipt for this slot: nothing fired again)"
    if outcome != "refused":
        reason = None  # tma act's reasons are refusals' only
    return Fired(row.action, name, outcome, reason, code, said, host, row.slot, row.cached)


def _device() -> str:
    return os.uname().nodename

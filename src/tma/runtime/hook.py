"""Hook intake: one agent event -> one guarded stamp (the hook tier).

`tma event` runs from every agent hook, so this path stays lean: the agent's hook
table comes from a marshal cache (no TOML, no manifest schema), payload fields come
from a small top-level scanner (no json), one tmux spawn reads the pane's session,
one writes the tuple, its companions, the rollups (and reads back a notification
marker when one is due). Every value an agent supplies is sanitised before it can
reach a tmux format.
"""

from __future__ import annotations

import os

from tma.core import codec, intake as I, plan as P, states
from tma.core.jsonlite import top_level
from tma.tmux import read, write

FIELDS = ("session_id", "sessionID", "sessionId", "model", "tool_use_id", "prompt_id", "tool_name",
          "thread-id", "request_id", "requestID", "question_id", "api_endpoint",
          "transcript_path", "transcriptPath", "hook_event_name")
REPLY_POLL_S = 0.1

_TEXT_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                     "._:/@+-[]")
_URL_OK = _TEXT_OK | frozenset("?&=%~")


def _label(value: str, allowed=_TEXT_OK, limit: int = 128) -> str:
    """An agent-supplied label (model, URL) only in a charset inert inside a format."""
    return value if value and len(value) <= limit and all(c in allowed for c in value) else ""


def summary_text(value: str, limit: int = 160) -> str:
    """Free text (a pending command) made inert for a conditional format: no `#`, `,`,
    `{`, `}`, quotes or control bytes survive."""
    out = []
    for c in value:
        if c < " " or c == "\x7f":
            c = " "
        elif c in "#,{}\"'\\$":
            c = "_"
        out.append(c)
    text = " ".join("".join(out).split())
    return text[: limit - 1] + "…" if len(text) > limit else text


class Outcome:
    """What one event did (tests and the benchmark read it)."""

    def __init__(self) -> None:
        self.kind = ""
        self.wrote = False
        self.notified = False
        self.reply: str | None = None


def _rollup_lines(panes, pane_id: str, new_state: str | None) -> list[str]:
    from tma.core.rollup import summary

    target = next(p for p in panes if p.pane_id == pane_id)
    win: list[str] = []
    ses: list[str] = []
    for p in panes:
        if p.pane_id == pane_id:
            st = new_state
        else:
            try:
                stamp = codec.decode(p.options)
            except codec.DecodeError:
                continue
            st = stamp.state if stamp is not None and not p.options.get("@agent_ignore") else None
        if st is None:
            continue
        ses.append(st)
        if p.window_id == target.window_id:
            win.append(st)
    lines = []
    w, s = summary(win), summary(ses)
    if w != target.options.get("@agent_summary", ""):
        lines.append(write.rollup("window", target.window_id, w))
    if s != target.options.get("@agent_session_summary", ""):
        lines.append(write.rollup("session", target.session_id, s))
    return lines


def _walked_pid(pane, names: tuple[str, ...]) -> int:
    from tma.core.identity import normalize_comm, pick_pid
    from tma.runtime import procs

    table = procs.read_subtree(pane.pane_pid)
    if table is None:
        table = procs.read_proc_table()
    if table is None:
        return 0
    matches = [p for p in table.subtree(pane.pane_pid) if normalize_comm(p.comm) in names]
    return pick_pid(matches) if matches else 0


def _loses(ev: _Event) -> bool:
    """The hook guard over the options just read: a stored hook claim with strictly
    newer evidence. Such an event changes nothing, so it is not sent at all."""
    return write.would_hold(P.Guard(P.HOOK_ARBITRATE, at=ev.now), ev.pane.options, ev.clock)


class _Event:
    """One event's inputs once the pane is read: what every step below works from."""

    __slots__ = ("server", "cfg", "table", "kind", "payload", "now", "panes", "pane", "prev",
                 "fields", "session", "before_hold", "clock", "mirror", "fresh")

    def __init__(self, server, cfg, table, kind: str, payload: str, now: int, panes, pane,
                 prev: codec.Stamp | None) -> None:
        self.before_hold = None
        self.clock = now  # the writer's time: later than `now` when the daemon queued it
        self.mirror = False  # keep pane.options as the writes leave them (a daemon round)
        self.fresh = True  # pane.options were read from tmux, not mirrored
        self.server, self.cfg, self.table = server, cfg, table
        self.kind, self.payload, self.now = kind, payload, now
        self.panes, self.pane, self.prev = panes, pane, prev
        self.fields = top_level(payload, FIELDS)
        self.session = write.safe_id(self.fields.get("session_id")
                                     or self.fields.get("sessionID")
                                     or self.fields.get("sessionId") or "")

    @property
    def pane_id(self) -> str:
        return self.pane.pane_id

    @property
    def stored(self):
        """What a write may compare against: the options read, never a mirror (a mirror
        assumes the writes before committed; the guards decide it on the server)."""
        return self.pane.options if self.fresh else None

    def mirrored(self, plan: P.Plan, pid: int, hash: str, extras=()) -> None:
        if self.mirror:
            new = write.expected(self.pane.options, plan, self.now, name=self.table.name,
                                 pid=pid, hash=hash, extras=tuple(extras), clock=self.clock)
            self.pane.options.clear()
            self.pane.options.update(new)

    def mirror_set(self, key: str, value: str) -> None:
        if self.mirror:
            if value:
                self.pane.options[key] = value
            else:
                self.pane.options.pop(key, None)


class Batch:
    """A server whose writes wait for `flush()`: the daemon stamps a round of handed-off
    events (one per pane) with one read and one `source-file` spawn. A write whose answer
    is needed (the notification marker read back) goes at once, with what waits before it."""

    def __init__(self, server) -> None:
        self.server = server
        self.lines: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self.server, name)

    def source(self, lines: list[str]) -> tuple[str, str]:
        self.lines.extend(lines)
        return "", ""

    def answer(self, lines: list[str]) -> tuple[str, str]:
        waiting, self.lines = self.lines, []
        return self.server.source(waiting + lines)

    def flush(self, then: tuple[str, ...] = ()) -> str:
        """Write what waits, then run `then` (a read) in the same spawn: its output."""
        waiting, self.lines = self.lines, []
        out, _err = self.server.source(waiting + list(then))
        return out


def handle(server, cfg, table, kind: str, pane_id: str, payload: str, now: int,
           before_hold=None, panes=None, clock: int = 0, mirror: bool = False,
           fresh: bool = True) -> Outcome:
    """`before_hold`: called once the stamp is written and before Claude's reply lane
    holds (up to hold_ms), so a running daemon hears of the blocked stamp at once.
    `panes`: the pane and its session's panes already read (tma.tmux.read.session_of),
    for a round of events read together; None reads them here. `clock`: the writer's
    time when later than the event's `now` (the daemon stamps events it queued): the
    guards bound a stored claim's future skew by it, so a late event never overwrites a
    newer claim written meanwhile. `mirror`: keep the panes' options as this event's
    writes leave them (write.expected), so that the daemon decides a pane's next queued
    event in the same round over them; `fresh`: the pane's options were read from tmux
    (False: a mirror, never compared against in a write)."""
    out = Outcome()
    ev = _read(server, cfg, table, kind, pane_id, payload, now, panes)
    if ev is None:
        return out
    ev.clock = max(now, clock)
    ev.mirror, ev.fresh = mirror, fresh
    ev.before_hold = before_hold
    if kind == "context":
        out.kind = "context"
        _context(server, table, ev.pane, ev.prev, payload, ev.session, now, out)
    elif kind in ("permission-replied", "question-replied"):
        out.kind = kind
        _replied(ev, out)
    elif kind == "notify" and _other_thread(ev):
        out.kind = "ignored-thread"
    else:
        _state_event(ev, out)
    return out


def _read(server, cfg, table, kind: str, pane_id: str, payload: str, now: int,
          panes=None) -> _Event | None:
    """The pane and its session's panes in one spawn; None for a gone or ignored pane."""
    if panes is None:
        panes = read.hook_panes(server, pane_id)
    pane = next((p for p in panes if p.pane_id == pane_id), None)
    if pane is None or pane.options.get("@agent_ignore"):
        return None
    try:
        prev = codec.decode(pane.options)
    except codec.DecodeError:
        prev = None  # another producer's unreadable tuple: the agent's own word replaces it
    return _Event(server, cfg, table, kind, payload, now, panes, pane, prev)


def _other_thread(ev: _Event) -> bool:
    """codex also notifies for its own title-generation thread: only the pane's session."""
    thread = ev.fields.get("thread-id", "")
    return ev.prev is not None and bool(ev.prev.session) and bool(thread) \
        and thread != ev.prev.session


def _replied(ev: _Event, out: Outcome) -> None:
    """OpenCode's permission/question reply: clear the request; an approval is working."""
    prev, kind = ev.prev, ev.kind
    owner = prev.session if prev is not None else ""
    if ev.session and owner and ev.session != owner:
        return
    key = "@agent_permission_request" if kind == "permission-replied" \
        else "@agent_question_request"
    reply = top_level(ev.payload, ("reply",)).get("reply", "")
    if (kind == "permission-replied" and reply in ("once", "always") and prev is not None
            and prev.state == states.BLOCKED and not _loses(ev)):
        # OpenCode 1.18 fires tool.execute.before BEFORE it asks, so nothing else
        # reports the approved tool running until it finishes: the approval is the
        # working edge (a reject is followed by session.idle, which idles the pane).
        plan = P.Plan(P.PUBLISH, state=states.WORKING, source=states.SOURCE_HOOK,
                      evidence_at=ev.now, guard=P.Guard(P.HOOK_ARBITRATE, at=ev.now),
                      reason="permission approved", label=kind)
        ev.server.source([write.render(
            ev.pane_id, plan, ev.now, name=ev.table.name, pid=prev.pid, hash=prev.hash,
            extras=(write.Extra(key, ""),), stored=ev.stored,
            then=tuple(_rollup_lines(ev.panes, ev.pane_id, states.WORKING)), clock=ev.clock)])
        ev.mirrored(plan, prev.pid, prev.hash, (write.Extra(key, ""),))
        out.wrote = True
    elif ev.pane.options.get(key):
        ev.server.source([write.set_plain(ev.pane_id, key, "")])
        ev.mirror_set(key, "")
        out.wrote = True


def _state_event(ev: _Event, out: Outcome) -> None:
    """A mapped agent event: subagents, deregistration, or one guarded stamp."""
    prev = ev.prev
    pid = _walked_pid(ev.pane, ev.table.process_names)
    episode = bool(prev is not None and prev.pid and pid and prev.pid != pid)
    decision = I.decide(None if episode else prev, ev.table, ev.kind, ev.payload, ev.session,
                        ev.now)
    out.kind = decision.kind
    if decision.kind in (I.UNMAPPED, I.IGNORE):
        return
    if decision.kind == I.SUBAGENTS:
        ids = " ".join(s for s in (write.safe_id(x) for x in decision.subagents) if s)
        ev.server.source([write.set_plain(ev.pane_id, "@agent_subagents", ids)])
        ev.mirror_set("@agent_subagents", ids)
        out.wrote = True
        return
    if decision.kind == I.DEREGISTER:
        ev.server.source([write.remove(ev.pane_id)] + _rollup_lines(ev.panes, ev.pane_id, None))
        ev.mirrored(P.remove("lifecycle end"), 0, "")
        out.wrote = True
        return
    plan = decision.plan
    if episode:
        plan = plan.replace(episode_reset=True, guard=P.Guard(P.UNCONDITIONAL))
    elif _loses(ev):
        return  # the stored claim is newer evidence: this event changes nothing
    elif _another_request(ev, plan):
        # the agent's own word that another prompt stands: its own episode (since moves,
        # the mark goes up, it rings), however soon after the last one
        plan = plan.replace(new_prompt=True, set_attention=True,
                            reason=plan.reason + "; another request: a new episode")
    _stamp(ev, decision, plan, pid, out)
    if (ev.table.holds_reply(ev.kind) and plan.state == states.BLOCKED
            and ev.cfg.claude_reply_lane):
        if ev.before_hold is not None:
            ev.before_hold()
        out.reply = hold_for_verdict(ev.server, ev.pane_id, ev.cfg.hold_ms)


def _another_request(ev: _Event, plan: P.Plan) -> bool:
    """A blocked event naming another pending request (a permission or a question id)
    than the one the blocked pane holds. An event naming the same one (OpenCode's
    `permission.updated`), or none, is the same prompt."""
    if plan.state != states.BLOCKED or ev.prev is None or ev.prev.state != states.BLOCKED:
        return False
    for key, names in (("@agent_permission_request", ("request_id", "requestID")),
                       ("@agent_question_request", ("question_id",))):
        new = write.safe_id(next((ev.fields[n] for n in names if ev.fields.get(n)), ""))
        held = ev.pane.options.get(key, "")
        if new and held and new != held:
            return True
    return False


def _stamp(ev: _Event, decision, plan: P.Plan, pid: int, out: Outcome) -> None:
    """The tuple, its companions and the rollups in one block; the notification fires
    only when this write stored its own marker (read back in the same spawn)."""
    prev, now = ev.prev, ev.now
    extras = _extras(decision, plan, ev.pane, prev, ev.fields, ev.payload, now)
    notify = _notify_due(ev.cfg, plan)
    if notify:
        extras.append(write.Extra("@agent_notified_at", str(now), True, write.already_notified()))
    lines = [write.render(ev.pane_id, plan, now, name=ev.table.name, pid=pid,
                          hash=prev.hash if prev is not None else "", extras=tuple(extras),
                          stored=ev.stored,
                          then=tuple(_rollup_lines(ev.panes, ev.pane_id, plan.state)),
                          clock=ev.clock)]
    readback = read.Values(ev.pane_id, ("@agent_notified_at", "@agent_mute_until"))
    if notify:
        from tma.tmux import notify as tnotify

        # the clients in the same spawn: who is attached, what each shows, its last input
        lines.extend((readback.line(), tnotify.clients_line()))
    res, _err = (ev.server.answer(lines) if notify and isinstance(ev.server, Batch)
                 else ev.server.source(lines))
    out.wrote = True
    ev.mirrored(plan, pid, prev.hash if prev is not None else "", extras)
    if notify:
        marker, mute = readback.parse(res) or ("", "")
        ev.mirror_set("@agent_notified_at", marker)  # what the server kept, read back
        muted = mute.isdigit() and codec.to_ms(int(mute)) > now
        if marker == str(now) and not muted:
            clients, watchers = tnotify.parse_clients(res)
            if _on_screen(ev.cfg, ev.pane_id, watchers, now):
                return  # in front of a person: the marker is consumed, nothing rings
            _dispatch(ev.server, ev.cfg, ev.table, ev.pane, plan, decision, prev, ev.session,
                      now, clients)
            out.notified = True


_PATH_OK = _TEXT_OK | frozenset(" ~")


def _path(value: str) -> str:
    """An absolute path inert inside a conditional format (no `#`, `,`, `{`, `}` …)."""
    return value if value.startswith("/") and _label(value, _PATH_OK, 1024) else ""


def _extras(decision, plan, pane, prev, fields, payload, now) -> list:
    E = write.Extra
    extras = []
    if decision.session:
        extras.append(E("@agent_session", decision.session))
    if decision.record_turn:
        extras.append(E("@agent_turn_at", str(now)))
    model = _label(fields.get("model", ""))
    if model:
        extras.append(E("@agent_model", model))
    endpoint = _label(fields.get("api_endpoint", "").rstrip("/"), _URL_OK, 256)
    if endpoint:
        extras.append(E("@agent_api_endpoint", endpoint))
    # every hooked agent's own transcript file: `tma transcript` reads it (a device names
    # the pane, the host its file), and Codex's rollout is tailed for telemetry too
    transcript = fields.get("transcript_path") or fields.get("transcriptPath", "")  # Copilot's
    if transcript:
        path = _path(transcript)
        if path and path != pane.options.get("@agent_transcript", ""):
            extras.append(E("@agent_transcript", path))
    settled = plan.state in (states.WORKING, states.IDLE)
    if plan.state == states.BLOCKED:
        rid = write.safe_id(fields.get("request_id") or fields.get("requestID") or "")
        if rid:
            extras.append(E("@agent_permission_request", rid))
        qid = write.safe_id(fields.get("question_id", ""))
        if qid:
            extras.append(E("@agent_question_request", qid))
        tool = _label(fields.get("tool_name", ""))
        if tool:
            call = write.safe_id(fields.get("tool_use_id") or fields.get("prompt_id") or "")
            summary, full = _pending(payload, tool)
            extras.append(E("@agent_pending_tool", tool))
            extras.append(E("@agent_pending_call", call))
            extras.append(E("@agent_pending_summary", summary))
            if full or pane.options.get("@agent_pending_input"):
                extras.append(E("@agent_pending_input", full))
    elif settled:
        for key in ("@agent_permission_request", "@agent_question_request",
                    "@agent_pending_tool", "@agent_pending_call", "@agent_pending_summary",
                    "@agent_pending_input", "@tma_reply_verdict"):
            if pane.options.get(key):
                extras.append(E(key, ""))
    return extras


#: The most a pane option holds of a pending call's input (its compact JSON, in bytes).
PENDING_INPUT_MAX = 4096
_CUT = 256  # a string value over the cap is cut to this many characters


def _pending(payload: str, tool: str) -> tuple[str, str]:
    """(one line naming what the pending call would do, its full input for the card).

    The input travels as base64 of its compact JSON, so no byte of it can reach a tmux
    format; over PENDING_INPUT_MAX the long string values are cut (marked with …) and,
    when even that does not fit, nothing is kept."""
    import json

    try:
        doc = json.loads(payload)
    except ValueError:
        return summary_text(tool), ""
    ti = doc.get("tool_input") if isinstance(doc, dict) else None
    if not isinstance(ti, dict):
        return summary_text(tool), ""
    summary = summary_text(tool)
    for key in ("command", "file_path", "path", "url", "description", "plan"):
        value = ti.get(key)
        if isinstance(value, str) and value:
            summary = summary_text(f"{tool}: {value}")
            break
    return summary, pending_input(ti)


def pending_input(ti: dict) -> str:
    """A pending call's input as the @agent_pending_input value ("" when it cannot fit)."""
    import binascii
    import json

    if not ti:
        return ""
    raw = json.dumps(ti, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")
    if len(raw) > PENDING_INPUT_MAX:
        cut = {k: v[:_CUT] + "…" if isinstance(v, str) and len(v) > _CUT else v
               for k, v in ti.items()}
        raw = json.dumps(cut, separators=(",", ":"), ensure_ascii=False).encode("utf-8",
                                                                                "replace")
        if len(raw) > PENDING_INPUT_MAX:
            return ""
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def _notify_due(cfg, plan) -> bool:
    from tma.runtime.notify import gate as notify_gate

    return notify_gate.due(cfg, plan)


def _on_screen(cfg, pane_id: str, watchers, now: int) -> bool:
    from tma.runtime.notify import gate as notify_gate

    return notify_gate.on_screen(cfg, pane_id, watchers, now)


def _dispatch(server, cfg, table, pane, plan, decision, prev, session, now,
              clients: list[str] | None = None) -> None:
    from tma.runtime import handoff
    from tma.runtime.notify import dispatch as notify, gate as notify_gate, log as notify_log
    from tma.runtime.notify.note import Note

    # the server the hook talks to, keyed as its daemon keys it: its doctor reports
    # what this ring fails
    notify_log.scope_to(handoff.tmux_socket(
        {"socket-name": server.socket_name} if server.socket_name else
        {"socket-path": server.socket_path} if server.socket_path else {}))
    trigger = "blocked" if plan.state == states.BLOCKED else "done"
    note = Note.for_pane(trigger, table.name, pane, detail=plan.detail,
                         session=session or (prev.session if prev else ""))
    if notify_gate.last_sentence(cfg):  # the transcript room only where the config opts in
        from tma.runtime.notify import said

        note = said.fill(cfg, note, pane, os.environ)
    notify.dispatch(server, cfg, note, now=now, clients=clients)


def _context(server, table, pane, prev, payload: str, session: str, now: int, out) -> None:
    """The telemetry lane: context %, tokens, model, quota, cost — never stamped_at."""
    from tma.core import telemetry

    if not table.context_format:
        return
    try:
        reading = telemetry.parse_context(table.context_format, payload, now_ms=now)
    except telemetry.UnknownFormat:
        return
    owner = prev.session if prev is not None else ""
    if reading.session and owner and reading.session != owner:
        return  # a subagent's (or another session's) statusline: not this pane's gauge
    lines = telemetry_lines(pane.pane_id, reading, now)
    if lines:
        server.source(lines)
        out.wrote = True


def telemetry_lines(pane_id: str, reading, now: int) -> list[str]:
    """Context/quota/cost writes under the evidence-time guard of each lane."""
    from tma.tmux import telemetry_write as tw

    return tw.lines(pane_id, reading, now)


def hold_for_verdict(server, pane_id: str, hold_ms: int) -> str | None:
    """Claude's reply lane: mint a request id, wait for `tma act approve|deny` to hand
    a verdict over, and return Claude's decision object (None: print nothing)."""
    import time

    rid = "tma-" + os.urandom(6).hex()
    server.source([write.set_plain(pane_id, "@agent_permission_request", rid) + " ; "
                   + write.set_plain(pane_id, "@tma_reply_holder", str(os.getpid()))])
    values = read.Values(pane_id, ("@agent_permission_request", "@tma_reply_verdict",
                                   "@agent_state"))
    deadline = time.monotonic() + hold_ms / 1000
    verdict = None
    try:
        while time.monotonic() < deadline:
            request, answer, state = values.read(server) or ("", "", "")
            if request != rid or state != states.BLOCKED:
                return None  # answered at the keyboard (the next hook cleared it)
            vid, _, word = answer.partition(" ")
            if vid == rid and word in ("allow", "deny"):
                verdict = word
                break
            time.sleep(REPLY_POLL_S)
    finally:
        server.source([" ; ".join(
            write.set_plain(pane_id, k, "") for k in
            ("@agent_permission_request", "@tma_reply_holder", "@tma_reply_verdict"))])
    if verdict is None:
        return None
    decision = {"behavior": verdict}
    if verdict == "deny":
        decision["message"] = "Denied from tma"
    import json

    return json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                              "decision": decision}})

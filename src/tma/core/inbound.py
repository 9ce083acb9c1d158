"""A host's frames made data: every response a device reads from a host passes here
before anything else sees it (tma.runtime.fleet.link calls `response` on each parsed frame).

tma.core.proto checks a frame's shape; this checks what a shape cannot: a pane id must
be `%N` (a row whose pane is not is refused, named in the problems), every string is
cleaned of control characters and cut to a bound (tma.core.untrusted), numbers are kept
in their range, and a snapshot holds at most MAX_ROWS rows (the surplus is dropped and
named). A frame that cannot be made safe as a whole (an edge, a card or a receipt whose
pane is not a pane id) raises `Refused`, which the link reads as a bad frame.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math

from tma.core import proto
from tma.core.untrusted import block, clean, opt_clean, pane_id_ok, token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The most rows one host's snapshot may carry here (a host with more agent panes than
#: this is not a host: the rest are dropped, and the problem names how many).
MAX_ROWS = 512
MAX_RECEIPTS = 1024
MAX_OPTIONS = 32
MAX_QUESTIONS = 16
MAX_EVENTS = 1000
#: A pending call's input: how deep, how many items, how long a string.
JSON_DEPTH = 6
JSON_ITEMS = 128
#: The largest epoch-ms value taken (year 2255); a bigger or negative one reads as 0.
MAX_MS = 1 << 53

# length bounds, in characters
NAME = 128  # agent, host, server, tool, lane, ...
SHORT = 64  # version, outcome, reason, code, window, scope
TEXT = 256  # locator, session, repo, branch, ids, labels
LONG = 1024  # summaries, messages, descriptions, paths
BODY = 4096  # a question's text, a pending call's value
EVENT_BODY = 1 << 20  # a transcript event's text (an `event` answer; its lines kept)


class Refused(Exception):
    """A frame that cannot be made safe (its message names why)."""


def response(frame: proto.Frame) -> tuple[proto.Frame, list[str]]:
    """The frame made safe, and what was refused or cut from it (for a person)."""
    fix = _FIXES.get(type(frame))
    if fix is None:
        return frame, []
    problems: list[str] = []
    return fix(frame, problems), problems


def _pane(value: str, what: str) -> str:
    if not pane_id_ok(value):
        raise Refused(f"{what} names pane {clean(value, 24)!r}, not a pane id like %3")
    return value


def _ms(value: int | None) -> int:
    return value if value is not None and 0 <= value <= MAX_MS else 0


def _opt_ms(value: int | None) -> int | None:
    return value if value is not None and 0 <= value <= MAX_MS else None


def _count(value: int | None, top: int = MAX_MS) -> int | None:
    return value if value is not None and 0 <= value <= top else None


def _hello(f: proto.HelloResponse, problems: list[str]) -> proto.HelloResponse:
    scopes = tuple(dict.fromkeys(clean(s, SHORT) for s in f.scopes[:16]))
    return f.replace(host=clean(f.host, TEXT), tma_version=clean(f.tma_version, SHORT),
                     reconcile_interval_ms=min(max(f.reconcile_interval_ms, 0), 3_600_000),
                     scopes=scopes)


def row(r: proto.FleetRow) -> proto.FleetRow:
    """One snapshot row made safe (its pane already checked)."""
    quota = r.quota
    if quota is not None:
        quota = (None if not 0 <= quota.pct <= 100 else
                 proto.Quota(quota.pct, clean(quota.window, SHORT), _opt_ms(quota.resets_at_ms)))
    cost = r.cost_usd
    if cost is not None and not (math.isfinite(cost) and 0 <= cost < 1e9):
        cost = None
    return r.replace(
        agent=clean(r.agent, NAME), detail=token(r.detail),
        since=_ms(r.since), since_ms=_ms(r.since_ms), episode_ms=_ms(r.episode_ms),
        locator=clean(r.locator, TEXT), session=opt_clean(r.session, TEXT),
        transcript=opt_clean(r.transcript, LONG),
        permission_request=opt_clean(r.permission_request, TEXT),
        stamped_at_ms=_opt_ms(r.stamped_at_ms), context=_count(r.context, 100),
        context_at_ms=_opt_ms(r.context_at_ms), tokens=_count(r.tokens), quota=quota,
        cost_usd=cost, repo=opt_clean(r.repo, TEXT), branch=opt_clean(r.branch, TEXT),
        pending_tool=opt_clean(r.pending_tool, NAME),
        pending_call=opt_clean(r.pending_call, BODY),
        pending_summary=opt_clean(r.pending_summary, LONG),
        server=clean(r.server, LONG), host=clean(r.host, TEXT))


def _snapshot(f: proto.Snapshot, problems: list[str]) -> proto.Snapshot:
    rows, bad, first = [], 0, ""
    for r in f.agents:
        if not pane_id_ok(r.pane):
            bad += 1
            first = first or clean(r.pane, 24)
            continue
        rows.append(r)
    if bad:
        problems.append(f"refused {bad} row{'s' if bad != 1 else ''} whose pane is not a "
                        f"pane id like %3 (the first: {first!r})")
    if len(rows) > MAX_ROWS:
        problems.append(f"the snapshot has {len(rows)} rows: kept the first {MAX_ROWS}")
        rows = rows[:MAX_ROWS]
    seen: set[str] = set()
    out = []
    for r in rows:
        if r.pane in seen:
            continue  # one row a pane: a repeat would ring or count twice
        seen.add(r.pane)
        out.append(row(r))
    if len(out) < len(rows):
        problems.append(f"dropped {len(rows) - len(out)} repeated pane rows")
    return f.replace(agents=tuple(out))


def _edge(f: proto.Edge, problems: list[str]) -> proto.Edge:
    return f.replace(at_ms=_ms(f.at_ms), pane=_pane(f.pane, "an edge"),
                     agent=clean(f.agent, NAME), detail=token(f.detail),
                     locator=clean(f.locator, TEXT), repo=opt_clean(f.repo, TEXT),
                     branch=opt_clean(f.branch, TEXT), host=opt_clean(f.host, TEXT))


def _binder(b: proto.Binder) -> proto.Binder:
    return proto.Binder(_ms(b.expect_episode_ms),
                        opt_clean(b.expect_permission_request, TEXT))


def json_value(value: Any, depth: int = 0) -> Any:
    """A JSON value from a host, bounded: strings cleaned, containers cut, depth capped."""
    if isinstance(value, str):
        return clean(value, BODY)
    if isinstance(value, dict):
        if depth >= JSON_DEPTH:
            return {}
        return {clean(str(k), TEXT): json_value(v, depth + 1)
                for k, v in list(value.items())[:JSON_ITEMS]}
    if isinstance(value, list):
        if depth >= JSON_DEPTH:
            return []
        return [json_value(v, depth + 1) for v in value[:JSON_ITEMS]]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _permission(f: proto.PermissionCard, problems: list[str]) -> proto.PermissionCard:
    options = tuple(proto.CardOption(clean(o.kind, SHORT), clean(o.name, TEXT),
                                     opt_clean(o.option_id, SHORT))
                    for o in f.options[:MAX_OPTIONS])
    call = f.pending_call
    if call is not None:
        call = proto.PendingCall(clean(call.tool, NAME), json_value(call.input),
                                 clean(call.call_id, TEXT))
    return f.replace(pane=_pane(f.pane, "a card"), agent=clean(f.agent, NAME),
                     lane=clean(f.lane, SHORT), options=options,
                     extraction=clean(f.extraction, SHORT), pending_call=call,
                     binder=_binder(f.binder))


def _question(f: proto.QuestionCard, problems: list[str]) -> proto.QuestionCard:
    questions = tuple(
        proto.Question(clean(q.question, BODY), clean(q.header, TEXT),
                       tuple(proto.QuestionOption(clean(o.label, TEXT),
                                                  clean(o.description, LONG))
                             for o in q.options[:MAX_OPTIONS]),
                       q.multiple, q.custom)
        for q in f.questions[:MAX_QUESTIONS])
    return f.replace(pane=_pane(f.pane, "a card"), agent=clean(f.agent, NAME),
                     request_id=clean(f.request_id, TEXT), questions=questions,
                     binder=_binder(f.binder))


def _informational(f: proto.InformationalCard, problems: list[str]) -> proto.InformationalCard:
    return f.replace(detail=token(f.detail) or "unknown", headline=clean(f.headline, LONG))


def receipt_row(r: proto.ReceiptRow) -> proto.ReceiptRow:
    return r.replace(slot=clean(r.slot, TEXT), pane=_pane(r.pane, "a receipt"),
                     action=clean(r.action, SHORT), outcome=clean(r.outcome, SHORT),
                     reason=opt_clean(r.reason, SHORT), exit_code=r.exit_code
                     if -1 <= r.exit_code <= 255 else 1, device=opt_clean(r.device, TEXT),
                     at_ms=_ms(r.at_ms), message=opt_clean(r.message, LONG))


def _receipt(f: proto.Receipt, problems: list[str]) -> proto.Receipt:
    return f.replace(receipt=receipt_row(f.receipt))


def _receipts(f: proto.Receipts, problems: list[str]) -> proto.Receipts:
    out = []
    for r in f.receipts[:MAX_RECEIPTS]:
        try:
            out.append(receipt_row(r))
        except Refused as exc:
            problems.append(str(exc))
    return f.replace(receipts=tuple(out))


def _header(h: proto.EventHeader) -> proto.EventHeader:
    body = h.body
    if body is not None:
        body = proto.EventBody(clean(body.kind, SHORT), block(body.text, EVENT_BODY))
    return h.replace(cursor=clean(h.cursor, TEXT), kind=clean(h.kind, SHORT),
                     data=json_value(h.data), ts=opt_clean(h.ts, SHORT),
                     preview=opt_clean(h.preview, LONG), body=body)


def _window(f: proto.Window, problems: list[str]) -> proto.Window:
    s = f.session
    if s is not None:
        s = proto.SessionMeta(clean(s.agent, NAME), clean(s.session_id, TEXT),
                              clean(s.cwd, LONG), clean(s.version, SHORT),
                              clean(s.model, NAME))
    return f.replace(pane=_pane(f.pane, "a window"), agent=clean(f.agent, NAME), session=s,
                     older=opt_clean(f.older, TEXT),
                     unknown=_count(f.unknown) or 0,
                     events=tuple(_header(e) for e in f.events[:MAX_EVENTS]))


def _event(f: proto.Event, problems: list[str]) -> proto.Event:
    return f.replace(header=_header(f.header))


def _error(f: proto.Error, problems: list[str]) -> proto.Error:
    return f.replace(code=clean(f.code, SHORT), message=clean(f.message, LONG))


_FIXES: dict[type, Any] = {
    proto.HelloResponse: _hello, proto.Snapshot: _snapshot, proto.Edge: _edge,
    proto.PermissionCard: _permission, proto.QuestionCard: _question,
    proto.InformationalCard: _informational, proto.Receipt: _receipt,
    proto.Receipts: _receipts, proto.Window: _window, proto.Event: _event,
    proto.Error: _error,
}

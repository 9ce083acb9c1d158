"""The hook decision: one agent event + the stored stamp -> what to write.

Pure. `tma event` (runtime) reads the pane, calls `decide`, and hands the plan to
the one write renderer in `tma.tmux.write`.
"""

from __future__ import annotations

from tma.core import plan as P, states
from tma.core.codec import Stamp
from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # decide() takes a Manifest or a HookTable (same two methods)
    from tma.core.hookmap import Hook
    from tma.core.manifest import HookMapping, Manifest

SUBAGENT_START = "SubagentStart"
SUBAGENT_STOP = "SubagentStop"

STAMP = "stamp"
DEREGISTER = "deregister"
SUBAGENTS = "subagents"
IGNORE = "ignore"
UNMAPPED = "unmapped"


class EventDecision(Record):
    """kind; the plan; the mapping that matched; session: the id to record ("" = leave
    alone); replace_session: a lifecycle start replaces the stored id; record_turn:
    write @agent_turn_at = event time; subagents: the new @agent_subagents."""

    kind: str = ""
    plan: P.Plan | None = None
    mapping: HookMapping | Hook | None = None
    session: str = ""
    replace_session: bool = False
    record_turn: bool = False
    subagents: tuple[str, ...] = ()
    reason: str = ""


def decide(
    prev: Stamp | None,
    manifest: Manifest,  # or a tma.core.hookmap.HookTable
    event: str,
    payload: str,
    session: str,
    now: int,
) -> EventDecision:
    if event in (SUBAGENT_START, SUBAGENT_STOP):
        if not session:
            return EventDecision(IGNORE, reason="subagent event without a session id")
        current = list(prev.subagents) if prev is not None else []
        if event == SUBAGENT_START and session not in current:
            current.append(session)
        elif event == SUBAGENT_STOP and session in current:
            current.remove(session)
        return EventDecision(SUBAGENTS, subagents=tuple(current), reason=event)

    mapping = manifest.map_event(event, payload)
    if mapping is None:
        return EventDecision(UNMAPPED, reason=f"no [[hooks.map]] entry for {event!r}")

    # While subagents live, only the pane's own session may move its state.
    if prev is not None and prev.subagents:
        if not session or not prev.session or session != prev.session:
            return EventDecision(IGNORE, mapping=mapping,
                                 reason="event from a session that does not own the pane")

    guard = P.Guard(P.HOOK_ARBITRATE, at=now)
    if mapping.lifecycle == states.LIFECYCLE_END:
        return EventDecision(DEREGISTER, plan=P.remove("lifecycle end"), mapping=mapping,
                             reason="lifecycle end")
    if mapping.lifecycle == states.LIFECYCLE_START:
        plan = P.Plan(P.PUBLISH, state=states.IDLE, source=states.SOURCE_HOOK, evidence_at=now,
                      guard=guard, reason="lifecycle start registers the pane", label=event)
        return EventDecision(STAMP, plan=plan, mapping=mapping, session=session,
                             replace_session=bool(session), reason="lifecycle start")

    prev_state = prev.state if prev is not None else None
    if mapping.state == states.BLOCKED:
        raise_mark = prev_state != states.BLOCKED
    elif mapping.state == states.IDLE:
        mark_down = prev is None or not prev.attention
        raise_mark = prev_state == states.WORKING or (mapping.turn_end and mark_down)
    else:
        raise_mark = False
    record_turn = mapping.turn_end and mapping.state == states.IDLE and raise_mark
    detail = states.safe_detail(manifest.normalize_detail(mapping.detail)) if mapping.detail else ""
    if (mapping.state == states.BLOCKED and detail == states.PERMISSION and prev is not None
            and prev.state == states.BLOCKED and prev.detail not in ("", states.PERMISSION)):
        # Blocked to blocked is the same pending dialog reported twice. Claude sends its
        # generic Notification (permission_prompt) some seconds after the PermissionRequest
        # that named a plan or a question, and that must not turn it into a permission
        # that approve would answer.
        detail = prev.detail
    plan = P.Plan(P.PUBLISH, state=mapping.state, detail=detail, source=states.SOURCE_HOOK,
                  evidence_at=now, guard=guard, set_attention=raise_mark,
                  reason=f"hook event {event}", label=event)
    keep_session = prev is not None and bool(prev.session)
    return EventDecision(STAMP, plan=plan, mapping=mapping,
                         session="" if keep_session else session,
                         record_turn=record_turn, reason=f"hook event {event}")

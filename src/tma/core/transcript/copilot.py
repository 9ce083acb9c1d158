"""GitHub Copilot CLI's session events (1.0.102), one record at a time (pure).

Where: `$COPILOT_HOME or ~/.copilot` / `session-state/<session id>/events.jsonl` (beside it
`workspace.yaml`: the session's cwd, name and times). The directory is the session's id,
which every hook payload carries (`sessionId`); `agentStop` names the file itself
(`transcriptPath`, which the hook intake stamps as the pane's transcript). The header's
`version` is the log's format (1) and `copilotVersion` the CLI's.

Every record is `{type, data, id, timestamp, parentId}`, appended as it happens:

- `session.start`: the header (`sessionId`, `copilotVersion`, `selectedModel`,
  `context.cwd`): `session_meta`; `session.resume` (a resumed session's restart) too;
- `session.model_change`: the model from here on, a `session_meta` event naming it only
  (not the session a window names: `session` is the header's alone);
- `user.message`: a prompt (`content` as typed; `transformedContent`, what the model got
  with the CLI's date prefix, is not shown; `attachments` counted);
- `system.message`: the system prompt the CLI sends with each prompt (bookkeeping);
- `assistant.message`: one model reply: its reasoning (`reasoningText`: `thinking`), its
  text (`content`, when not empty) and its `toolRequests` (a `tool_call` each, in order);
- `tool.execution_start`: the call starting (bookkeeping: the call is the message's);
- `tool.execution_complete`: the call's result (`success`; `result.content`, or
  `error.message` for a failed call): `tool_result`;
- `permission.requested`: the approval the CLI asks for (`permissionRequest.kind`, e.g.
  `shell`, `write`, and its `toolCallId`): `permission_request`;
- `permission.completed`: the answer. `cancelled` (Esc at the dialog: the turn is
  aborted, no `tool.execution_complete` is ever written for the call) is the call's only
  outcome in the file, so it is that call's `tool_result`, `error`, with the answer's kind
  and reason as text. Any other answer is bookkeeping: approved, the call runs; denied
  (`denied-interactively-by-user`, "No, and tell Copilot…" with its feedback), the CLI
  answers the model with a failed `tool.execution_complete` (`error.code: denied`), which
  is the result;
- `abort`: the user stopped the turn (Esc at a dialog, Esc Esc while it streams): a
  `turn_boundary` end, `interrupted`, its `reason` as preview;
- `session.error`: a model call that failed for good (`message`, `statusCode`): a
  `turn_boundary` end whose reason is `error`, the message as preview;
- `session.usage_record`: one model call's tokens (`usage.inputTokens`, `outputTokens`):
  `usage`;
- `session.compaction_complete`: the history replaced by a summary (`summaryContent`): the
  `compaction`; `session.compaction_start`, `session.truncation`: bookkeeping;
- `assistant.turn_start` / `assistant.turn_end` (one model step each, several per prompt
  when tools run), `session.shutdown` (the exit's accounting), `session.info`,
  `session.warning`, `session.idle`, `session.title_changed`, `session.mode_changed`,
  `session.plan_changed`, `session.workspace_file_changed`, `session.snapshot_rewind`,
  `session.handoff`, `assistant.intent`, `assistant.reasoning`, `tool.user_requested`,
  `tool.execution_partial_result`, `tool.execution_progress`, `skill.invoked`,
  `hook.start`, `hook.end`, `subagent.*`: bookkeeping (their text, when they have one, as
  preview);
- `model.turn_started`, `model.model_call_started`, `model.model_call_success`,
  `model.message`, `model.response`, `model.turn_ended`, `model.messages_snapshot`: the
  compaction's own model call, written between its start and its end (bookkeeping).

The kinds a recording showed are in tests/fixtures/transcripts/copilot-1.0.102; the others
are named from the CLI's published session-event types (the Copilot SDK's), not recorded.
"""

from __future__ import annotations

from tma.core.transcript import fields
from tma.core.transcript.event import Event, make, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "copilot"

_BOOKKEEPING = frozenset({
    "system.message", "tool.execution_start", "assistant.turn_start", "assistant.turn_end",
    "session.shutdown", "session.info", "session.warning", "session.idle",
    "session.title_changed", "session.mode_changed", "session.plan_changed",
    "session.workspace_file_changed", "session.snapshot_rewind", "session.handoff",
    "session.compaction_start", "session.truncation", "session.usage_info",
    "assistant.intent", "assistant.reasoning", "tool.user_requested",
    "tool.execution_partial_result", "tool.execution_progress", "skill.invoked",
    "hook.start", "hook.end", "subagent.started", "subagent.completed", "subagent.failed",
    "subagent.selected", "subagent.deselected",
    # the compaction's own model call (its summary is the compaction_complete's)
    "model.turn_started", "model.model_call_started", "model.model_call_success",
    "model.model_call_failure", "model.message", "model.response", "model.turn_ended",
    "model.messages_snapshot",
})


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Where session `session_id`'s events are: one place (the session's own directory
    under COPILOT_HOME, else ~/.copilot), whatever the working directory."""
    base = env.get("COPILOT_HOME") or f"{(env.get('HOME') or '~').rstrip('/')}/.copilot"
    return [f"{base.rstrip('/')}/session-state/{session_id}/events.jsonl"]


def session(record: dict[str, object]) -> Event | None:
    kind = record.get("type")
    data = record.get("data")
    if not isinstance(data, dict):
        return None
    if kind in ("session.start", "session.resume"):
        return _meta(record, data)
    return None  # a model change names no session: the window keeps the header's


def events(record: dict[str, object]) -> list[Event]:
    kind = record.get("type")
    ts = fields.string(record.get("timestamp"))
    if not isinstance(kind, str):
        return [unknown("{" + ",".join(sorted(record)) + "}", ts)]
    data = record.get("data")
    if not isinstance(data, dict):
        return [unknown(kind, ts)]
    if kind in ("session.start", "session.resume"):
        return [_meta(record, data)]
    if kind == "session.model_change":
        return [_model(record, data)]
    if kind == "user.message":
        return [_user(data, ts)]
    if kind == "assistant.message":
        return _assistant(data, ts)
    if kind == "tool.execution_complete":
        return [_result(data, ts)]
    if kind == "permission.requested":
        return [_asked(data, ts)]
    if kind == "permission.completed":
        return [_answered(data, ts, kind)]
    if kind == "abort":
        said = fields.string(data.get("reason"))
        return [make("turn_boundary", ts=ts, preview=fields.preview(said),
                     boundary="end", reason="interrupted")]
    if kind == "session.error":
        said = fields.string(data.get("message")) or ""
        return [make("turn_boundary", ts=ts, preview=fields.preview(said),
                     body=fields.text_body(said) if said else None, boundary="end",
                     reason="error")]
    if kind == "session.usage_record":
        return [_usage(data, ts)]
    if kind == "session.compaction_complete":
        return [_compaction(data, ts, kind)]
    if kind in _BOOKKEEPING:
        said = fields.string(data.get("message")) or fields.string(data.get("title"))
        return [make("bookkeeping", ts=ts, preview=fields.preview(said), type_name=kind)]
    return [unknown(kind, ts)]


def _meta(record: dict[str, object], data: dict[str, object]) -> Event:
    context = data.get("context")
    cwd = fields.string(context.get("cwd")) if isinstance(context, dict) else None
    return make("session_meta", ts=fields.string(data.get("startTime"))
                or fields.string(record.get("timestamp")), agent=NAME,
                session_id=fields.string(data.get("sessionId")), cwd=cwd,
                version=fields.string(data.get("copilotVersion")),
                model=fields.string(data.get("selectedModel")))


def _model(record: dict[str, object], data: dict[str, object]) -> Event:
    return make("session_meta", ts=fields.string(record.get("timestamp")), agent=NAME,
                session_id=None, cwd=None, version=None,
                model=fields.string(data.get("newModel")))


def _user(data: dict[str, object], ts: str | None) -> Event:
    text = fields.string(data.get("content")) or ""
    attached = data.get("attachments")
    return make("user_message", ts=ts, preview=fields.preview(text), body=fields.text_body(text),
                bytes=fields.size(text),
                attachments=len(attached) if isinstance(attached, list) else 0)


def _assistant(data: dict[str, object], ts: str | None) -> list[Event]:
    out: list[Event] = []
    reasoning = fields.string(data.get("reasoningText"))
    if reasoning:
        out.append(make("thinking", ts=ts, preview=fields.preview(reasoning),
                        body=fields.text_body(reasoning), bytes=fields.size(reasoning),
                        redacted=False))
    elif fields.string(data.get("reasoningOpaque")):
        out.append(make("thinking", ts=ts, bytes=0, redacted=True))
    text = fields.string(data.get("content")) or ""
    if text.strip():
        out.append(make("assistant_text", ts=ts, preview=fields.preview(text),
                        body=fields.text_body(text), bytes=fields.size(text)))
    calls = data.get("toolRequests")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            args = call.get("arguments")
            out.append(make("tool_call", ts=ts, preview=fields.arg_preview(args),
                            body=fields.json_body(args) if args is not None else None,
                            name=fields.string(call.get("name")) or "?",
                            call_id=fields.string(call.get("toolCallId")),
                            arg_keys=list(args) if isinstance(args, dict) else [],
                            bytes=fields.size(fields.compact(args)) if args is not None else 0))
    if not out:  # an empty reply (no text, no call): nothing it said
        out.append(make("bookkeeping", ts=ts, type_name="assistant.message"))
    return out


def _result(data: dict[str, object], ts: str | None) -> Event:
    ok = data.get("success") is True
    text = ""
    result = data.get("result")
    if isinstance(result, dict):
        text = fields.string(result.get("content")) or ""
    error = data.get("error")
    if not text and isinstance(error, dict):
        text = fields.string(error.get("message")) or ""
    elif not text and isinstance(error, str):
        text = error
    return make("tool_result", ts=ts, preview=fields.preview(text), body=fields.text_body(text),
                call_id=fields.string(data.get("toolCallId")), status="ok" if ok else "error",
                bytes=fields.size(text))


def _asked(data: dict[str, object], ts: str | None) -> Event:
    asked = data.get("permissionRequest")
    asked = asked if isinstance(asked, dict) else {}
    said = fields.string(asked.get("fullCommandText")) or fields.string(asked.get("intention")) \
        or fields.string(asked.get("fileName")) or fields.string(asked.get("url"))
    return make("permission_request", ts=ts, preview=fields.preview(said),
                tool=fields.string(asked.get("kind")) or "?",
                call_id=fields.string(asked.get("toolCallId")))


def _answered(data: dict[str, object], ts: str | None, kind: str) -> Event:
    result = data.get("result")
    result = result if isinstance(result, dict) else {}
    how = fields.string(result.get("kind")) or "?"
    if how != "cancelled":  # the call's tool.execution_complete says how it ended
        return make("bookkeeping", ts=ts, preview=fields.preview(how), type_name=kind)
    reason = fields.string(result.get("reason")) or fields.string(result.get("feedback"))
    text = f"{how}: {reason}" if reason else how
    return make("tool_result", ts=ts, preview=fields.preview(text), body=fields.text_body(text),
                call_id=fields.string(data.get("toolCallId")), status="error",
                bytes=fields.size(text))


def _usage(data: dict[str, object], ts: str | None) -> Event:
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    given = fields.integer(usage.get("inputTokens"))
    made = fields.integer(usage.get("outputTokens"))
    total = given + made if given is not None and made is not None else None
    return make("usage", ts=ts, input=given, output=made, total=total, context_window=None,
                cost_usd=None)


def _compaction(data: dict[str, object], ts: str | None, kind: str) -> Event:
    if data.get("success") is False:
        said = fields.string(data.get("error"))
        return make("bookkeeping", ts=ts, preview=fields.preview(said), type_name=kind)
    summary = fields.string(data.get("summaryContent")) or ""
    return make("compaction", ts=ts, preview=fields.preview(summary),
                body=fields.text_body(summary) if summary else None, compaction="summary")

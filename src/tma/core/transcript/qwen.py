"""Qwen Code's chat recording (0.24.4), one record at a time (pure).

Where: `<runtime dir>/projects/<cwd, every character not A-Z a-z 0-9 as ->/chats/<session
id>.jsonl`, the runtime dir `$QWEN_RUNTIME_DIR` when that is set, else `$QWEN_HOME`, else
`~/.qwen` (a settings file may move it too; `candidates` cannot see that). The hooks carry
the file's path (`transcript_path`) and the session id. Qwen Code is a Gemini CLI fork, but
this store is its own: not Gemini's rewritten session file but an append-only log of
Claude-like envelopes (`uuid`, `parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`,
`version`) around Gemini-shaped content (`message.parts`: `text`, `thought`,
`functionCall`, `functionResponse`). Every record names the session, its directory and the
CLI's version, so `session` answers for any of them.

Records, by `type` (and `subtype`):

- `user`: a prompt (`user_message`; `systemPayload.displayText`, what was typed before the
  CLI expanded `@file`s, when there is one; inline and file parts counted as attachments);
  `mid_turn_user_message` a prompt typed while tools ran (the same); `goal_runtime`,
  `cron`, `notification`: the CLI's own messages to the model (bookkeeping, their text as
  preview);
- `assistant`: one model reply, its parts in order (`thought` parts: `thinking`; `text`:
  `assistant_text`; `functionCall`: `tool_call`, named by its `id`), then its
  `usageMetadata` (`usage`, `contextWindowSize` its window);
- `tool_result`: the results the CLI hands back, a `tool_result` per `functionResponse`
  (same `id` as its call; `response.output`, or `response.error`); `toolCallResult.status`
  says how it went: `success` ok, anything else (`error`, `cancelled` when the user
  denied it at the dialog) error;
- `system`, by `subtype`: `chat_compression` the history replaced by a summary (the
  `compaction`, the summary the first text of `compressedHistory`); `turn_result` a turn's
  end (`state` completed, cancelled or error: a `turn_boundary` end); `ui_telemetry` the
  CLI's metrics: `qwen-code.api_error` (a model call that failed for good: a
  `turn_boundary` end, reason `error`, the message as preview; a try the CLI retries
  leaves no record), any other bookkeeping; `session_model` the model from here on (a `session_meta` naming
  it); `custom_title` the session's name, `slash_command` a command typed (`/compress`),
  and `attribution_snapshot`, `file_history_snapshot`, `rewind`, `branch_checkpoint`,
  `at_command`, `user_text_elements`, `omni_recall`, `parent_session`, `session_source`,
  `session_sources_snapshot`, `session_artifact_event`, `session_artifact_snapshot`,
  `goal_state`, `goal_turn_end`, `background_task_completed`, `realtime_message`:
  bookkeeping.

The kinds a recording showed are in tests/fixtures/transcripts/qwen-0.24.4; the others are
named from 0.24.4's ChatRecordingService (its bundled source), not recorded.
"""

from __future__ import annotations

import re

from tma.core.transcript import fields
from tma.core.transcript.event import Event, make, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "qwen"

_SYSTEM_BOOKKEEPING = frozenset({
    "ui_telemetry", "custom_title", "slash_command", "attribution_snapshot",
    "file_history_snapshot", "rewind", "branch_checkpoint", "at_command", "user_text_elements",
    "omni_recall", "parent_session", "session_source", "session_sources_snapshot",
    "session_artifact_event", "session_artifact_snapshot", "goal_state", "goal_turn_end",
    "background_task_completed", "realtime_message",
})
_USER_BOOKKEEPING = frozenset({"goal_runtime", "cron", "notification"})
_TURN_END = {"completed": "completed", "cancelled": "interrupted", "error": "error"}


def slug(cwd: str) -> str:
    """Qwen Code's project directory name for a working directory (sanitizeCwd)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Where session `session_id` started in `cwd` is, most likely first: its project's
    chats, then any project's (a session resumed from another directory)."""
    base = env.get("QWEN_RUNTIME_DIR") or env.get("QWEN_HOME") \
        or f"{(env.get('HOME') or '~').rstrip('/')}/.qwen"
    base = fields.expand_home(base, env).rstrip("/")
    name = f"{session_id}.jsonl"
    near = [f"{base}/projects/{slug(cwd)}/chats/{name}"] if cwd else []
    return near + [f"{base}/projects/*/chats/{name}"]


def session(record: dict[str, object]) -> Event | None:
    sid = fields.string(record.get("sessionId"))
    if sid is None or not isinstance(record.get("type"), str):
        return None
    return make("session_meta", ts=fields.string(record.get("timestamp")), agent=NAME,
                session_id=sid, cwd=fields.string(record.get("cwd")),
                version=fields.string(record.get("version")),
                model=fields.string(record.get("model")))


def events(record: dict[str, object]) -> list[Event]:
    kind = record.get("type")
    ts = fields.string(record.get("timestamp"))
    if not isinstance(kind, str):
        return [unknown("{" + ",".join(sorted(record)) + "}", ts)]
    subtype = record.get("subtype")
    if subtype is not None and not isinstance(subtype, str):
        return [unknown(kind, ts)]
    if kind == "user":
        if subtype is None or subtype == "mid_turn_user_message":
            return [_user(record, ts)]
        if subtype in _USER_BOOKKEEPING:
            text, _ = _parts(_message_parts(record))
            return [make("bookkeeping", ts=ts, preview=fields.preview(text),
                         type_name=f"user.{subtype}")]
        return [unknown(f"user.{subtype}", ts)]
    if kind == "assistant" and subtype is None:
        return _assistant(record, ts)
    if kind == "tool_result" and subtype is None:
        return _results(record, ts)
    if kind == "system" and subtype is not None:
        return _system(record, subtype, ts)
    return [unknown(f"{kind}.{subtype}" if subtype else kind, ts)]


def _message_parts(record: dict[str, object]) -> list[object]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return parts if isinstance(parts, list) else []


_parts = fields.parts_text  # Gemini's parts: the text (no thoughts), the data/file count


def _user(record: dict[str, object], ts: str | None) -> Event:
    text, attachments = _parts(_message_parts(record))
    payload = record.get("systemPayload")
    shown = fields.string(payload.get("displayText")) if isinstance(payload, dict) else None
    if shown:
        text = shown
    return make("user_message", ts=ts, preview=fields.preview(text), body=fields.text_body(text),
                bytes=fields.size(text), attachments=attachments)


def _assistant(record: dict[str, object], ts: str | None) -> list[Event]:
    out: list[Event] = []
    for part in _message_parts(record):
        if not isinstance(part, dict):
            continue
        text = fields.string(part.get("text"))
        call = part.get("functionCall")
        if text is not None and part.get("thought"):
            out.append(make("thinking", ts=ts, preview=fields.preview(text),
                            body=fields.text_body(text), bytes=fields.size(text),
                            redacted=False))
        elif text is not None:
            if text:
                out.append(make("assistant_text", ts=ts, preview=fields.preview(text),
                                body=fields.text_body(text), bytes=fields.size(text)))
        elif isinstance(call, dict):
            args = call.get("args")
            out.append(make("tool_call", ts=ts, preview=fields.arg_preview(args),
                            body=fields.json_body(args) if args is not None else None,
                            name=fields.string(call.get("name")) or "?",
                            call_id=fields.string(call.get("id")),
                            arg_keys=list(args) if isinstance(args, dict) else [],
                            bytes=fields.size(fields.compact(args)) if args is not None else 0))
    usage = record.get("usageMetadata")
    if isinstance(usage, dict):
        out.append(make("usage", ts=ts, input=fields.integer(usage.get("promptTokenCount")),
                        output=fields.integer(usage.get("candidatesTokenCount")),
                        total=fields.integer(usage.get("totalTokenCount")),
                        context_window=fields.integer(record.get("contextWindowSize")),
                        cost_usd=None))
    if not out:  # a reply with nothing in it (an empty text, no call, no usage)
        out.append(make("bookkeeping", ts=ts, type_name="assistant"))
    return out


def _results(record: dict[str, object], ts: str | None) -> list[Event]:
    outcome = record.get("toolCallResult")
    status = fields.string(outcome.get("status")) if isinstance(outcome, dict) else None
    out: list[Event] = []
    for part in _message_parts(record):
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(response, dict):
            continue
        inner = response.get("response")
        if isinstance(inner, dict):
            said = inner.get("output", inner.get("error"))
            text = said if isinstance(said, str) else fields.compact(inner)
            failed = "error" in inner and "output" not in inner
        else:
            text, failed = (fields.compact(inner) if inner is not None else ""), False
        ok = status == "success" if status is not None else not failed
        out.append(make("tool_result", ts=ts, preview=fields.preview(text),
                        body=fields.text_body(text), call_id=fields.string(response.get("id")),
                        status="ok" if ok else "error", bytes=fields.size(text)))
    return out or [unknown("tool_result", ts)]


def _system(record: dict[str, object], subtype: str, ts: str | None) -> list[Event]:
    payload = record.get("systemPayload")
    payload = payload if isinstance(payload, dict) else {}
    name = f"system.{subtype}"
    if subtype == "chat_compression":
        summary = _summary(payload.get("compressedHistory"))
        return [make("compaction", ts=ts, preview=fields.preview(summary),
                     body=fields.text_body(summary) if summary else None, compaction="summary")]
    if subtype == "turn_result":
        state = fields.string(payload.get("state")) or ""
        error = payload.get("error")
        said = fields.string(error.get("message")) if isinstance(error, dict) else None
        return [make("turn_boundary", ts=ts, preview=fields.preview(said),
                     body=fields.text_body(said) if said else None, boundary="end",
                     reason=_TURN_END.get(state, state or None))]
    if subtype == "session_model":
        model = fields.string(payload.get("model")) or fields.string(payload.get("modelId"))
        return [make("session_meta", ts=ts, agent=NAME, session_id=None, cwd=None,
                     version=None, model=model)]
    if subtype == "ui_telemetry":
        ui = payload.get("uiEvent")
        event_name = fields.string(ui.get("event.name")) if isinstance(ui, dict) else None
        if isinstance(ui, dict) and event_name == "qwen-code.api_error":
            said = fields.string(ui.get("error_message")) or ""
            return [make("turn_boundary", ts=ts, preview=fields.preview(said),
                         body=fields.text_body(said) if said else None, boundary="end",
                         reason="error")]
        return [make("bookkeeping", ts=ts, preview=fields.preview(event_name), type_name=name)]
    if subtype in _SYSTEM_BOOKKEEPING:
        said = fields.string(payload.get("rawCommand")) or fields.string(payload.get("title"))
        return [make("bookkeeping", ts=ts, preview=fields.preview(said), type_name=name)]
    return [unknown(name, ts)]


def _summary(history: object) -> str:
    """The summary a compressed history starts with: its first content's text."""
    for content in history if isinstance(history, list) else []:
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            text, _ = _parts(content["parts"])
            if text:
                return text
    return ""

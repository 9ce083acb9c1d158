"""OpenCode's SQLite store (1.18), one row at a time (pure).

OpenCode keeps its sessions in `$XDG_DATA_HOME/opencode/opencode.db` (default
`~/.local/share/opencode/opencode.db`; WAL), tables `session`, `message` and `part`, each
row's substance a JSON text in `data`. tma.runtime.transcript.opencode_db reads the rows
(and pages them); this module turns one row, handed over as a dict, into events:

    {"table": "session", "id", "directory", "version", "model", "time_created", ...}
    {"table": "message", "id", "time_created", "data": {...} | None}
    {"table": "part", "id", "time_created", "role": <its message's role>, "data": {...} | None}

(`data` None: the row's JSON did not parse; `model` the column's JSON text or object).
A part's meaning depends on whose message it is in (a user's text is a prompt, the
model's an answer), so the reader hands the part its message's role: still one row.

- session row: `session_meta` (its `directory`, `version` and `model` as provider/id);
- message row: nothing, unless the model's message ended on an error (`data.error`,
  an aborted turn included): a `turn_boundary` end whose reason is the error's name;
- part rows, by `data.type`: `text` (a prompt, or the model's text; a `synthetic` or
  `ignored` one, which OpenCode adds itself, e.g. a file it read for an @mention, is
  bookkeeping), `reasoning` (thinking), `tool` (one row per call, mutated pending ->
  running -> completed | error: a `tool_call` and a `tool_result` whose status is
  pending while the row is pending or running, since a call waiting for the user's
  approval reads as running, ok when completed, error when failed or denied; and a
  `subagent_ref` after them when the call started a child session, `metadata.sessionId`,
  the task tool), `step-finish` (the step's `usage`, and a `turn_boundary` end unless
  the step stopped to call tools), `compaction` (manual, or auto), `file` (an
  attachment, its size unknown: the part holds a URL), `step-start`, `patch`,
  `snapshot`, `agent` (an @agent mention), `subtask`, `retry`: bookkeeping.

Every row yields its events in a fixed order, the tool row's first two always the call
and its result, so an event's place in its row stays put while the row is mutated.
"""

from __future__ import annotations

import json

from tma.core.transcript import fields
from tma.core.transcript.event import Event, make, unknown

NAME = "opencode"

_STATUS = {"pending": "pending", "running": "pending", "completed": "ok", "error": "error"}
_BOOKKEEPING = {"step-start", "patch", "snapshot", "subtask", "retry"}


def session(record: dict[str, object]) -> Event | None:
    if record.get("table") == "session":
        return _meta(record)
    return None


def events(record: dict[str, object]) -> list[Event]:
    table = record.get("table")
    ts = fields.iso_ms(record.get("time_created"))
    if table == "session":
        return [_meta(record)]
    data = record.get("data")
    if table == "message":
        if not isinstance(data, dict):
            return [unknown("message", ts)]
        return _message(data, ts)
    if table == "part":
        if not isinstance(data, dict):
            return [unknown("part", ts)]
        return _part(data, fields.string(record.get("role")), ts)
    return [unknown(table if isinstance(table, str) else "?", ts)]


def _meta(record: dict[str, object]) -> Event:
    model = record.get("model")
    if isinstance(model, str):
        try:
            model = json.loads(model)
        except ValueError:
            pass
    named: str | None = None
    if isinstance(model, dict):
        provider, ident = fields.string(model.get("providerID")), fields.string(model.get("id"))
        named = f"{provider}/{ident}" if provider and ident else ident
    elif isinstance(model, str):
        named = model
    return make("session_meta", ts=fields.iso_ms(record.get("time_created")), agent=NAME,
                session_id=fields.string(record.get("id")),
                cwd=fields.string(record.get("directory")),
                version=fields.string(record.get("version")), model=named)


def _message(data: dict[str, object], ts: str | None) -> list[Event]:
    error = data.get("error")
    if data.get("role") != "assistant" or not isinstance(error, dict):
        return []
    inner = error.get("data")
    said = fields.string(inner.get("message")) if isinstance(inner, dict) else None
    time = data.get("time")
    done = fields.iso_ms(time.get("completed")) if isinstance(time, dict) else None
    return [make("turn_boundary", ts=done or ts, preview=fields.preview(said),
                 body=fields.text_body(said) if said else None, boundary="end",
                 reason=fields.string(error.get("name")) or "error")]


def _part(data: dict[str, object], role: str | None, ts: str | None) -> list[Event]:
    kind = data.get("type")
    if kind == "text":
        text = fields.string(data.get("text")) or ""
        first, body = fields.preview(text), fields.text_body(text)
        if data.get("synthetic") or data.get("ignored"):
            return [make("bookkeeping", ts=ts, preview=first, body=body, type_name="text.synthetic")]
        if role == "user":
            return [make("user_message", ts=ts, preview=first, body=body, bytes=fields.size(text),
                         attachments=0)]
        return [make("assistant_text", ts=ts, preview=first, body=body, bytes=fields.size(text))]
    if kind == "reasoning":
        text = fields.string(data.get("text")) or ""
        return [make("thinking", ts=ts, preview=fields.preview(text), body=fields.text_body(text),
                     bytes=fields.size(text), redacted=False)]
    if kind == "tool":
        return _tool(data, ts)
    if kind == "step-finish":
        return _step_finish(data, ts)
    if kind == "compaction":
        return [make("compaction", ts=ts, compaction="auto" if data.get("auto") else "manual")]
    if kind == "file":
        name = fields.string(data.get("filename")) or fields.string(data.get("url")) or "file"
        return [make("attachment", ts=ts, preview=fields.preview(name), attachment=name,
                     bytes=None)]
    if kind == "agent":
        agent = fields.string(data.get("name"))
        return [make("bookkeeping", ts=ts, preview=fields.preview(f"@{agent}" if agent else None),
                     type_name="agent")]
    if isinstance(kind, str) and kind in _BOOKKEEPING:
        return [make("bookkeeping", ts=ts, type_name=kind)]
    return [unknown(f"part.{kind}" if isinstance(kind, str) else "part", ts)]


def _tool(data: dict[str, object], ts: str | None) -> list[Event]:
    state = data.get("state")
    state = state if isinstance(state, dict) else {}
    call_id = fields.string(data.get("callID"))
    args = state.get("input")
    time = state.get("time")
    start = fields.iso_ms(time.get("start")) if isinstance(time, dict) else None
    end = fields.iso_ms(time.get("end")) if isinstance(time, dict) else None
    out = [make("tool_call", ts=start or ts, preview=fields.arg_preview(args),
                body=fields.json_body(args) if args is not None else None,
                name=fields.string(data.get("tool")) or "?", call_id=call_id,
                arg_keys=list(args) if isinstance(args, dict) else [],
                bytes=fields.size(fields.compact(args)) if args is not None else 0)]
    status = _STATUS.get(fields.string(state.get("status")) or "", "unknown")
    said: str | None = None
    if status in ("ok", "error"):
        said = fields.string(state.get("output" if status == "ok" else "error"))
    out.append(make("tool_result", ts=end or start or ts, preview=fields.preview(said),
                    body=fields.text_body(said) if said is not None else None, call_id=call_id,
                    status=status, bytes=fields.size(said) if said else 0))
    meta = state.get("metadata")
    child = fields.string(meta.get("sessionId")) if isinstance(meta, dict) else None
    if child:
        out.append(make("subagent_ref", ts=start or ts, child_id=child, external_file=True))
    return out


def _step_finish(data: dict[str, object], ts: str | None) -> list[Event]:
    tokens = data.get("tokens")
    tokens = tokens if isinstance(tokens, dict) else {}
    out = [make("usage", ts=ts, input=fields.integer(tokens.get("input")),
                output=fields.integer(tokens.get("output")),
                total=fields.integer(tokens.get("total")), context_window=None,
                cost_usd=fields.number(data.get("cost")))]
    reason = fields.string(data.get("reason"))
    if reason != "tool-calls":
        out.append(make("turn_boundary", ts=ts, boundary="end", reason=reason))
    return out

"""Codex's rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<iso>-<id>.jsonl`), one
record at a time, as the protocol's events (pure).

Every record is `{"timestamp", "type", "payload"}` (0.171 adds an `ordinal`). The types,
as Codex 0.171.0 writes them (tests/fixtures/transcripts):

  session_meta       the header: the thread's id, cwd, `cli_version` (a subagent's rollout
                     names its parent's thread)
  event_msg          the stream the UI draws: `task_started` / `task_complete` /
                     `turn_aborted`, `token_count`, `thread_settings_applied`, and
                     `item_completed` with the item the UI shows (UserMessage,
                     AgentMessage, Reasoning, CommandExecution, ContextCompaction,
                     CollabAgentToolCall)
  response_item      the stream the model sees: `message` (the user's and the assistant's
                     words, and the context Codex injects as user or developer messages),
                     `reasoning`, `function_call`, `function_call_output`
  compacted          a compaction's summary (and the history it replaces)
  turn_context, world_state, token_usage_record, retained_context
                     bookkeeping

Codex writes each turn twice, once per stream. Each fact is taken from ONE stream, by the
record's own type, so that a page read backwards from any offset stays exact:

  from event_msg      the user's message, the assistant's text and reasoning (the UI's
                      items), turn boundaries, usage (`token_count`), approvals
                      (`exec_approval_request`, `apply_patch_approval_request`), subagents
                      (a `spawn_agent` CollabAgentToolCall names the child thread)
  from response_item  tool calls and their results (every tool has them; only shell
                      commands have a CommandExecution item) and the injected context
                      (attachments)
  from compacted      the compaction (its ContextCompaction item is the double)

Their doubles (the assistant's and user's response_item messages, `reasoning`,
CommandExecution and ContextCompaction items, `token_usage_record`) are bookkeeping.
Codex 0.171.0 does not persist approval requests to the rollout (only the live event
stream has them); they are mapped for a release that does.
"""

from __future__ import annotations

import json
import posixpath
import re

from tma.core.transcript.event import Event, make, unknown
from tma.core.transcript.text import (
    compact,
    first_string,
    integer,
    items,
    obj,
    preview,
    size,
    string,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "codex"

#: top-level record types that only restate the session's state
BOOKKEEPING = frozenset({"turn_context", "world_state", "token_usage_record",
                         "retained_context"})
#: event_msg types that only restate bookkeeping
EVENT_BOOKKEEPING = frozenset({"thread_settings_applied"})
#: item_completed items whose fact is taken from the other stream
ITEM_DOUBLES = frozenset({"CommandExecution", "ContextCompaction"})
#: approval requests: event type -> the tool that asks
APPROVALS = {"exec_approval_request": "exec_command", "apply_patch_approval_request": "apply_patch"}
_TAG = re.compile(r"\s*<([a-z][a-z0-9_-]*)>")
_EXIT = re.compile(r"(?m)^Process exited with code (-?\d+)$")
_REFUSED = re.compile(r"\baborted by user\b|\brejected by user\b|^unsupported call\b")


def events(record: dict[str, object]) -> list[Event]:
    """One record's events, in their order in the record (the module's docstring)."""
    kind = record.get("type")
    ts = string(record.get("timestamp"))
    payload = obj(record.get("payload"))
    if kind == "session_meta":
        meta = session(record)
        return [meta] if meta is not None else [unknown("session_meta/(no id)", ts)]
    if kind == "event_msg":
        return _event_msg(payload, ts)
    if kind == "response_item":
        return _response_item(payload, ts)
    if kind == "compacted":
        text = string(payload.get("message")) or ""
        return [make("compaction", compaction="unknown", ts=ts, preview=preview(text),
                     body=("text", text) if text else None)]
    if isinstance(kind, str) and kind in BOOKKEEPING:
        return [make("bookkeeping", type_name=kind, ts=ts)]
    return [unknown(kind if isinstance(kind, str) else "(no type)", ts)]


def session(record: dict[str, object]) -> Event | None:
    """The header's session: the thread's own id (the one in the file's name)."""
    if record.get("type") != "session_meta":
        return None
    p = obj(record.get("payload"))
    sid = string(p.get("id")) or string(p.get("session_id"))
    if sid is None:
        return None
    return make("session_meta", agent=NAME, session_id=sid, cwd=string(p.get("cwd")),
                version=string(p.get("cli_version")), model=string(p.get("model")),
                ts=string(record.get("timestamp")))


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Where the session's rollout is: a glob pattern, since its name holds the time it
    started (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<iso>-<session>.jsonl`, `CODEX_HOME`
    defaulting to `$HOME/.codex`); the reader expands it (a resumed session can match more
    than one: the newest wins). The cwd plays no part; none without a home."""
    home = env.get("CODEX_HOME") or (
        posixpath.join(env["HOME"], ".codex") if env.get("HOME") else None)
    if home is None or not session_id or any(c in session_id for c in "*?[]/"):
        return []
    return [posixpath.join(home, "sessions", "*", "*", "*", f"rollout-*-{session_id}.jsonl")]


# --- the UI's stream ---------------------------------------------------------------------


def _event_msg(p: dict[str, object], ts: str | None) -> list[Event]:
    kind = p.get("type")
    if kind == "task_started":
        return [make("turn_boundary", boundary="start", reason=None, ts=ts)]
    if kind == "task_complete":
        return [make("turn_boundary", boundary="end", reason="completed", ts=ts)]
    if kind == "turn_aborted":
        return [make("turn_boundary", boundary="end",
                     reason=string(p.get("reason")) or "aborted", ts=ts)]
    if kind == "token_count":
        return [_usage(p, ts)]
    if kind == "item_completed":
        return _item(obj(p.get("item")), ts)
    if isinstance(kind, str) and kind in APPROVALS:
        return [make("permission_request", tool=APPROVALS[kind],
                     call_id=string(p.get("call_id")), ts=ts)]
    if isinstance(kind, str) and kind in EVENT_BOOKKEEPING:
        return [make("bookkeeping", type_name=f"event_msg/{kind}", ts=ts)]
    return [unknown(f"event_msg/{kind}" if isinstance(kind, str) else "event_msg", ts)]


def _usage(p: dict[str, object], ts: str | None) -> Event:
    """The last request's tokens (what the context holds now) and the window; a
    token_count without them (a rate-limit update) is bookkeeping."""
    info = obj(p.get("info"))
    last = obj(info.get("last_token_usage"))
    inp, out = integer(last.get("input_tokens")), integer(last.get("output_tokens"))
    if inp is None or out is None:
        return make("bookkeeping", type_name="event_msg/token_count", ts=ts)
    total = integer(last.get("total_tokens"))
    return make("usage", input=inp, output=out, total=total if total is not None else inp + out,
                context_window=integer(info.get("model_context_window")), cost_usd=None, ts=ts)


def _item(item: dict[str, object], ts: str | None) -> list[Event]:
    kind = item.get("type")
    if kind == "UserMessage":
        parts = [obj(c) for c in items(item.get("content"))]
        text = "\n".join(string(c.get("text")) or "" for c in parts if c.get("type") == "text")
        attached = sum(1 for c in parts if c.get("type") != "text")
        return [make("user_message", bytes=size(text), attachments=attached, ts=ts,
                     preview=preview(text), body=("text", text))]
    if kind == "AgentMessage":
        text = "".join(string(obj(c).get("text")) or "" for c in items(item.get("content")))
        return [make("assistant_text", bytes=size(text), ts=ts, preview=preview(text),
                     body=("text", text))]
    if kind == "Reasoning":
        shown = [t for t in items(item.get("summary_text")) + items(item.get("raw_content"))
                 if isinstance(t, str)]
        text = "\n".join(shown)
        return [make("thinking", bytes=size(text), redacted=not text, ts=ts,
                     preview=preview(text), body=("text", text) if text else None)]
    if kind == "CollabAgentToolCall" and item.get("tool") == "spawn_agent":
        return [make("subagent_ref", child_id=child, external_file=True, ts=ts)
                for child in items(item.get("receiver_thread_ids")) if isinstance(child, str)] \
            or [make("bookkeeping", type_name="event_msg/item_completed/CollabAgentToolCall",
                     ts=ts)]
    if kind == "CollabAgentToolCall" or (isinstance(kind, str) and kind in ITEM_DOUBLES):
        return [make("bookkeeping", type_name=f"event_msg/item_completed/{kind}", ts=ts)]
    return [unknown(f"event_msg/item_completed/{kind}" if isinstance(kind, str)
                    else "event_msg/item_completed", ts)]


# --- the model's stream ------------------------------------------------------------------


def _response_item(p: dict[str, object], ts: str | None) -> list[Event]:
    kind = p.get("type")
    if kind == "message":
        return [_message(p, ts)]
    if kind == "function_call":
        raw = string(p.get("arguments")) or ""
        try:
            args: object = json.loads(raw)
        except ValueError:
            args = None
        js = compact(args) if args is not None else raw
        return [make("tool_call", name=string(p.get("name")), call_id=string(p.get("call_id")),
                     arg_keys=list(obj(args)), bytes=size(raw), ts=ts,
                     preview=preview(first_string(args) or js),
                     body=("json", js) if args is not None else ("text", raw))]
    if kind == "function_call_output":
        return [_output(p, ts)]
    if kind == "reasoning":
        return [make("bookkeeping", type_name="response_item/reasoning", ts=ts)]
    return [unknown(f"response_item/{kind}" if isinstance(kind, str) else "response_item", ts)]


def _message(p: dict[str, object], ts: str | None) -> Event:
    """The assistant's words and the user's own are the UI items' doubles; what Codex
    injects (environment, instructions, notices) is context: an attachment named by its
    kind (0.171's metadata) or its leading tag."""
    role = string(p.get("role")) or "message"
    parts = [obj(c) for c in items(p.get("content"))]
    meta = obj(p.get("internal_chat_message_metadata_passthrough"))
    origins = {string(obj(obj(m).get("provenance")).get("type"))
               for m in items(meta.get("content_item_metadata"))}
    text = "\n".join(string(c.get("text")) or "" for c in parts)
    tag = _TAG.match(text)
    if role == "assistant" or (role == "user" and (origins == {"user"}
                                                   or (not origins and tag is None))):
        return make("bookkeeping", type_name=f"response_item/message/{role}", ts=ts)
    kinds = [k for k in items(meta.get("content_item_kinds")) if isinstance(k, str)]
    name = kinds[0] if kinds else tag.group(1) if tag is not None else role
    return make("attachment", attachment=name, bytes=size(text), ts=ts, preview=preview(text),
                body=("text", text))


def _output(p: dict[str, object], ts: str | None) -> Event:
    out = p.get("output")
    if isinstance(out, str):
        text: str | None = out
        body = ("text", out)
    else:  # a structured output (content items)
        text = None
        body = ("json", compact(out))
    return make("tool_result", call_id=string(p.get("call_id")), status=_status(out),
                bytes=size(body[1]), ts=ts, preview=preview(_shown(text)), body=body)


def _status(out: object) -> str:
    """ok or error, as the output says: a shell command's exit code, a refusal (the user
    declined or aborted, an unsupported call), a structured output's `success`."""
    if not isinstance(out, str):
        ok = obj(out).get("success")
        return "error" if ok is False else "ok"
    code = _EXIT.search(out)
    if code is not None:
        return "ok" if code.group(1) == "0" else "error"
    return "error" if _REFUSED.search(out) else "ok"


def _shown(text: str | None) -> str | None:
    """A shell result's preview is its output, not the header Codex puts before it."""
    if text is None:
        return None
    head, sep, rest = text.partition("\nOutput:\n")
    return rest if sep and rest.strip() else text

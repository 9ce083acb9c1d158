"""Gemini CLI's session JSONL (0.61), one record at a time (pure).

Where: `$GEMINI_CLI_HOME or ~` / `.gemini/tmp/<project>/chats/session-<date>T<HH-MM>-<id8>.jsonl`,
`<project>` the slug of the working directory's base name that `projects.json` maps it to
(`work-gemini`, `-1`… on a clash) or, before that registry, the SHA-256 of the working
directory; a subagent's session is `chats/<parent session id>/<its session id>.jsonl`.
`candidates` lists those places as glob patterns; the first record's `sessionId` says
whose a file is.

The file is an append log that the CLI folds as it reads it back:

- the first record is a header (`sessionId`, `projectHash`, `startTime`, `kind` main or
  subagent): `session_meta`;
- a record with an `id` is a message, and a later record with the same `id` replaces
  it: a model turn is written when its text is complete (text, `thoughts`, `tokens`) and
  written again with its `toolCalls` once they are done. So a `gemini` record without
  `toolCalls` gives the thinking, text and usage, and one with `toolCalls` gives only the
  calls and their results (its text, thoughts and tokens restate the first write). Each
  call is written once, finished (`success`, `error`, or `cancelled` when denied or
  interrupted: `error` here); a call waiting for approval is not in the file at all;
- a `user` record is a prompt, except one that only hands the calls' results back to the
  model (`functionResponse` parts, the same results the calls carry: bookkeeping) and one
  that carries the CLI's own `<session_context>` (rebuilt history after a cancelled turn,
  which restates the prompts: bookkeeping);
- `info`, `warning` and `error` records are what the CLI printed (bookkeeping, with their
  text as preview);
- `{"$set": {...}}` restates metadata (`lastUpdated`, `summary`, `directories`,
  `sessionId`, `memoryScratchpad`: bookkeeping). `$set.messages` replaces the whole
  history: when the new history carries the compression's summary (the model's
  acknowledgement the CLI writes after it, or a `<state_snapshot>`) it is the
  `compaction`, else (the session's first context, a history rebuilt after a cancel) it
  is bookkeeping;
- `{"$rewindTo": id}` drops the messages from `id` on (bookkeeping).

The older single-document form (`session-*.json`, one JSON object rewritten in place) is
refused by name (`refusal`), never read.
"""

from __future__ import annotations

import hashlib
import re

from tma.core.transcript import fields
from tma.core.transcript.event import Event, make, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "gemini"

#: What the CLI writes as the model's answer to a compression summary (0.61's
#: ChatCompressionService): the mark of a history replaced by a compaction.
COMPRESSION_ACK = "Got it. Thanks for the additional context!"
_SNAPSHOT = "<state_snapshot>"
_CONTEXT = "<session_context>"

LEGACY_REFUSAL = ("Gemini CLI's older session file (one JSON document, session-*.json, "
                  "rewritten in place on every change) is not read: a reader cannot page "
                  "it or tell a record from its rewrite; Gemini CLI 0.61 and later write "
                  "session-*.jsonl")

_STATUS = {"success": "ok", "error": "error", "cancelled": "error"}


def refusal(file_name: str) -> str | None:
    """Why a session file of this name is not read, or None when it is."""
    base = file_name.rsplit("/", 1)[-1]
    if base.startswith("session-") and base.endswith(".json"):
        return LEGACY_REFUSAL
    return None


def slug(name: str) -> str:
    """The project directory's name for a working directory's base name (0.61's
    ProjectRegistry.slugify)."""
    return re.sub(r"^-|-$", "", re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", name.lower()))) \
        or "project"


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Glob patterns where session `session_id` of a Gemini CLI started in `cwd` is, most
    likely first: the slug directory (and its clash-suffixed siblings), the hashed one,
    then any project. A subagent's session id is found under its parent's directory."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or "~"
    tmp = f"{home.rstrip('/')}/.gemini/tmp"
    base = cwd.rstrip("/").rsplit("/", 1)[-1] or ""
    short = session_id[:8]
    name = f"session-*-{short}.jsonl"
    project = slug(base)
    digest = hashlib.sha256(cwd.encode()).hexdigest()
    return [f"{tmp}/{project}/chats/{name}", f"{tmp}/{project}-*/chats/{name}",
            f"{tmp}/{digest}/chats/{name}", f"{tmp}/*/chats/{name}",
            f"{tmp}/*/chats/*/{session_id}.jsonl"]


def session(record: dict[str, object]) -> Event | None:
    if _is_header(record):
        return _meta(record)
    return None


def events(record: dict[str, object]) -> list[Event]:
    if _is_header(record):
        return [_meta(record)]
    if "$set" in record:
        return _set(record)
    if "$rewindTo" in record:
        return [make("bookkeeping", type_name="$rewindTo")]
    kind = record.get("type")
    if isinstance(record.get("id"), str) and isinstance(kind, str):
        ts = fields.string(record.get("timestamp"))
        if kind == "user":
            return [_user(record, ts)]
        if kind == "gemini":
            return _model(record, ts)
        if kind in ("info", "warning", "error"):
            text, _ = _text(record.get("content"))
            return [make("bookkeeping", ts=ts, preview=fields.preview(text),
                         body=fields.text_body(text) if text else None, type_name=kind)]
        return [unknown(kind, ts)]
    return [unknown(kind if isinstance(kind, str) else _shape(record))]


def _is_header(record: dict[str, object]) -> bool:
    return isinstance(record.get("sessionId"), str) and "projectHash" in record \
        and "id" not in record and "$set" not in record


def _meta(record: dict[str, object]) -> Event:
    dirs = record.get("directories")
    cwd = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
    return make("session_meta", ts=fields.string(record.get("startTime")), agent=NAME,
                session_id=record.get("sessionId"), cwd=cwd,
                version=fields.string(record.get("cliVersion")), model=None)


def _shape(record: dict[str, object]) -> str:
    """A name for a record of no known type: its keys."""
    return "{" + ",".join(sorted(record)) + "}"


def _set(record: dict[str, object]) -> list[Event]:
    changes = record["$set"]
    if not isinstance(changes, dict):
        return [unknown("$set")]
    ts = fields.string(changes.get("lastUpdated"))
    messages = changes.get("messages")
    if isinstance(messages, list):
        summary = _summary(messages)
        if summary is not None:
            return [make("compaction", ts=ts, preview=fields.preview(summary),
                         body=fields.text_body(summary), compaction="summary")]
    return [make("bookkeeping", ts=ts, type_name="$set." + ",".join(sorted(changes)))]


def _summary(messages: list[object]) -> str | None:
    """The compression summary a replaced history starts with, or None when the new
    history is not a compaction's."""
    texts = [(m.get("type"), _text(m.get("content"))[0]) for m in messages if isinstance(m, dict)]
    acked = any(kind == "gemini" and text.strip() == COMPRESSION_ACK for kind, text in texts)
    for i, (kind, text) in enumerate(texts):
        if kind != "user" or text.lstrip().startswith(_CONTEXT):
            continue
        if _SNAPSHOT in text or (acked and i + 1 < len(texts) and texts[i + 1][0] == "gemini"
                                 and texts[i + 1][1].strip() == COMPRESSION_ACK):
            return text
    return None


#: A message's text and its count of inline-data/file parts (thought parts and function
#: parts are neither).
_text = fields.parts_text


def _user(record: dict[str, object], ts: str | None) -> Event:
    content = record.get("content")
    parts = content if isinstance(content, list) else []
    if parts and all(isinstance(p, dict) and "functionResponse" in p for p in parts):
        return make("bookkeeping", ts=ts, type_name="user.functionResponse")
    if any(isinstance(p, dict) and isinstance(p.get("text"), str)
           and p["text"].lstrip().startswith(_CONTEXT) for p in parts):
        return make("bookkeeping", ts=ts, type_name="user.session_context")
    text, attachments = _text(content)
    shown = record.get("displayContent")
    if shown is not None:  # what was typed, before the CLI expanded @files into it
        text = _text(shown)[0] or text
    return make("user_message", ts=ts, preview=fields.preview(text),
                body=fields.text_body(text), bytes=fields.size(text), attachments=attachments)


def _model(record: dict[str, object], ts: str | None) -> list[Event]:
    calls = record.get("toolCalls")
    if isinstance(calls, list) and calls:
        out: list[Event] = []
        for call in calls:
            if isinstance(call, dict):
                out += _call(call, ts)
        return out
    out = []
    thoughts = record.get("thoughts")
    for thought in thoughts if isinstance(thoughts, list) else []:
        if isinstance(thought, dict):
            text = "\n".join(s for s in (fields.string(thought.get("subject")),
                                         fields.string(thought.get("description"))) if s)
            out.append(make("thinking", ts=fields.string(thought.get("timestamp")) or ts,
                            preview=fields.preview(text), body=fields.text_body(text),
                            bytes=fields.size(text), redacted=False))
    text, _ = _text(record.get("content"))
    if text:
        out.append(make("assistant_text", ts=ts, preview=fields.preview(text),
                        body=fields.text_body(text), bytes=fields.size(text)))
    tokens = record.get("tokens")
    if isinstance(tokens, dict):
        out.append(make("usage", ts=ts, input=fields.integer(tokens.get("input")),
                        output=fields.integer(tokens.get("output")),
                        total=fields.integer(tokens.get("total")), context_window=None,
                        cost_usd=None))
    return out


def _call(call: dict[str, object], ts: str | None) -> list[Event]:
    call_id = fields.string(call.get("id"))
    name = fields.string(call.get("name")) or "?"
    args = call.get("args")
    arg_keys = list(args) if isinstance(args, dict) else []
    out = [make("tool_call", ts=ts, preview=fields.arg_preview(args),
                body=fields.json_body(args) if args is not None else None, name=name,
                call_id=call_id, arg_keys=arg_keys,
                bytes=fields.size(fields.compact(args)) if args is not None else 0)]
    status = _STATUS.get(fields.string(call.get("status")) or "", "unknown")
    result = _result(call.get("result"))
    out.append(make("tool_result", ts=fields.string(call.get("timestamp")) or ts,
                    preview=fields.preview(result), body=fields.text_body(result),
                    call_id=call_id, status=status, bytes=fields.size(result)))
    agent = fields.string(call.get("agentId"))
    if agent:
        out.append(make("subagent_ref", ts=ts, child_id=agent, external_file=True))
    return out


def _result(parts: object) -> str:
    """A call's result as text: its function response's output (or error), else the
    response as compact JSON."""
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        if isinstance(response, dict):
            inner = response.get("response")
            if isinstance(inner, dict):
                said = inner.get("output", inner.get("error"))
                texts.append(said if isinstance(said, str) else fields.compact(inner))
            elif inner is not None:
                texts.append(fields.compact(inner))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)

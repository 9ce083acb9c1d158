"""Claude Code's project JSONL (`~/.claude/projects/<cwd-slug>/<session>.jsonl`), one
record at a time, as the protocol's events (pure).

The records, as Claude Code 2.1.197 and 2.1.332 write them (tests/fixtures/transcripts):

  user        the human's prompt (a string, or text and image blocks), the results of
              tool calls (`tool_result` blocks; `toolUseResult` holds the tool's own
              report, with `agentId` when the tool ran a subagent), and text Claude Code
              writes as the user: a slash command (`<command-name>`), a local command's
              output (`<local-command-stdout>`), a background task's notice
              (`<task-notification>`), the interruption marker ("[Request interrupted by
              user…]"), a compaction's summary (`isCompactSummary`) and other meta text
              (`isMeta`)
  assistant   ONE content block of a model message (text, thinking, tool_use): a message
              with a text and a tool call is two records, each repeating the message's
              `usage`
  system      `turn_duration` (a turn ended), `compact_boundary` (a compaction),
              `stop_hook_summary` (the Stop hooks ran)
  attachment  context Claude Code adds to the conversation (skill and agent listings,
              the date, git status, the system prompt's snapshot …)
  the rest    session bookkeeping: `mode`, `permission-mode`, `file-history-snapshot`,
              `last-prompt`; 2.1.3xx adds `atis-latch`, `tools-used`, `cost-state`,
              `queue-operation` and the request log (`api-request`, `api-request-shape`,
              `api-request-blob`)

A subagent writes the same records to `<session>/subagents/agent-<id>.jsonl`; its
parent's transcript names it by the tool result's `agentId` (a subagent_ref).

Usage: every block's record repeats its message's usage, so it is taken from one of them,
by a rule that needs no other record: the record of a `tool_use` block when the message
stopped for tool use, else the record of a `text` block once the message has stopped (a
record written mid-stream has no `stop_reason` and gives none). A message with several
tool calls (or text blocks) repeats the same numbers; a usage event is a snapshot, so a
repeat changes nothing.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

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

NAME = "claude"

#: records that only restate the session's state (no conversation in them)
BOOKKEEPING = frozenset({
    "mode", "permission-mode", "file-history-snapshot", "last-prompt",
    "atis-latch", "tools-used", "cost-state", "queue-operation",
    "api-request", "api-request-shape", "api-request-blob",
})
#: `system` subtypes that only restate bookkeeping
SYSTEM_BOOKKEEPING = frozenset({"stop_hook_summary"})
#: text Claude Code writes as the user that is context for the model, not the human's
#: words: the leading tag names it
CONTEXT_TAGS = frozenset({
    "local-command-stdout", "local-command-stderr", "local-command-caveat",
    "task-notification", "bash-stdout", "bash-stderr",
})
_TAG = re.compile(r"<([a-z][a-z0-9_-]*)>")
_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BASH = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
INTERRUPTED = "[Request interrupted by user"
SLUG_MAX = 200  # a longer project name is cut and gets a hash


def events(record: dict[str, object]) -> list[Event]:
    """One record's events, in their order in the record (the module's docstring)."""
    kind = record.get("type")
    ts = string(record.get("timestamp"))
    if not isinstance(kind, str):
        return [unknown("(no type)", ts)]
    if kind == "user":
        return _user(record, ts)
    if kind == "assistant":
        return _assistant(record, ts)
    if kind == "system":
        return _system(record, ts)
    if kind == "attachment":
        return [_attachment(record, ts)]
    if kind in BOOKKEEPING:
        return [make("bookkeeping", type_name=kind, ts=ts)]
    return [unknown(kind, ts)]


def session(record: dict[str, object]) -> Event | None:
    """The session a conversation record belongs to (every user, assistant and system
    record carries it; an assistant record names the model too)."""
    if record.get("type") not in ("user", "assistant", "system", "attachment"):
        return None
    sid, cwd = string(record.get("sessionId")), string(record.get("cwd"))
    if sid is None or cwd is None:
        return None
    model = None
    if record.get("type") == "assistant":
        model = string(obj(record.get("message")).get("model"))
        if model == "<synthetic>":  # Claude Code's own error messages
            model = None
    return make("session_meta", agent=NAME, session_id=sid, cwd=cwd,
                version=string(record.get("version")), model=model,
                ts=string(record.get("timestamp")))


def slug(cwd: str) -> str:
    """A project's directory name as Claude Code makes it from the cwd: every character
    but an ASCII letter or digit becomes `-` (one per UTF-16 unit: JavaScript's regex), and
    a name over 200 characters keeps its first 200 and a hash of the cwd, which is not
    reproduced here: `*` stands for it."""
    name = "".join(c if c.isascii() and c.isalnum() else "-" * (2 if ord(c) > 0xFFFF else 1)
                   for c in cwd)
    return name if len(name) <= SLUG_MAX else f"{name[:SLUG_MAX]}-*"


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Where the session's transcript is: `<config>/projects/<slug(cwd)>/<session>.jsonl`,
    the config directory being `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude` (as Claude Code
    2.1.197 and 2.1.332 resolve it). A candidate holding `*` (a cwd too long for a plain
    slug) is a glob pattern; none without a HOME or config directory."""
    config = env.get("CLAUDE_CONFIG_DIR") or (
        posixpath.join(env["HOME"], ".claude") if env.get("HOME") else None)
    if config is None or not session_id or any(c in session_id for c in "*?[]/"):
        return []
    config = unicodedata.normalize("NFC", config)
    return [posixpath.join(config, "projects", slug(cwd), f"{session_id}.jsonl")]


# --- user --------------------------------------------------------------------------------


def _user(record: dict[str, object], ts: str | None) -> list[Event]:
    content = obj(record.get("message")).get("content")
    if record.get("isCompactSummary") is True:
        return [_context("compact_summary", _text_of(content), ts)]
    if record.get("isMeta") is True:
        return [_context("meta", _text_of(content), ts)]
    if isinstance(content, str):
        return [_user_text(content, 0, ts)]
    out: list[Event] = []
    texts: list[str] = []
    at_text: int | None = None  # where the merged text message goes
    attached = 0
    for block in items(content):
        b = obj(block)
        btype = b.get("type")
        if btype == "tool_result":
            out.append(_tool_result(b, ts))
        elif btype == "text":
            texts.append(string(b.get("text")) or "")
            if at_text is None:
                at_text = len(out)
        elif btype in ("image", "document"):
            attached += 1
            if at_text is None:
                at_text = len(out)
        else:
            out.append(unknown(f"user/{btype}" if isinstance(btype, str) else "user/(block)",
                               ts))
    if at_text is not None:
        out.insert(at_text, _user_text("\n".join(texts), attached, ts))
    if not isinstance(content, list):
        out.append(unknown("user/(content)", ts))
    elif not out:  # an empty message
        out.append(make("user_message", bytes=0, attachments=0, ts=ts))
    agent = string(obj(record.get("toolUseResult")).get("agentId"))
    if agent is not None:
        out.append(make("subagent_ref", child_id=agent, external_file=True, ts=ts))
    return out


def _user_text(text: str, attached: int, ts: str | None) -> Event:
    """A text Claude Code wrote as the user: the human's prompt, a slash command, the
    interruption marker, or context for the model (CONTEXT_TAGS)."""
    if text.startswith(INTERRUPTED):
        return make("turn_boundary", boundary="end", reason="interrupted", ts=ts)
    tag = _TAG.match(text)
    if tag is not None and tag.group(1) in CONTEXT_TAGS:
        return _context(tag.group(1), text, ts)
    shown = text
    if tag is not None and tag.group(1) in ("command-name", "command-message"):
        name, args = _COMMAND.search(text), _ARGS.search(text)
        if name is not None:
            shown = " ".join(p for p in (name.group(1).strip(),
                                         args.group(1).strip() if args else "") if p)
    elif tag is not None and tag.group(1) == "bash-input":
        cmd = _BASH.search(text)
        if cmd is not None:
            shown = "! " + cmd.group(1).strip()
    return make("user_message", bytes=size(text), attachments=attached, ts=ts,
                preview=preview(shown), body=("text", text))


def _context(name: str, text: str, ts: str | None) -> Event:
    return make("attachment", attachment=name, bytes=size(text), ts=ts, preview=preview(text),
                body=("text", text))


def _tool_result(block: dict[str, object], ts: str | None) -> Event:
    content = block.get("content")
    text: str | None = None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list) and all(obj(b).get("type") == "text" for b in content):
        text = "\n".join(string(obj(b).get("text")) or "" for b in content)
    body = ("text", text) if text is not None else ("json", compact(content))
    return make("tool_result", call_id=string(block.get("tool_use_id")),
                status="error" if block.get("is_error") is True else "ok",
                bytes=size(body[1]) if content is not None else 0, ts=ts,
                preview=preview(text), body=body if content is not None else None)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(string(obj(b).get("text")) or "" for b in items(content)
                     if obj(b).get("type") == "text")


# --- assistant ---------------------------------------------------------------------------


def _assistant(record: dict[str, object], ts: str | None) -> list[Event]:
    message = obj(record.get("message"))
    content = message.get("content")
    if isinstance(content, str):  # (the API allows a bare string)
        content = [{"type": "text", "text": content}]
    out: list[Event] = []
    blocks = items(content)
    for block in blocks:
        b = obj(block)
        btype = b.get("type")
        if btype == "text":
            text = string(b.get("text")) or ""
            out.append(make("assistant_text", bytes=size(text), ts=ts, preview=preview(text),
                            body=("text", text)))
        elif btype == "thinking":
            text = string(b.get("thinking")) or ""
            out.append(make("thinking", bytes=size(text), redacted=not text, ts=ts,
                            preview=preview(text), body=("text", text) if text else None))
        elif btype == "redacted_thinking":
            out.append(make("thinking", bytes=size(string(b.get("data")) or ""), redacted=True,
                            ts=ts))
        elif btype in ("tool_use", "server_tool_use"):
            args = b.get("input")
            js = compact(args)
            out.append(make("tool_call", name=string(b.get("name")), call_id=string(b.get("id")),
                            arg_keys=list(obj(args)), bytes=size(js), ts=ts,
                            preview=preview(first_string(args) or js), body=("json", js)))
        else:
            out.append(unknown(f"assistant/{btype}" if isinstance(btype, str)
                               else "assistant/(block)", ts))
    if not isinstance(content, list):
        out.append(unknown("assistant/(content)", ts))
    elif not out:  # an empty message
        out.append(make("assistant_text", bytes=0, ts=ts))
    usage = _usage(message, blocks, ts)
    if usage is not None:
        out.append(usage)
    return out


def _usage(message: dict[str, object], blocks: list[object], ts: str | None) -> Event | None:
    stop = message.get("stop_reason")
    if not isinstance(stop, str) or not blocks:
        return None
    last = obj(blocks[-1]).get("type")
    if last != ("tool_use" if stop == "tool_use" else "text"):
        return None
    u = obj(message.get("usage"))
    fresh = integer(u.get("input_tokens"))
    output = integer(u.get("output_tokens"))
    if fresh is None or output is None:
        return None
    inp = fresh + (integer(u.get("cache_creation_input_tokens")) or 0) \
        + (integer(u.get("cache_read_input_tokens")) or 0)
    return make("usage", input=inp, output=output, total=inp + output, context_window=None,
                cost_usd=None, ts=ts)


# --- system and attachment ---------------------------------------------------------------


def _system(record: dict[str, object], ts: str | None) -> list[Event]:
    sub = string(record.get("subtype"))
    name = f"system/{sub}" if sub is not None else "system"
    if sub == "turn_duration":
        return [make("turn_boundary", boundary="end", reason="completed", ts=ts)]
    if sub == "compact_boundary":
        trigger = string(obj(record.get("compactMetadata")).get("trigger"))
        return [make("compaction", compaction=trigger or "unknown", ts=ts)]
    if sub in SYSTEM_BOOKKEEPING:
        return [make("bookkeeping", type_name=name, ts=ts)]
    return [unknown(name, ts)]


def _attachment(record: dict[str, object], ts: str | None) -> Event:
    att = record.get("attachment")
    name = string(obj(att).get("type")) or "attachment"
    js = compact(att)
    return make("attachment", attachment=name, bytes=size(js), ts=ts, body=("json", js))

"""pi's session JSONL (0.73, file format 3), one record at a time (pure).

Where: `$PI_CODING_AGENT_SESSION_DIR/<iso>_<session>.jsonl` when that is set, else
`$PI_CODING_AGENT_DIR or ~/.pi/agent` / `sessions/--<cwd, leading / dropped, / \\ : as ->--/`
`<iso>_<session>.jsonl` (a `sessionDir` in pi's settings moves it too; `candidates`
cannot see that). The file name is the only version stamp pi writes (the header's
`version` is the file format's).

Records (each has `type`, `id`, `parentId`, `timestamp`; the parent links make a tree
when the user forks or navigates, and the file holds every branch):

- `session`: the header (`id`, `cwd`): `session_meta`;
- `model_change`: the model from here on: a `session_meta` that only names the model
  (`provider/modelId`), which `session` returns too;
- `thinking_level_change`, `label`, `session_info` (the session's name), `custom`
  (an extension's own state): bookkeeping;
- `message`, by its `message.role`:
  `user` a prompt (`user_message`, images counted as attachments);
  `assistant` its blocks in order (`thinking`, `text`, `toolCall`), then its `usage`
  (skipped when every count is zero: a failed or aborted request), then a
  `turn_boundary` end unless it stopped to call tools (`stopReason` stop, length,
  error or aborted, the error message as preview);
  `toolResult` the result of one call, under its own role (`isError`: error, else ok);
  `bashExecution` a command the user ran with `!`: a `bash` tool call and its result,
  both named by the record's id (exit 0: ok; else, or cancelled: error);
  `custom` an extension's message to the model: an attachment;
  `compactionSummary`, `branchSummary`: a compaction, bookkeeping;
- `compaction`: the history before `firstKeptEntryId` replaced by `summary` (the
  `compaction` is `summary`, or `extension` when an extension wrote it);
- `branch_summary`: the summary of a branch left behind (bookkeeping, the summary as
  preview); `custom_message`: an extension's message to the model (an attachment).
"""

from __future__ import annotations

from tma.core.transcript import fields
from tma.core.transcript.event import Event, make, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "pi"

_ENDS = {"stop", "length", "error", "aborted"}
_BOOKKEEPING = {"thinking_level_change", "label", "session_info", "custom"}


def slug(cwd: str) -> str:
    """pi's session directory name for a working directory."""
    inner = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + inner.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def candidates(session_id: str, cwd: str, env: Mapping[str, str]) -> list[str]:
    """Glob patterns where pi's session `session_id` started in `cwd` is, most likely
    first: its working directory's session directory, then any (a session moved by
    /resume from another directory keeps its file where it was made)."""
    name = f"*_{session_id}.jsonl"
    direct = env.get("PI_CODING_AGENT_SESSION_DIR")
    if direct:
        return [f"{fields.expand_home(direct, env).rstrip('/')}/{name}"]
    agent = env.get("PI_CODING_AGENT_DIR")
    root = fields.expand_home(agent, env) if agent else f"{env.get('HOME') or '~'}/.pi/agent"
    sessions = f"{root.rstrip('/')}/sessions"
    return [f"{sessions}/{slug(cwd)}/{name}", f"{sessions}/*/{name}"]


def session(record: dict[str, object]) -> Event | None:
    kind = record.get("type")
    if kind == "session":
        return _meta(record)
    if kind == "model_change":
        return _model(record)
    return None


def events(record: dict[str, object]) -> list[Event]:
    kind = record.get("type")
    ts = fields.string(record.get("timestamp"))
    if kind == "session":
        return [_meta(record)]
    if kind == "model_change":
        return [_model(record)]
    if kind == "message":
        message = record.get("message")
        if isinstance(message, dict):
            return _message(record, message, ts)
        return [unknown("message", ts)]
    if kind == "compaction":
        summary = fields.string(record.get("summary")) or ""
        how = "extension" if record.get("fromHook") else "summary"
        return [make("compaction", ts=ts, preview=fields.preview(summary),
                     body=fields.text_body(summary) if summary else None, compaction=how)]
    if kind == "branch_summary":
        summary = fields.string(record.get("summary")) or ""
        return [make("bookkeeping", ts=ts, preview=fields.preview(summary),
                     body=fields.text_body(summary) if summary else None, type_name=kind)]
    if kind == "custom_message":
        return [_custom(record, ts)]
    if isinstance(kind, str) and kind in _BOOKKEEPING:
        name = fields.string(record.get("name")) if kind == "session_info" else None
        return [make("bookkeeping", ts=ts, preview=fields.preview(name), type_name=kind)]
    return [unknown(kind if isinstance(kind, str) else "?", ts)]


def _meta(record: dict[str, object]) -> Event:
    return make("session_meta", ts=fields.string(record.get("timestamp")), agent=NAME,
                session_id=fields.string(record.get("id")), cwd=fields.string(record.get("cwd")),
                version=None, model=None)


def _model(record: dict[str, object]) -> Event:
    provider = fields.string(record.get("provider"))
    model = fields.string(record.get("modelId"))
    named = f"{provider}/{model}" if provider and model else model
    return make("session_meta", ts=fields.string(record.get("timestamp")), agent=NAME,
                session_id=None, cwd=None, version=None, model=named)


def _content(content: object) -> tuple[str, int]:
    """Text of a user or tool-result content (a string or blocks) and its image count."""
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    images = 0
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "image":
                images += 1
    return "\n".join(texts), images


def _message(record: dict[str, object], message: dict[str, object], ts: str | None) -> list[Event]:
    role = message.get("role")
    if role == "user":
        text, images = _content(message.get("content"))
        return [make("user_message", ts=ts, preview=fields.preview(text),
                     body=fields.text_body(text), bytes=fields.size(text), attachments=images)]
    if role == "assistant":
        return _assistant(message, ts)
    if role == "toolResult":
        text, _ = _content(message.get("content"))
        return [make("tool_result", ts=ts, preview=fields.preview(text),
                     body=fields.text_body(text), call_id=fields.string(message.get("toolCallId")),
                     status="error" if message.get("isError") else "ok",
                     bytes=fields.size(text))]
    if role == "bashExecution":
        return _bash(record, message, ts)
    if role == "custom":
        return [_custom(message, ts)]
    if role == "compactionSummary":
        summary = fields.string(message.get("summary")) or ""
        return [make("compaction", ts=ts, preview=fields.preview(summary),
                     body=fields.text_body(summary) if summary else None, compaction="summary")]
    if role == "branchSummary":
        return [make("bookkeeping", ts=ts, type_name="message.branchSummary")]
    return [unknown(f"message.{role}" if isinstance(role, str) else "message", ts)]


def _assistant(message: dict[str, object], ts: str | None) -> list[Event]:
    out: list[Event] = []
    blocks = message.get("content")
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = fields.string(block.get("text")) or ""
            out.append(make("assistant_text", ts=ts, preview=fields.preview(text),
                            body=fields.text_body(text), bytes=fields.size(text)))
        elif kind == "thinking":
            text = fields.string(block.get("thinking")) or ""
            redacted = bool(block.get("redacted"))
            out.append(make("thinking", ts=ts, preview=None if redacted else fields.preview(text),
                            body=None if redacted else fields.text_body(text),
                            bytes=fields.size(text), redacted=redacted))
        elif kind == "toolCall":
            args = block.get("arguments")
            out.append(make("tool_call", ts=ts, preview=fields.arg_preview(args),
                            body=fields.json_body(args) if args is not None else None,
                            name=fields.string(block.get("name")) or "?",
                            call_id=fields.string(block.get("id")),
                            arg_keys=list(args) if isinstance(args, dict) else [],
                            bytes=fields.size(fields.compact(args)) if args is not None else 0))
        else:
            out.append(unknown(f"content.{kind}" if isinstance(kind, str) else "content", ts))
    usage = message.get("usage")
    if isinstance(usage, dict):
        counts = [fields.integer(usage.get(k)) for k in ("input", "output", "totalTokens")]
        cost = usage.get("cost")
        dollars = fields.number(cost.get("total")) if isinstance(cost, dict) else None
        if any(counts) or dollars:
            out.append(make("usage", ts=ts, input=counts[0], output=counts[1], total=counts[2],
                            context_window=None, cost_usd=dollars))
    stop = fields.string(message.get("stopReason"))
    if stop in _ENDS:
        said = fields.string(message.get("errorMessage"))
        out.append(make("turn_boundary", ts=ts, preview=fields.preview(said),
                        body=fields.text_body(said) if said else None, boundary="end",
                        reason=stop))
    return out


def _bash(record: dict[str, object], message: dict[str, object], ts: str | None) -> list[Event]:
    command = fields.string(message.get("command")) or ""
    output = fields.string(message.get("output")) or ""
    call_id = fields.string(record.get("id"))
    ok = message.get("exitCode") == 0 and not message.get("cancelled")
    return [make("tool_call", ts=ts, preview=fields.preview(command),
                 body=fields.json_body({"command": command}), name="bash", call_id=call_id,
                 arg_keys=["command"], bytes=fields.size(fields.compact({"command": command}))),
            make("tool_result", ts=ts, preview=fields.preview(output),
                 body=fields.text_body(output), call_id=call_id,
                 status="ok" if ok else "error", bytes=fields.size(output))]


def _custom(entry: dict[str, object], ts: str | None) -> Event:
    text, _ = _content(entry.get("content"))
    kind = fields.string(entry.get("customType")) or "custom"
    return make("attachment", ts=ts, preview=fields.preview(text),
                body=fields.text_body(text) if text else None, attachment=kind,
                bytes=fields.size(text))

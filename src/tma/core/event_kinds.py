"""The transcript event kinds and the keys each carries between `kind` and `ts`, in wire
order: the one table the protocol (tma.core.proto) and the transcript readers
(tma.core.transcript) both use. A module of its own so that neither imports the other
(`tma card` loads the protocol and must not load the transcript room)."""

from __future__ import annotations

KINDS: dict[str, tuple[str, ...]] = {
    "session_meta": ("agent", "session_id", "cwd", "version", "model"),
    "user_message": ("bytes", "attachments"),
    "assistant_text": ("bytes",),
    "thinking": ("bytes", "redacted"),
    "tool_call": ("name", "call_id", "arg_keys", "bytes"),
    "tool_result": ("call_id", "status", "bytes"),
    "permission_request": ("tool", "call_id"),
    "turn_boundary": ("boundary", "reason"),
    "usage": ("input", "output", "total", "context_window", "cost_usd"),
    "subagent_ref": ("child_id", "external_file"),
    "compaction": ("compaction",),
    "attachment": ("attachment", "bytes"),
    "bookkeeping": ("type_name",),
    "unknown": ("type_name",),
}

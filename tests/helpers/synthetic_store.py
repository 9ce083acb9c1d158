"""A tiny JSONL transcript store of the tests' own (tma.core.transcript's contract: one
record in, its events out, pure), so the framework's tests depend on no agent's store.

Records: `{"type": "meta", "session", "cwd", "version", "model"}` (says the session),
`user`, `assistant` (text and any tool `calls`: several events from one record),
`result`, `turn`, `noise` (bookkeeping); any other type is one `unknown` event. Every
record may carry `ts`. Files live at ~/.synthetic/<cwd with / as ->/<session>.jsonl
(`candidates`). Plug it in for an agent with TMA_TRANSCRIPT_STORES=claude=tests.helpers.synthetic_store
(the repo root on PYTHONPATH).
"""

from __future__ import annotations

import json

from tma.core.transcript.event import Event, make, unknown

NAME = "synthetic"


def _preview(text: str) -> str | None:
    """The first words: a window's 200 headers share 32 KiB, so a preview stays short."""
    words = " ".join(text.split())
    return words[:40] or None


def events(record: dict) -> list[Event]:
    kind, ts = record.get("type"), record.get("ts")
    ts = ts if isinstance(ts, str) else None
    if kind == "meta":
        out = session(record)
        return [out] if out is not None else []
    if kind == "user":
        text = str(record.get("text", ""))
        return [make("user_message", bytes=len(text.encode()), attachments=0, ts=ts,
                     preview=_preview(text), body=("text", text))]
    if kind == "assistant":
        text = str(record.get("text", ""))
        out = []
        if text:
            out.append(make("assistant_text", bytes=len(text.encode()), ts=ts,
                            preview=_preview(text), body=("text", text)))
        for call in record.get("calls") or ():
            args = call.get("input") or {}
            raw = json.dumps(args, separators=(",", ":"))
            out.append(make("tool_call", name=str(call.get("name", "")),
                            call_id=str(call.get("id", "")), arg_keys=sorted(args),
                            bytes=len(raw), ts=ts, preview=_preview(raw), body=("json", raw)))
        return out
    if kind == "result":
        output = str(record.get("output", ""))
        return [make("tool_result", call_id=record.get("id"),
                     status="ok" if record.get("ok") else "error", bytes=len(output.encode()),
                     ts=ts, preview=_preview(output), body=("text", output))]
    if kind == "turn":
        return [make("turn_boundary", boundary=str(record.get("boundary", "end")),
                     reason=record.get("reason"), ts=ts)]
    if kind == "noise":
        return [make("bookkeeping", type_name="noise", ts=ts)]
    return [unknown(kind if isinstance(kind, str) else "record", ts)]


def session(record: dict) -> Event | None:
    if record.get("type") != "meta":
        return None
    return make("session_meta", agent=NAME, session_id=str(record.get("session", "")),
                cwd=str(record.get("cwd", "")), version=str(record.get("version", "")),
                model=str(record.get("model", "")), ts=record.get("ts"))


def candidates(session_id: str, cwd: str, env) -> list[str]:
    home = env.get("HOME", "")
    return [f"{home}/.synthetic/{cwd.replace('/', '-')}/{session_id}.jsonl"]

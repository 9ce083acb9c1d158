"""`tma transcript` and `tma last` for a person, and their JSON documents.

A window (the protocol's frame) becomes the schema-1 document (schemas/transcript.schema.json)
or one line per event, newest first: its cursor, its time, its kind and what it says.
Whatever the agent wrote is cleaned before a terminal sees it (tma.core.untrusted: no
escape sequence, no reordering mark), a line to one line, a body keeping its lines.
"""

from __future__ import annotations

from tma.core import proto
from tma.core.untrusted import block, clean

SCHEMA = 1
LINE = 200  # the most characters of an event's text a line shows
BODY = 1 << 20


def document(window: proto.Window, pane: str, host: str | None = None) -> dict:
    """The window as `tma transcript --json` prints it: the frame's keys without its
    envelope's id and type, `pane` as it was named (HOST:%N over the fleet), `host`."""
    wire = proto.to_wire(window)
    out: dict = {"schema": SCHEMA, "pane": pane, "host": host}
    out.update((k, v) for k, v in wire.items() if k not in ("schema", "id", "t", "pane"))
    return out


def event_document(event: proto.Event, pane: str, host: str | None = None) -> dict:
    """One event as `tma transcript --event --json` prints it."""
    wire = proto.to_wire(event)
    return {"schema": SCHEMA, "pane": pane, "host": host,
            "event": {k: v for k, v in wire.items() if k not in ("schema", "id", "t")}}


def _what(e: dict) -> str:
    """An event's own keys in a few words."""
    kind = e["kind"]
    if kind == "tool_call":
        keys = ", ".join(e.get("arg_keys") or ())
        return f"{e.get('name')}({keys})"
    if kind == "tool_result":
        return f"{e.get('status')} {e.get('call_id') or ''}".rstrip()
    if kind == "permission_request":
        return f"{e.get('tool')} {e.get('call_id') or ''}".rstrip()
    if kind == "turn_boundary":
        return f"{e.get('boundary')}" + (f" ({e['reason']})" if e.get("reason") else "")
    if kind == "usage":
        return " ".join(f"{k} {e[k]}" for k in ("input", "output", "total", "context_window",
                                                "cost_usd") if e.get(k) is not None)
    if kind == "thinking":
        return "(redacted)" if e.get("redacted") else ""
    if kind == "user_message":
        n = e.get("attachments") or 0
        return f"[{n} attachment{'s' if n != 1 else ''}]" if n else ""
    if kind == "session_meta":
        return " ".join(str(e.get(k) or "") for k in ("session_id", "version", "model", "cwd"))
    if kind in ("bookkeeping", "unknown"):
        return str(e.get("type_name") or "")
    if kind == "subagent_ref":
        return str(e.get("child_id") or "")
    if kind in ("compaction", "attachment"):
        return str(e.get(kind) or "")
    return ""


def line(e: dict) -> str:
    """One event as a line: cursor, time, kind, its keys and its text (the body's first
    line when the body was read, else the preview)."""
    body = e.get("body")
    said = ""
    if body is not None and body.get("kind") == "text":
        said = next((x for x in body["text"].splitlines() if x.strip()), "")
    said = said or e.get("preview") or ""
    words = " ".join(w for w in (_what(e), said) if w)
    return "  ".join(clean(str(x), LINE) for x in (e["cursor"], e.get("ts") or "-", e["kind"],
                                                    words)).rstrip() + "\n"


def text(doc: dict) -> str:
    """A window document as lines, newest first, then where the next page starts."""
    out = [line(e) for e in doc["events"]]
    if doc.get("older"):
        out.append(f"(older: --before {clean(doc['older'], 256)})\n")
    return "".join(out)


def body(doc: dict) -> str:
    """One event's body as it was written (its JSON as text), else its line."""
    e = doc["event"]
    b = e.get("body")
    if b is None:
        return line(e)
    out = block(b["text"], BODY)
    return out if out.endswith("\n") else out + "\n"


def answer(texts: list[str]) -> str:
    """The last answer: the assistant's texts, oldest first, a blank line between."""
    out = "\n\n".join(block(t, BODY).strip("\n") for t in texts if t.strip())
    return out + "\n" if out else ""

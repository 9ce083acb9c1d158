"""What the store modules share: a record's values read defensively, an event's preview,
its body and its size (pure).

A transcript is the agent's file, not ours: any value may be missing or of another type
in a release we have not seen, so the readers here answer None (or an empty value)
rather than raise, and the store modules decide what that means.
"""

from __future__ import annotations

import json
import re

PREVIEW_CHARS = 80
_SPACE = re.compile(r"\s+")
# terminal escapes (a local command's coloured output) and other control characters
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def preview(text: str | None) -> str | None:
    """The first words of `text` on one line, at most PREVIEW_CHARS characters: cut at a
    word's end with `…` when longer (a single word longer than that is cut inside it),
    terminal escapes and control characters left out; None for no text or only white
    space."""
    if not text:
        return None
    line = _SPACE.sub(" ", _CONTROL.sub("", text)).strip()
    if not line:
        return None
    if len(line) <= PREVIEW_CHARS:
        return line
    head = line[:PREVIEW_CHARS - 1]
    cut = head.rfind(" ")
    if cut > 0:
        head = head[:cut]
    return head.rstrip() + "…"


def compact(value: object) -> str:
    """`value` as compact JSON (no spaces, non-ASCII kept): an event's json body."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(text: str) -> int:
    """The UTF-8 size of `text` in bytes: an event's `bytes`."""
    return len(text.encode("utf-8", "surrogatepass"))


def string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def obj(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def integer(value: object) -> int | None:
    """`value` when it is a JSON integer (a bool is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def first_string(value: object) -> str | None:
    """The first string among a JSON object's values, in their order: a tool call's
    preview (the command, the path, the description)."""
    for v in obj(value).values():
        if isinstance(v, str) and v.strip():
            return v
    return None

"""The small pieces every store module fills an event with (pure).

- `preview(text)`: the first words of a text on one line, at most PREVIEW_CHARS
  characters (whitespace runs, newlines included, become one space; a longer text is cut
  and ends with `…`), or None for a text with nothing in it.
- `size(text)`: its length in UTF-8 bytes (an event's `bytes`).
- `compact(obj)`: JSON without spaces, keys in their order, non-ASCII kept (a `json`
  body's text, and the measure of a tool call's arguments).
- `text_body(text)` / `json_body(obj)`: an event's body, ("text", …) or ("json", …).
- `iso_ms(ms)`: an epoch in milliseconds as the stores that keep numbers would have
  written it in ISO 8601 (`2026-12-06T20:47:51.115Z`), or None for anything else.
- `arg_preview(args)`: what a tool call's preview shows: its command, path, pattern or
  prompt when it has one, else its arguments as compact JSON.
- `parts_text(content)`: the text of a Gemini-shaped message content (a string, or its
  parts; thoughts left out) and how many parts are inline data or files (Gemini's and
  Qwen's stores, Qwen being its fork).
- `expand_home(path, env)`: `~` and `~/…` against the env's HOME (an agent's own
  directory variable, as its CLI reads it).
- `loads(raw)`: one record's JSON, with any lone surrogate (`"\\ud83d"`, what a writer
  that cut a string inside an emoji leaves) made U+FFFD: a string holding one cannot be
  encoded, so it would fail every reader downstream (a page's size, stdout, a child's
  environment).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PREVIEW_CHARS = 80

#: The argument a tool call is best known by, in the order looked for.
_MAIN_ARGS = ("command", "cmd", "file_path", "filePath", "path", "absolute_path", "pattern",
              "query", "url", "description", "prompt")


def preview(text: str | None) -> str | None:
    if not text:
        return None
    line = " ".join(text.split())
    if not line:
        return None
    if len(line) > PREVIEW_CHARS:
        return line[:PREVIEW_CHARS - 1] + "…"
    return line


def size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def text_body(text: str) -> tuple[str, str]:
    return ("text", text)


def json_body(obj: object) -> tuple[str, str]:
    return ("json", compact(obj))


def iso_ms(ms: object) -> str | None:
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return None
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def arg_preview(args: object) -> str | None:
    if isinstance(args, dict):
        for key in _MAIN_ARGS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return preview(value)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return preview(" ".join(value))
        if not args:
            return None
    return preview(compact(args))


def string(value: object) -> str | None:
    """`value` when it is a string, else None (the stores' optional text fields)."""
    return value if isinstance(value, str) else None


def integer(value: object) -> int | None:
    """`value` when it is a whole number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def loads(raw: str | bytes) -> object:
    """json.loads, with every string's lone surrogates replaced (see the module's list).
    Raises ValueError as json.loads does. Records without a `\\u` escape of a surrogate
    (nearly all) are returned as parsed, untouched."""
    doc = json.loads(raw)
    probe = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    if "\\ud" not in probe.lower():
        return doc
    return _whole(doc)


def _whole(obj: object) -> object:
    if isinstance(obj, str):
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in obj)
    if isinstance(obj, list):
        return [_whole(v) for v in obj]
    if isinstance(obj, dict):
        return {_whole(k): _whole(v) for k, v in obj.items()}
    return obj


def parts_text(content: object) -> tuple[str, int]:
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return "", 0
    texts: list[str] = []
    other = 0
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            if not part.get("thought"):
                texts.append(part["text"])
        elif "inlineData" in part or "fileData" in part:
            other += 1
    return "\n".join(texts), other


def expand_home(path: str, env: Mapping[str, str]) -> str:
    home = env.get("HOME") or "~"
    if path == "~":
        return home
    return home + path[1:] if path.startswith("~/") else path

"""Text for a terminal that cannot show every character: the one place output degrades.

`tma.cli.main` calls `degrade()` once, before any command runs, when stdout or stderr is
not UTF-8 (an ISO-8859-1 locale, say). From then on every write on those streams goes
through the `tma-ascii` error handler: a character the locale cannot encode becomes its
ASCII stand-in (the status glyphs, dashes, arrows), an accent-stripped letter, or `?`.
Nothing raises UnicodeEncodeError. JSON documents use `dumps()`, which escapes instead
(`\\u2733`), so a script reads the exact title whatever the locale.
"""

from __future__ import annotations

import codecs
import json
import sys
import unicodedata

HANDLER = "tma-ascii"

#: Stand-ins for the characters tma itself prints (glyphs of the status palette, rules of
#: the reports); agent titles fall through to the generic rule in `_ascii()`.
ASCII = {
    "⚑": "!", "●": "*", "○": "o", "✓": "v", "✗": "x", "✳": "*", "·": ".", "•": "*",
    "—": "-", "–": "-", "…": "...", "→": "->", "←": "<-", "↑": "^", "↓": "v", "▸": ">",
    "│": "|", "─": "-", "“": '"', "”": '"', "‘": "'", "’": "'", "≥": ">=", "≤": "<=",
    "×": "x", "✔": "v", "✘": "x", "⚠": "!", "⏳": "~", "⠋": "*",
}


def is_utf8(stream) -> bool:
    enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    return enc in ("utf8", "utf8sig")


def _ascii(ch: str) -> str:
    if ch in ASCII:
        return ASCII[ch]

    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if ord(c) < 128)
    return base or "?"


def _handle(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    out = "".join(_ascii(ch) for ch in bad)
    try:  # the stand-in itself must encode (an EBCDIC terminal is not our problem)
        out.encode(exc.encoding)
    except (UnicodeError, LookupError):
        out = "?" * len(bad)
    return out, exc.end


def _register() -> None:
    try:
        codecs.lookup_error(HANDLER)
    except LookupError:
        codecs.register_error(HANDLER, _handle)


def degrade(*streams) -> None:
    """Make each stream that is not UTF-8 substitute instead of raising."""
    _register()
    for stream in streams or (sys.stdout, sys.stderr):
        if stream is None or is_utf8(stream):
            continue
        try:
            stream.reconfigure(errors=HANDLER)
        except (AttributeError, ValueError, OSError):
            pass  # not a TextIOWrapper (a test's StringIO): it has no encoding to break


def safe(text: str, stream=None) -> str:
    """`text` as `stream` (stdout by default) can show it: for width arithmetic."""
    stream = stream or sys.stdout
    if is_utf8(stream):
        return text
    _register()
    enc = getattr(stream, "encoding", None) or "ascii"
    try:
        return text.encode(enc, HANDLER).decode(enc)
    except LookupError:
        return text


def dumps(doc) -> str:
    """A JSON document for stdout: UTF-8 as is, escaped (ensure_ascii) anywhere else."""
    return json.dumps(doc, ensure_ascii=not is_utf8(sys.stdout))

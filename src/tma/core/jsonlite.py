"""Top-level string fields of a JSON object, without the json module.

Every hook payload is JSON, but the hook path needs only a few top-level strings
(session_id, model, tool_use_id …); `json` pulls in `re` and costs the hot path
milliseconds. This scanner walks the top-level object once, skipping nested values,
and never raises: anything it cannot read yields no fields.
"""

from __future__ import annotations

_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WS = " \t\r\n"


def _string(s: str, i: int) -> tuple[str, int]:
    """Parse the string starting at s[i] == '"'; return (value, index after it)."""
    out: list[str] = []
    i += 1
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            i += 1
            if i >= n:
                break
            e = s[i]
            if e == "u":
                hexs = s[i + 1:i + 5]
                if len(hexs) != 4:
                    raise ValueError("bad \\u escape")
                code = int(hexs, 16)
                i += 4
                if 0xD800 <= code < 0xDC00 and s[i + 1:i + 3] == "\\u":
                    low = int(s[i + 3:i + 7], 16)
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                out.append(chr(code))
            elif e in _ESC:
                out.append(_ESC[e])
            else:
                raise ValueError("bad escape")
        else:
            out.append(c)
        i += 1
    raise ValueError("unterminated string")


def _skip(s: str, i: int) -> int:
    """Skip one JSON value starting at s[i]; return the index after it."""
    n = len(s)
    c = s[i]
    if c == '"':
        return _string(s, i)[1]
    if c in "{[":
        depth = 0
        while i < n:
            c = s[i]
            if c == '"':
                i = _string(s, i)[1]
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise ValueError("unterminated container")
    while i < n and s[i] not in ",}] \t\r\n":
        i += 1
    return i


def top_level(text: str, keys: tuple[str, ...]) -> dict[str, str]:
    """The named top-level fields whose values are strings (others are skipped)."""
    out: dict[str, str] = {}
    s = text
    n = len(s)
    i = 0
    try:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n or s[i] != "{":
            return {}
        i += 1
        while i < n:
            while i < n and s[i] in _WS + ",":
                i += 1
            if i >= n or s[i] == "}":
                break
            if s[i] != '"':
                return out
            key, i = _string(s, i)
            while i < n and s[i] in _WS:
                i += 1
            if i >= n or s[i] != ":":
                return out
            i += 1
            while i < n and s[i] in _WS:
                i += 1
            if i >= n:
                break
            if s[i] == '"':
                value, i = _string(s, i)
                if key in keys:
                    out[key] = value
            else:
                i = _skip(s, i)
    except (ValueError, IndexError):
        return out
    return out

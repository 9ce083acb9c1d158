"""Text from somewhere tma does not trust, made plain data.

A fleet host is a machine a person added (a dev box, a container, a CI runner): if it
is compromised, everything it says is the attacker's. The rules every value from a host
meets before any surface, format, log, file or argv sees it:

- a pane id is `%N` (ASCII digits), nothing else; a row whose pane is not is refused
  with a named problem (tma.core.inbound);
- a string loses its control characters (C0, DEL, C1: the bytes that start escape
  sequences, ring the bell, move the cursor or write the clipboard through OSC 52) and
  the invisible marks that reorder text (bidi overrides and isolates), and is cut to a
  length bound, marked with an ellipsis;
- a detail token keeps the token alphabet (`[a-z0-9_-]`) or becomes empty.

Pure: no I/O. The same `clean` serves a transport's stderr and a receiver's reply.
"""

from __future__ import annotations

#: The longest pane id taken: `%` and up to 10 digits (tmux counts from 0 upwards).
PANE_DIGITS = 10
#: A detail token's alphabet and length (no `re` here: the hot paths import this module).
TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
TOKEN_MAX = 64

#: What goes: C0 (tab and newline included: every value is one line), DEL, C1, and the
#: format characters that reorder or hide text (LRM/RLM, ALM, the embeddings, overrides
#: and isolates, the line and paragraph separators). Built on first use (a hot path
#: imports this module for `pane_id_ok` alone).
_DROP: dict[int, str | None] = {}


def _drop() -> dict[int, str | None]:
    if not _DROP:
        # built aside and published in one update: a thread of `tma web` that finds the
        # table non-empty finds it whole
        table: dict[int, str | None] = dict.fromkeys(
            [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
             *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029])
        # whitespace controls become a space, so words stay apart
        table.update({0x09: " ", 0x0A: " ", 0x0D: " ", 0x0B: " ", 0x0C: " ", 0x85: " "})
        _DROP.update(table)
    return _DROP


ELLIPSIS = "…"


def pane_id_ok(text: object) -> bool:
    """Is this a tmux pane id (`%3`)? Unicode digits (`%١`) are not."""
    return (isinstance(text, str) and 2 <= len(text) <= PANE_DIGITS + 1 and text[0] == "%"
            and text[1:].isascii() and text[1:].isdigit())


def clean(text: str, limit: int) -> str:
    """`text` with no control characters or reordering marks, at most `limit` characters
    (a cut ends in an ellipsis). Cut first, then cleaned: a megabyte costs no more than
    its first `limit * 4` characters."""
    if len(text) > limit * 4:
        text = text[: limit * 4]
    if not text.isascii() or not text.isprintable():
        text = text.translate(_drop())
    if len(text) > limit:
        text = text[: max(0, limit - 1)] + ELLIPSIS
    return text


_BLOCK: dict[int, str | None] = {}


def block(text: str, limit: int) -> str:
    """A text of many lines (a transcript event's body) made safe as `clean` makes a
    value, but keeping its newlines and tabs (a carriage return goes): at most `limit`
    characters, a cut one ending in an ellipsis."""
    if not _BLOCK:
        _BLOCK.update({**_drop(), 0x0A: "\n", 0x09: "\t", 0x0D: None})  # whole, at once
    if len(text) > limit * 4:
        text = text[: limit * 4]
    if not text.isascii() or not text.isprintable():
        text = text.translate(_BLOCK)
    if len(text) > limit:
        text = text[: max(0, limit - 1)] + ELLIPSIS
    return text


def opt_clean(text: str | None, limit: int) -> str | None:
    """`clean` for an optional value; an empty result is None."""
    if text is None:
        return None
    out = clean(text, limit)
    return out or None


def token(text: str | None) -> str | None:
    """A detail token as the contract spells them (`[a-z0-9_-]`), else None."""
    if text is None or not 0 < len(text) <= TOKEN_MAX or not TOKEN_CHARS.issuperset(text):
        return None
    return text


def lines(text: str, limit: int, max_lines: int = 20) -> str:
    """A multi-line text (a transport's stderr) made safe line by line: each line cleaned,
    blank lines dropped, at most the last `max_lines` kept, the whole at most `limit`."""
    kept = [clean(line, limit) for line in text.splitlines()[-4 * max_lines:]]
    kept = [line for line in kept if line.strip()][-max_lines:]
    out = "\n".join(kept)
    return out if len(out) <= limit else ELLIPSIS + out[-(limit - 1):]

"""How many terminal cells a string takes: an East Asian wide or fullwidth character two,
a combining mark or a zero-width one none, anything else one. The screens measure and cut
by this, not by len(): a title or a message in Chinese is twice as wide as it is long,
and a line cut by characters would spill onto the next row."""

from __future__ import annotations

import unicodedata


def char(c: str) -> int:
    if c < "\u0300":  # ASCII and Latin-1: one cell (controls are gone before this)
        return 1
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def cells(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(char(c) for c in text)


def clip(text: str, width: int) -> str:
    """The longest head of `text` that takes at most `width` cells."""
    if text.isascii() or width <= 0:
        return text[:max(width, 0)]
    used = 0
    for i, c in enumerate(text):
        used += char(c)
        if used > width:
            return text[:i]
    return text


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken at spaces where it can be and
    inside a word (CJK has no spaces) where it cannot; spaces at a break dropped."""
    width = max(width, 1)
    out: list[str] = []
    line, used = "", 0
    for word in text.split():
        w = cells(word)
        if line and used + 1 + w <= width:
            line, used = f"{line} {word}", used + 1 + w
            continue
        if line:
            out.append(line)
        while w > width:
            head = clip(word, width) or word[0]  # a wide character wider than the line
            out.append(head)
            word = word[len(head):]
            w = cells(word)
        line, used = word, w
    if line:
        out.append(line)
    return out

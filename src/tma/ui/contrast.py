"""WCAG contrast for tmux colour strings, measured on xterm's default palette.

The status line draws each count as a chip: the class colour is the background and the
text is black or white, whichever contrasts more, so a count reads on any bar (tmux's
default green one, a dark theme, a light theme) without knowing the bar's colours.
Pure and import-free: `tma status` runs it on every status-interval.
"""

from __future__ import annotations

# xterm's default 16 colours (XTerm-col.ad), the palette most terminals start from
_ANSI16 = (
    (0x00, 0x00, 0x00), (0xCD, 0x00, 0x00), (0x00, 0xCD, 0x00), (0xCD, 0xCD, 0x00),
    (0x00, 0x00, 0xEE), (0xCD, 0x00, 0xCD), (0x00, 0xCD, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x7F, 0x7F, 0x7F), (0xFF, 0x00, 0x00), (0x00, 0xFF, 0x00), (0xFF, 0xFF, 0x00),
    (0x5C, 0x5C, 0xFF), (0xFF, 0x00, 0xFF), (0x00, 0xFF, 0xFF), (0xFF, 0xFF, 0xFF),
)
_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
_CUBE = (0, 95, 135, 175, 215, 255)

BLACK = "colour16"   # #000000 in the fixed cube: themes remap "black", rarely colour16
WHITE = "colour231"  # #ffffff


def rgb(colour: str) -> tuple[int, int, int] | None:
    """A tmux colour string as RGB, or None (default, terminal, or not a colour)."""
    c = colour.strip().lower()
    if c.startswith("#") and len(c) == 7:
        try:
            return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)
        except ValueError:
            return None
    if c in _NAMES:
        return _ANSI16[_NAMES.index(c)]
    if c.startswith("bright") and c[6:] in _NAMES:
        return _ANSI16[8 + _NAMES.index(c[6:])]
    for prefix in ("colour", "color"):
        if c.startswith(prefix) and c[len(prefix):].isdigit():
            return _indexed(int(c[len(prefix):]))
    if c.isdigit() and int(c) < 8:
        return _ANSI16[int(c)]
    if c in ("gray", "grey", "darkgray", "darkgrey"):
        return _ANSI16[8] if c.startswith("dark") else _ANSI16[7]
    return None


def _indexed(n: int) -> tuple[int, int, int] | None:
    if n < 16:
        return _ANSI16[n]
    if n < 232:
        n -= 16
        return _CUBE[n // 36], _CUBE[n // 6 % 6], _CUBE[n % 6]
    if n < 256:
        v = 8 + (n - 232) * 10
        return v, v, v
    return None


def luminance(c: tuple[int, int, int]) -> float:
    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = c
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ink(background: str) -> str | None:
    """Black or white text for a chip of this colour; None when the colour is unknown."""
    bg = rgb(background)
    if bg is None:
        return None
    return BLACK if ratio(bg, (0, 0, 0)) >= ratio(bg, (255, 255, 255)) else WHITE

"""The status counts read on tmux's default bar (black on green), a dark and a light theme.

Each check reads the segment `tma status` emits, applies its `#[...]` styles the way tmux
draws a status line (a colour of `default` is the bar's own), and measures the WCAG
contrast of every visible character against the background it lands on. Before chips,
idle was green on the green default bar (1:1) and working yellow on green (1.3:1).
"""

from __future__ import annotations

import pytest

from tma.runtime.config import STATUS_DEFAULTS, Config
from tma.ui import contrast, status as render

BARS = {
    "tmux default (black on green)": ("black", "green"),
    "dark theme": ("#d0d0d0", "#1c1c1c"),
    "light theme": ("#303030", "#fafafa"),
}
ALL = dict.fromkeys(render.CLASS_ORDER, 3)


def drawn(segment: str, bar: tuple[str, str]) -> list[tuple[str, str, str]]:
    """(char, fg, bg) for every character tmux would draw from this segment."""
    fg, bg = bar
    out = []
    i = 0
    while i < len(segment):
        if segment.startswith("#[", i):
            end = segment.index("]", i)
            for item in segment[i + 2:end].split(","):
                key, _, value = item.partition("=")
                if key == "default":
                    fg, bg = bar
                elif key == "fg":
                    fg = bar[0] if value == "default" else value
                elif key == "bg":
                    bg = bar[1] if value == "default" else value
                else:
                    assert key in ("range", "norange"), f"unexpected style {item!r}"
            i = end + 1
            continue
        out.append((segment[i], fg, bg))
        i += 1
    return out


def worst(segment: str, bar: tuple[str, str]) -> float:
    ratios = []
    for ch, fg, bg in drawn(segment, bar):
        if ch.isspace():
            continue
        f, b = contrast.rgb(fg), contrast.rgb(bg)
        assert f is not None and b is not None, (fg, bg)
        ratios.append(contrast.ratio(f, b))
    return min(ratios)


def test_palette_is_xterms():
    assert contrast.rgb("green") == (0, 205, 0)
    assert contrast.rgb("colour244") == (128, 128, 128)
    assert contrast.rgb("#5f87ff") == (0x5F, 0x87, 0xFF)
    assert contrast.ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21)


@pytest.mark.parametrize("bar", BARS, ids=list(BARS))
@pytest.mark.parametrize("cls", render.CLASS_ORDER)
def test_every_default_count_reads_on_the_bar(bar, cls):
    segment = render.tmux(dict(dict.fromkeys(render.CLASS_ORDER, 0), **{cls: 2}),
                          Config().status)
    assert segment, cls
    assert worst(segment, BARS[bar]) >= 4.5, (cls, bar, segment)


@pytest.mark.parametrize("bar", BARS, ids=list(BARS))
def test_the_bar_gets_its_colours_back_after_the_counts(bar):
    segment = render.tmux(ALL, Config().status) + "rest"
    tail = drawn(segment, BARS[bar])[-4:]
    assert {(fg, bg) for _, fg, bg in tail} == {BARS[bar]}


@pytest.mark.parametrize("colour", ["#ffff00", "#202020", "colour250", "brightblue", "blue"])
def test_a_configured_colour_gets_readable_text_too(colour):
    palette = {cls: (g, colour) for cls, (g, _) in STATUS_DEFAULTS.items()}
    for bar in BARS.values():
        assert worst(render.tmux(ALL, palette), bar) >= 4.5

"""The page `tma web` serves (src/tma/web/static): three files that live under its strict
CSP (default-src 'self'): nothing inline, nothing from another origin, and agent text
never parsed as HTML. The browser tests (tests/integration/test_web_browser.py) drive it;
these read its text, so they run without a browser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "src" / "tma" / "web" / "static"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text = ""
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in in ("script", "style"):
            self.script_text += data.strip()


def _page() -> _Tags:
    p = _Tags()
    p.feed((STATIC / "index.html").read_text("utf-8"))
    return p


def test_the_page_is_three_files():
    assert sorted(f.name for f in STATIC.iterdir()) == ["app.css", "app.js", "index.html"]


def test_nothing_inline_and_nothing_from_elsewhere():
    page = _page()
    assert page.script_text == ""  # no inline script or style
    scripts = [a for t, a in page.tags if t == "script"]
    assert scripts == [{"type": "module", "src": "app.js"}]
    sheets = [a.get("href") for t, a in page.tags if t == "link" and a.get("rel") == "stylesheet"]
    assert sheets == ["app.css"]
    assert not [t for t, _ in page.tags if t == "style"]
    for tag, attrs in page.tags:
        assert "style" not in attrs, tag
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        for key in ("src", "href"):
            assert not re.match(r"(?i)\s*(https?:)?//|javascript:", attrs.get(key) or ""), attrs
    for name in ("app.js", "app.css"):
        text = (STATIC / name).read_text("utf-8")
        assert not re.search(r"https?://", text), name  # no CDN, no font or image from afar
        assert "@import" not in text


def test_agent_text_is_only_ever_text():
    js = (STATIC / "app.js").read_text("utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "setAttribute(\"style\"", ".style."):
        assert sink not in js, sink


def test_a_dispatch_carries_a_fresh_random_slot():
    js = (STATIC / "app.js").read_text("utf-8")
    assert "crypto.getRandomValues" in js
    assert re.search(r"slot: slot\(\)", js)

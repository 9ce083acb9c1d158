"""The screen rule engine: ANSI strip, regions, and per-state claims.

Priority decides among matched rules of one state (ties go to the rule listed
first); which state wins across states is the fold's ladder, not this module's.
"""

from __future__ import annotations

import re

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.manifest import Manifest, Rule

# CSI: ESC [ ... final byte 0x40-0x7E.  OSC: ESC ] ... BEL or ESC \.  Any other ESC
# drops itself and the next character.  Unterminated sequences run to the end.
_ANSI = re.compile(
    r"\x1b(?:\[[^\x40-\x7e]*[\x40-\x7e]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.?)", re.DOTALL
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def raw_lines(text: str) -> list[str]:
    """Split on \\n only: no phantom line after a trailing newline, trailing \\r dropped.

    Not str.splitlines(), which also splits on \\x0b, \\x0c, \\x1c-\\x1e, \\x85 and
    \\u2028 and so would move the tail_lines(N) window on real captures.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class Screen(Record):
    """What a rule can read: the captured body, the pane height and the title.

    height None: unknown, `visible` reads everything. The records of this module are
    built per captured pane, so they spell out their __init__ (no dataclasses: they
    import `inspect`, which a cold refresh cannot afford)."""

    __slots__ = ("body", "title", "height")
    _fields = (("body", ""), ("title", ""), ("height", None))

    def __init__(self, body: str, title: str = "", height: int | None = None) -> None:
        self.body = body
        self.title = title
        self.height = height

    def region_lines(self, rule: Rule) -> list[str]:
        region = rule.region
        if region.kind == "title":
            return [strip_ansi(self.title)]
        lines = raw_lines(self.body)
        if region.kind == "tail_lines":
            tail = lines[-region.lines:]
        elif self.height is not None and self.height > 0:
            tail = lines[-self.height:]
        else:
            tail = lines
        return raw_lines(strip_ansi("\n".join(tail)))


class RuleReport(Record):
    __slots__ = ("rule", "matched")
    _fields = (("rule", None), ("matched", False))

    def __init__(self, rule: Rule, matched: bool) -> None:
        self.rule = rule
        self.matched = matched


class Claim(Record):
    """The winning rule of one state."""

    __slots__ = ("state", "detail", "rule")
    _fields = (("state", ""), ("detail", ""), ("rule", None))

    def __init__(self, state: str, detail: str, rule: Rule) -> None:
        self.state = state
        self.detail = detail
        self.rule = rule

    @property
    def source(self) -> str:
        return "title" if self.rule.region.kind == "title" else "screen"


class EngineResult(Record):
    __slots__ = ("reports", "claims", "history_view")
    _fields = (("reports", ()), ("claims", None), ("history_view", False))

    def __init__(self, reports: tuple[RuleReport, ...], claims: dict[str, Claim] | None = None,
                 history_view: bool = False) -> None:
        self.reports = reports
        self.claims = {} if claims is None else claims
        self.history_view = history_view

    def claim(self, state: str) -> Claim | None:
        return self.claims.get(state)


def evaluate(manifest: Manifest, screen: Screen) -> EngineResult:
    """Run every rule; keep at most one claim per state (highest priority, then first)."""
    cache: dict[tuple[str, int], tuple[str, list[str]]] = {}
    reports = []
    claims: dict[str, Claim] = {}
    history = False
    for rule in manifest.rules:
        key = (rule.region.kind, rule.region.lines)
        if key not in cache:
            lines = screen.region_lines(rule)
            cache[key] = ("\n".join(lines), lines)
        text, lines = cache[key]
        matched = rule.match.matches(text, lines)
        reports.append(RuleReport(rule, matched))
        if not matched:
            continue
        if rule.skip_state_update:
            history = True
            continue
        best = claims.get(rule.state)
        if best is None or rule.priority > best.rule.priority:
            detail = manifest.normalize_detail(rule.detail) if rule.detail else ""
            claims[rule.state] = Claim(rule.state, detail, rule)
    return EngineResult(tuple(reports), claims, history)

"""The screen rule engine: ANSI strip, regions, and per-state claims.

Priority decides among matched rules of one state (ties go to the rule listed
first); which state wins across states is the fold's ladder, not this module's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Screen:
    """What a rule can read: the captured body, the pane height and the title."""

    body: str
    title: str = ""
    height: int | None = None  # None: unknown, `visible` reads everything

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


@dataclass(frozen=True)
class RuleReport:
    rule: Rule
    matched: bool


@dataclass(frozen=True)
class Claim:
    """The winning rule of one state."""

    state: str
    detail: str
    rule: Rule

    @property
    def source(self) -> str:
        return "title" if self.rule.region.kind == "title" else "screen"


@dataclass(frozen=True)
class EngineResult:
    reports: tuple[RuleReport, ...]
    claims: dict[str, Claim] = field(default_factory=dict)
    history_view: bool = False

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

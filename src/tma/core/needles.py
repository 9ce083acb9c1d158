"""The literal text a regex's every match contains, found once per pattern.

A cold refresh runs every rule of an agent's manifest against its pane's screen, and
most rules do not match most screens; a rule's regex then costs its compile (the
manifest cache defers it to first use) and a search of every line. A regex whose every
match must contain one of a few literal strings cannot match a text holding none of
them, and `needle in text` is far cheaper than either. So a pattern is parsed once,
when the runtime first learns it (the result is cached with its group names), and a
matcher asks its needles before it compiles or searches.

`needles(pattern)` is a tuple of strings at least one of which every match contains, or
None when no such set is known (case-insensitive parts, a class, a bare repeat, …): a
None only costs the shortcut, never a wrong answer. Pure: `re`'s own parser, no I/O.
"""

from __future__ import annotations

import re

try:  # re's own parser (loaded with re): another Python's may differ, then no shortcut
    from re import _constants as c, _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python without them
    _parser = None

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_Need = frozenset[str] | None  # any of these strings must occur; None: nothing known


def needles(pattern: str) -> tuple[str, ...] | None:
    if _parser is None:
        return None
    try:
        parsed = _parser.parse(pattern)
        if parsed.state.flags & re.IGNORECASE:
            return None
        found = _sequence(list(parsed), c)
    except Exception:  # a parser of another Python: no shortcut, never a wrong one
        return None
    if not found or "" in found:
        return None
    return tuple(sorted(found))


def _sequence(items: list[tuple[Any, Any]], c: Any) -> _Need:
    """The most selective requirement among a concatenation's parts: any one of them is
    required, so the one whose shortest string is longest is kept."""
    best: _Need = None
    run: list[str] = []

    def keep(need: _Need) -> None:
        nonlocal best
        if need and "" not in need and (best is None or min(map(len, need)) > min(map(len, best))):
            best = need

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            keep(frozenset(("".join(run),)))
            run = []
        keep(_item(op, av, c))
    if run:
        keep(frozenset(("".join(run),)))
    return best


def _item(op: Any, av: Any, c: Any) -> _Need:
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & re.IGNORECASE:
            return None
        return _sequence(list(sub), c)
    if op is c.ATOMIC_GROUP:
        return _sequence(list(av), c)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return _sequence(list(sub), c) if low >= 1 else None
    if op is c.BRANCH:
        _none, alternatives = av
        union: set[str] = set()
        for alt in alternatives:
            need = _sequence(list(alt), c)
            if not need:
                return None  # one alternative needs nothing: the branch needs nothing
            union |= need
        return frozenset(union)
    return None  # a class, any char, an anchor, a lookaround, a backreference

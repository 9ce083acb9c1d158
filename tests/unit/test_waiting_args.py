"""tma.runtime.waiting.from_args: `tma wait`'s target, timeout and usage errors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tma.core.errors import UsageError
from tma.runtime import waiting
from tma.runtime.selectors import Selector


def _args(**kw):
    base = dict(until="idle", since=None, timeout=None, pane=None, all=False, count=None,
                any=False)
    return SimpleNamespace(**{**base, **kw})


@pytest.mark.parametrize("kw, sel, kind", [
    (dict(pane="%1"), Selector(), waiting.PANE), (dict(all=True), Selector(), waiting.ALL),
    (dict(count="2"), Selector(), waiting.COUNT), (dict(any=True), Selector(), waiting.ANY),
    ({}, Selector(agent="claude"), waiting.AGENT),
])
def test_the_target(kw, sel, kind):
    waiter, timeout = waiting.from_args(sel, _args(**kw))
    assert waiter.kind == kind and timeout is None


def test_the_goal_and_timeout():
    waiter, timeout = waiting.from_args(Selector(), _args(any=True, until="done,idle",
                                                          since="5", timeout="1.5"))
    assert waiter.goal.describe() == "done, idle since 5" and timeout == 1.5


@pytest.mark.parametrize("kw, sel, message", [
    ({}, Selector(), "name a target: --pane ID"),
    (dict(pane="%1"), Selector(agent="x"), "--pane names one pane"),
    (dict(pane=""), Selector(), "--pane needs a pane id"),
    (dict(count="0"), Selector(), "--count needs an integer >= 1, got '0'"),
    (dict(any=True, since="x"), Selector(), "--since needs an integer >= 0, got 'x'"),
    (dict(any=True, timeout="inf"), Selector(), "--timeout needs a number of seconds >= 0"),
    (dict(any=True, until="soon"), Selector(), "--until: invalid state 'soon'"),
])
def test_usage_errors(kw, sel, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(".", r"\.")):
        waiting.from_args(sel, _args(**kw))

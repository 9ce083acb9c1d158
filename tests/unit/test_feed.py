"""tma.runtime.feed: the policy the long-running surfaces share, against a Session
whose cycles are scripted (real rows, selector and Session; no tmux)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tma.core.codec import Stamp
from tma.runtime.cycle import Row
from tma.runtime.feed import Feed
from tma.runtime.selectors import Selector
from tma.runtime.session import Globals, Session
from tma.tmux.adapter import NoServer, Timeout, TmuxError
from tma.tmux.read import Pane


def _pane(pane_id: str, session: str = "s", path: str = "/nowhere") -> Pane:
    return Pane(pane_id=pane_id, pane_pid=1, session_name=session, window_index="0",
                pane_index="0", current_command="sh", window_activity=0, alternate_on=False,
                scroll_position=0, height=24, current_path=path, session_id="$0",
                window_id="@0", width=80, window_active=True, pane_active=True,
                tty="/dev/pts/0", title="", options={})


def _row(pane_id: str, agent: str = "claude", state: str = "idle") -> Row:
    return Row(pane=_pane(pane_id), stamp=Stamp(state=state), agent=agent)


class Scripted(Session):
    """A Session whose cycles and config reloads answer from a script: each cycle
    entry is a list of rows or an exception; each reload entry an error text or None."""

    def __init__(self, cycles, reloads=(), cycle_warns=()) -> None:
        self.said: list[str] = []
        super().__init__(Globals(), env={}, warn=self.said.append)
        self.cycles, self.reloads = list(cycles), list(reloads)
        self.cycle_warns = list(cycle_warns)
        self.calls: list[dict] = []
        self.reloaded = 0

    def reload_config(self):
        self.reloaded += 1
        return self.reloads.pop(0) if self.reloads else None

    def cycle(self, **kw):
        self.calls.append(kw)
        if kw["warn"] is not None:
            for line in self.cycle_warns:
                kw["warn"](line)
        got = self.cycles.pop(0)
        if isinstance(got, Exception):
            raise got
        return SimpleNamespace(rows=got)


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, secs: float) -> None:
        self.slept.append(secs)
        self.now += secs


def test_the_config_is_reread_every_tick_but_the_first_and_a_broken_one_is_said_on_change():
    s = Scripted([[]] * 5, reloads=["bad A", "bad A", None, "bad A"])
    feed = Feed(s, None, slow="slow")
    problems = [feed.tick().problem for _ in range(5)]
    assert s.reloaded == 4  # not before the first tick: the Session read it just before
    assert problems == ["", "bad A", "bad A", "", "bad A"]  # the problem: every tick it lasts
    assert s.said == ["bad A\n", "bad A\n"]  # stderr: when it changes, and again after a fix


def test_the_cycles_complaints_are_said_once_however_many_ticks_repeat_them():
    s = Scripted([[]] * 3, cycle_warns=["tma: one", "tma: two\n"])
    feed = Feed(s, None, slow="slow")
    for _ in range(3):
        feed.tick()
    assert s.said == ["tma: one\n", "tma: two\n"]
    assert all(c["report"] and c["produce"] for c in s.calls)


def test_a_slow_tmux_costs_a_tick_said_once_and_other_tmux_errors_reach_the_boundary():
    s = Scripted([[_row("%1")], Timeout("t"), Timeout("t"), [_row("%2")], TmuxError("boom")])
    feed = Feed(s, None, slow="tma: tmux slow to respond; still waiting")
    assert [r.pane.pane_id for r in feed.tick().rows] == ["%1"]
    lost = feed.tick()
    assert lost.result is None and lost.rows == []
    assert feed.tick().result is None
    assert [r.pane.pane_id for r in feed.tick().rows] == ["%2"]
    assert s.said == ["tma: tmux slow to respond; still waiting\n"]
    with pytest.raises(TmuxError):
        feed.tick()


def test_a_surface_that_owns_the_terminal_gets_tmux_trouble_as_the_ticks_problem():
    s = Scripted([[_row("%1")], TmuxError("boom"), Timeout("late"), NoServer("gone")],
                 reloads=[None, None, None], cycle_warns=["tma: noise"])
    feed = Feed(s, None)  # the picker: nothing on stderr
    feed.tick()
    assert feed.tick().problem == "tmux: boom"
    assert feed.tick().problem == "tmux: late"
    assert [r.pane.pane_id for r in feed.rows()] == ["%1"]  # the last good cycle's rows
    with pytest.raises(NoServer):
        feed.tick()
    assert s.said == []
    assert all(c["warn"] is None and not c["report"] for c in s.calls)


def test_repo_labels_are_reread_every_git_every_seconds_and_never_on_a_tick_that_does_not_produce():
    clock = Clock()
    s = Scripted([[]] * 5)
    feed = Feed(s, None, git_every=10, clock=clock)
    assert feed.tick(produce=False).git is None  # the picker's fast first frame
    assert s.calls[0]["produce"] is False
    first = feed.tick().git
    assert first is not None
    clock.now += 5
    assert feed.tick().git is first
    clock.now += 5
    second = feed.tick().git
    assert second is not first
    every_tick = Feed(Scripted([[]] * 2), None, clock=clock)  # git_every=0: wait, subscribe
    assert every_tick.tick().git is not every_tick.tick().git


def test_the_selector_keeps_its_rows_and_waits_for_repo_labels_it_needs():
    rows = [_row("%1", agent="claude"), _row("%2", agent="codex")]
    feed = Feed(Scripted([rows]), Selector(agent="codex"), slow="slow")
    tick = feed.tick()
    assert [r.pane.pane_id for r in tick.rows] == ["%2"]
    assert [r.pane.pane_id for r in tick.result.rows] == ["%1", "%2"]  # wait needs them all
    keep = feed.in_scope()
    assert keep is not None and [keep(r) for r in rows] == [False, True]
    assert Feed(Scripted([]), Selector(), slow="s").in_scope() is None

    by_repo = Feed(Scripted([rows]), Selector(repo="tma"))
    assert by_repo.tick(produce=False).rows == []  # no labels yet: nothing to select on


def test_pause_keeps_ticks_anchored_to_the_first_and_never_sleeps_past_the_deadline():
    clock = Clock()
    feed = Feed(Scripted([[]] * 3), None, every=1.0, clock=clock, sleep=clock.sleep)
    feed.tick()
    clock.now += 0.25  # the cycle took a quarter second
    feed.pause()
    assert clock.slept == [0.75] and clock.now == 1001.0
    feed.tick()
    clock.now += 1.5  # a slow cycle overran the next tick: it is skipped
    feed.pause()
    assert clock.slept[-1] == 0.5 and clock.now == 1003.0
    feed.tick()
    feed.pause(deadline=1003.25)
    assert clock.now == 1003.25

"""The daemon's stamping rounds (tma.daemon.stamper.take_round) and the spawn side
channel that keeps the daemon answering hooks while tmux runs (tma.tmux.spawn)."""

from __future__ import annotations

import os
import threading
from collections import deque

from hypothesis import given, strategies as st

from tma.daemon.stamper import take_round
from tma.runtime.hook import Batch
from tma.tmux import spawn


def _item(pane: str, n: int):
    return ([pane, "fake", f"k{n}", "{}", str(n), "scope"], None)


@given(st.lists(st.sampled_from(["%1", "%2", "%3", "%4"]), max_size=40),
       st.integers(min_value=1, max_value=5), st.integers(min_value=1, max_value=4))
def test_a_round_takes_each_panes_first_events_and_keeps_every_panes_order(panes, limit,
                                                                           per_pane):
    queue = deque(_item(p, i) for i, p in enumerate(panes))
    order = [(f[0], f[4]) for f, _t in queue]
    stamped = []
    while queue:
        before = list(queue)
        taken, queue = take_round(queue, limit, per_pane)
        assert taken, "a round always takes something"
        assert len(taken) <= limit
        ids = [f[0] for f, _t in taken]
        assert all(ids.count(i) <= per_pane for i in ids)
        # what a round takes of a pane is that pane's first waiting events, in order
        for pane in set(ids):
            mine = [f[4] for f, _t in before if f[0] == pane]
            assert [f[4] for f, _t in taken if f[0] == pane] == mine[:ids.count(pane)]
        stamped.extend((f[0], f[4]) for f, _t in taken)
    assert sorted(stamped) == sorted(order)
    for pane in set(panes):  # each pane's events in their arrival order
        assert [n for p, n in stamped if p == pane] == [n for p, n in order if p == pane]


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def source(self, lines):
        self.calls.append(list(lines))
        return "answer", ""

    def run(self, *args):
        return "ran"


def test_a_batch_sends_its_writes_in_one_spawn_and_an_answer_at_once():
    rec = _Recorder()
    batch = Batch(rec)
    assert batch.source(["a"]) == ("", "") and batch.source(["b"]) == ("", "")
    assert rec.calls == []
    assert batch.answer(["c"]) == ("answer", "")  # what waited goes first, in one spawn
    assert rec.calls == [["a", "b", "c"]]
    batch.source(["d"])
    batch.flush()
    assert rec.calls == [["a", "b", "c"], ["d"]]
    assert batch.run("x") == "ran"  # reads pass through


def test_the_side_channel_is_served_during_a_spawn_of_its_own_thread_only():
    """A readable fd of the side channel is handed to its callback inside the spawn."""
    r, w = os.pipe()
    calls: list[str] = []

    def callback(fd: int) -> None:
        assert fd == r
        calls.append(threading.current_thread().name)
        os.read(r, 1)

    spawn.set_side(lambda: [r], callback)
    try:
        os.write(w, b"x")
        rc, _out, _err = spawn.run(["sh", "-c", "sleep 0.2"])
        assert rc == 0 and calls == [threading.current_thread().name]
        os.write(w, b"y")  # another thread's spawn leaves it alone
        other = threading.Thread(target=spawn.run, args=(["sh", "-c", "sleep 0.1"],))
        other.start()
        other.join()
        assert len(calls) == 1
    finally:
        spawn.set_side(None)
        os.close(r)
        os.close(w)
    rc, _out, _err = spawn.run(["true"])
    assert rc == 0 and len(calls) == 1


def test_the_side_channel_asks_again_which_fds_to_watch_after_each_call():
    """A connection accepted inside the spawn is watched for the rest of it (the hook's
    bytes may come after its connect)."""
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    watched = [r1]
    got: list[int] = []

    def callback(fd: int) -> None:
        os.read(fd, 1)
        got.append(fd)
        if fd == r1:
            watched.append(r2)  # as an accept adds a parked connection
            os.write(w2, b"z")

    spawn.set_side(lambda: list(watched), callback)
    try:
        os.write(w1, b"x")
        rc, _out, _err = spawn.run(["sh", "-c", "sleep 0.3"])
        assert rc == 0 and got == [r1, r2]
    finally:
        spawn.set_side(None)
        for fd in (r1, w1, r2, w2):
            os.close(fd)


class _FlakyStamper:
    """A Stamper whose rounds fail (tmux timing out) a given number of times."""

    def __new__(cls, failures: int):
        from tma.daemon.stamper import Stamper
        from tma.tmux.adapter import TmuxError

        class Flaky(Stamper):
            def _round(self, taken, every):
                self.seen.append([f[4] for f, _t, _n in taken])
                if self.failures > 0:
                    self.failures -= 1
                    raise TmuxError("timed out")
                return True, None

        class _Daemon:
            logged: list[str] = []

            def log(self, line: str) -> None:
                self.logged.append(line)

        st = Flaky(_Daemon())
        st.failures, st.seen = failures, []
        return st


def test_an_acked_event_survives_a_round_tmux_refused():
    st = _FlakyStamper(failures=1)
    for n, pane in enumerate(["%1", "%2", "%1"]):
        st.put([pane, "fake", "Work", "{}", str(n), "scope"], None)
    assert st.stamp(None, lambda: 0) is False  # the failed round ends the turn
    assert [f[4] for f, _t, _n in st.queue] == ["0", "1", "2"]  # back, in order
    assert st.stamp(None, lambda: 0) is True
    assert st.seen == [["0", "1", "2"], ["0", "1", "2"]] and not st.queue and st.dropped == 0


def test_a_round_that_keeps_failing_is_given_up_and_counted():
    from tma.daemon.stamper import MAX_ATTEMPTS

    st = _FlakyStamper(failures=MAX_ATTEMPTS)
    st.put(["%1", "fake", "Work", "{}", "1", "scope"], None)
    for _ in range(MAX_ATTEMPTS):
        st.stamp(None, lambda: 0)
    assert not st.queue and st.dropped == 1

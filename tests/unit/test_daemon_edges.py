"""The daemon's activity gauge and the control-mode line parser, without tmux."""

from __future__ import annotations

from tma.daemon.edges import Edges
from tma.tmux import control

Q, ONSET, GAP = 600, 150, 250


def test_one_quiet_edge_per_burst_however_long():
    e = Edges(Q, ONSET, GAP)
    for t in range(0, 5000, 20):  # five seconds of output every 20 ms
        e.output("%1", t, working=True)
        assert e.take_due(t) == []
    assert e.take_due(5000 - 20 + Q - 1) == []
    assert e.take_due(5000 - 20 + Q) == ["%1"]
    assert e.take_due(100_000) == []  # consumed: nothing more until new output


def test_output_after_a_quiet_edge_read_arms_the_next_edge():
    """DAEMON.md D4a: there is no settle window after the threshold, because a read taken
    too early is never the last one: output that comes after it (late out of the kernel's
    buffers, the rest of a repaint) arms a quiet edge of its own, which reads again."""
    e = Edges(Q, ONSET, GAP)
    e.output("%1", 0, working=True)
    assert e.take_due(Q) == ["%1"]  # the edge's read
    e.output("%1", Q + 30, working=True)  # a late chunk, after the read
    assert e.take_due(Q + 30 + Q - 1) == []
    assert e.take_due(Q + 30 + Q) == ["%1"]  # read again, once the late output is quiet


def test_onset_reads_a_pane_not_yet_working_once_per_burst():
    e = Edges(Q, ONSET, GAP)
    e.output("%1", 0, working=False)
    for t in range(20, 140, 20):
        e.output("%1", t, working=False)
    assert e.take_due(ONSET) == ["%1"]  # while the burst still runs
    for t in range(160, 1000, 20):
        e.output("%1", t, working=False)
        assert e.take_due(t) == []  # same burst: no second onset
    assert e.take_due(980 + Q) == ["%1"]


def test_no_onset_for_a_pane_already_working():
    e = Edges(Q, ONSET, GAP)
    e.output("%1", 0, working=True)
    assert e.take_due(ONSET) == []
    assert e.take_due(Q) == ["%1"]


def test_reads_of_one_pane_keep_their_gap_and_are_not_dropped():
    e = Edges(Q, ONSET, GAP)
    e.output("%1", 0, working=False)
    assert e.take_due(ONSET) == ["%1"]
    e.follow_up("%1", ONSET + 10, ONSET)  # ignored: the quiet edge is still pending
    e.output("%1", 200, working=False)
    assert e.take_due(200 + Q) == ["%1"]
    e.output("%1", 900, working=True)
    assert e.take_due(900 + Q - 100) == []
    assert e.next_due() == 900 + Q
    assert e.take_due(900 + Q) == ["%1"]


def test_follow_ups_back_off_until_new_output():
    e = Edges(Q, ONSET, GAP)
    e.output("%1", 0, working=True)
    assert e.take_due(Q) == ["%1"]
    now, waits = Q, []
    for _ in range(8):
        e.follow_up("%1", now + 10, now)  # the verdict keeps holding: read again soon
        due = e.next_due()
        waits.append(due - now)
        assert e.take_due(due) == ["%1"]
        now = due
    assert waits == [500, 1000, 2000, 4000, 8000, 16000, 32000, 32000]
    e.output("%1", now + 1, working=True)  # new output resets the backoff
    assert e.take_due(now + 1 + Q) == ["%1"]
    e.follow_up("%1", now + 1 + Q + 10, now + 1 + Q)
    assert e.next_due() == now + 1 + Q + 500


def test_twenty_streaming_panes_cost_one_onset_and_one_edge_each():
    e = Edges(Q, ONSET, GAP)
    reads = 0
    for t in range(0, 3000, 20):
        for n in range(20):
            e.output(f"%{n}", t, working=False)
        reads += len(e.take_due(t))
    assert reads == 20
    reads += len(e.take_due(3000 + Q))
    assert reads == 40


def test_the_map_is_capped_and_pruned():
    e = Edges(Q, ONSET, GAP)
    for n in range(5000):
        e.output(f"%{n}", n, working=True)
    assert len(e.panes) == 4096 and "%0" not in e.panes and "%4999" in e.panes
    e.keep_only({"%4999"})
    assert list(e.panes) == ["%4999"]


def test_notification_lines():
    p = control.parse_line
    assert p(b"%output %12 hello\\033[1mworld") == (control.OUTPUT, "%12")
    assert p(b"%extended-output %3 120 : data") == (control.OUTPUT, "%3")
    assert p(b"%sessions-changed") == (control.SESSIONS_CHANGED,)
    assert p(b"%session-changed $1 main") == (control.SESSION_CHANGED, "$1")
    assert p(b"%window-add @4") == (control.WINDOW_ADD, "@4")
    assert p(b"%unlinked-window-close @9") == (control.WINDOW_CLOSE, "@9")
    assert p(b"%layout-change @1 a1b2,80x24,0,0,1 a1b2,80x24,0,0,1 *") == (control.LAYOUT, "@1")
    assert p(b"%pane-mode-changed %7") == (control.PANE_MODE, "%7")
    assert p(b"%exit server exited") == (control.EXIT, "server exited")
    assert p(b"%exit") == (control.EXIT, "")
    assert p(b"%client-detached /dev/pts/3") is None
    assert p(b"plain text") is None


def test_command_replies_are_not_events_and_long_lines_are_cut():
    r = control.LineReader()
    lines = r.feed(b"%begin 1 2 0\n%output %1 not an event\n%end 1 2 0\n%output %2 x\n")
    assert lines == [b"%output %2 x"]
    assert r.feed(b"%output %3 " + b"a" * (control.LINE_CAP + 10)) == [
        b"%output %3 " + b"a" * (128 - len(b"%output %3 "))]
    assert r.feed(b"still the same line\n%window-add @2\n") == [b"%window-add @2"]
    assert len(r._buf) == 0


def test_a_burst_on_an_agent_not_yet_working_is_read_again_while_it_lasts():
    # the Enter that submits a prompt starts the burst; the onset read comes before the
    # spinner is drawn, and the spinner never lets the burst end
    e = Edges(Q, ONSET, GAP, burst_ms=500)
    e.output("%1", 0, working=False, agent=True)
    assert e.take_due(ONSET) == ["%1"]  # read: still idle on screen
    reads = []
    for t in range(ONSET + 20, 4400, 20):
        e.output("%1", t, working=False, agent=True)
        reads += [t for _ in e.take_due(t)]
    assert reads and reads[0] - ONSET <= 500 + 20
    # the wait doubles from the second re-read on: 0.5 s, 0.5 s, 1 s, 2 s (a screen moving
    # under idle chrome)
    gaps = [b - a for a, b in zip([ONSET, *reads], reads, strict=False)]
    assert [round(g / 500) for g in gaps] == [1, 1, 2, 4], gaps
    # once a read says working, the rest of the burst waits for its quiet edge
    e.output("%1", 4400, working=True, agent=True)
    for t in range(4420, 6000, 20):
        e.output("%1", t, working=True, agent=True)
        assert e.take_due(t) == []
    assert e.take_due(5980 + Q) == ["%1"]
    # a new burst starts the re-reads over at 0.5 s
    reads = []
    for t in range(10_000, 11_000, 10):
        e.output("%1", t, working=False, agent=True)
        reads += [t for _ in e.take_due(t)]
    assert reads == [10_000 + ONSET, 10_000 + ONSET + 500]  # 0.5 s again: a new burst


def test_a_burst_on_a_pane_with_no_agent_is_not_read_again():
    e = Edges(Q, ONSET, GAP, burst_ms=500)
    e.output("%1", 0, working=False)
    assert e.take_due(ONSET) == ["%1"]
    for t in range(ONSET + 20, 3000, 20):  # a build log in a shell: no stamp, no re-read
        e.output("%1", t, working=False)
        assert e.take_due(t) == []

"""Where a jump goes (tma.core.nav: the acting client, the orderings, the trail) and what
tma.runtime.navigate does with it short of moving a client (notes, menu labels, argv)."""

from __future__ import annotations

import pytest

from tma.core import nav
from tma.core.codec import Stamp
from tma.core.errors import NoPane
from tma.runtime import navigate
from tma.runtime.config import Config
from tma.runtime.cycle import Result, Row
from tma.runtime.session import Globals, Session
from tma.tmux.read import Client, Pane, Snapshot


def pane(pane_id: str, locator: str = "") -> Pane:
    session, _, rest = (locator or f"s:0.{pane_id[1:]}").partition(":")
    window, _, index = rest.partition(".")
    return Pane(pane_id=pane_id, pane_pid=1, session_name=session, window_index=window,
                pane_index=index, current_command="claude", window_activity=0,
                alternate_on=False, scroll_position=0, height=24, current_path="/",
                session_id="$0", window_id="@0", width=80, window_active=True,
                pane_active=False, tty="/dev/pts/0", title="", options={})


def row(pane_id: str, state: str = "idle", since: int = 0, attention: bool = False,
        locator: str = "") -> Row:
    return Row(pane=pane(pane_id, locator),
               stamp=Stamp(state=state, since=since, attention=attention), agent="claude")


def ids(rows) -> list[str]:
    return [r.pane.pane_id for r in rows]


def client(name: str, activity: int, session: str = "s", control: bool = False,
           pane_id: str = "") -> Client:
    return Client(name=name, pane_id=pane_id, activity=activity, control_mode=control,
                  session_name=session)


# ---------------------------------------------------------------- the client


def test_the_named_client_wins_even_in_control_mode():
    cs = [client("a", 5), client("cc", 1, control=True)]
    assert nav.pick_client(cs, [], "cc", None).name == "cc"
    with pytest.raises(nav.NoClient, match="no tmux client named 'zz'"):
        nav.pick_client(cs, [], "zz", None)


def test_the_most_recent_client_on_my_session_then_anywhere():
    cs = [client("a", 9, session="other"), client("b", 3, session="s"),
          client("c", 5, session="s")]
    panes = [pane("%1", "s:0.0")]
    assert nav.pick_client(cs, panes, None, "%1").name == "c"
    assert nav.pick_client(cs, panes, None, None).name == "a"
    assert nav.pick_client(cs, panes, None, "%99").name == "a"  # a pane tma cannot see


def test_control_mode_clients_are_never_picked_implicitly():
    with pytest.raises(nav.NoClient, match="no attached tmux client"):
        nav.pick_client([client("cc", 9, control=True)], [], None, None)
    with pytest.raises(nav.NoClient):
        nav.pick_client([], [], None, None)


# ---------------------------------------------------------------- the orderings


def test_attention_blocked_longest_first_then_done_and_ties_by_position():
    rows = [row("%1", "idle", since=100, attention=True), row("%2", "blocked", since=500),
            row("%3", "blocked", since=200), row("%4", "working", since=1),
            row("%5", "idle", since=50), row("%6", "blocked", since=200, locator="a:0.0"),
            row("%7", "blocked", since=0)]
    # a tie on `since` goes by place (session a before s); never stamped sorts last
    assert ids(nav.attention_order(rows)) == ["%6", "%3", "%2", "%7", "%1"]
    assert nav.attention_order([]) == []
    assert nav.attention_order([row("%1", "working")]) == []


def test_longest_blocked():
    rows = [row("%1", "blocked", since=300), row("%2", "blocked", since=100),
            row("%3", "idle", since=1)]
    assert nav.longest_blocked(rows).pane.pane_id == "%2"
    assert nav.longest_blocked([row("%3", "idle")]) is None
    assert nav.longest_blocked([]) is None
    tie = [row("%9", "blocked", since=5, locator="b:0.0"),
           row("%8", "blocked", since=5, locator="a:1.0")]
    assert nav.longest_blocked(tie).pane.pane_id == "%8"


def test_after_wraps_and_starts_at_the_first_when_off_the_list():
    ordered = [row("%1"), row("%2"), row("%3")]
    assert nav.after(ordered, "%1").pane.pane_id == "%2"
    assert nav.after(ordered, "%3").pane.pane_id == "%1"
    assert nav.after(ordered, "%7").pane.pane_id == "%1"
    assert nav.after(ordered, None).pane.pane_id == "%1"
    assert nav.after([row("%1")], "%1").pane.pane_id == "%1"  # the only one: itself


def test_next_by_position_orders_numerically_and_wraps():
    rows = [row("%1", locator="s:10.0"), row("%2", locator="s:2.0"),
            row("%3", locator="s:2.1"), row("%4", locator="t:0.0")]
    assert nav.next_by_position(rows, ("s", 2, 0)).pane.pane_id == "%3"
    assert nav.next_by_position(rows, ("s", 2, 1)).pane.pane_id == "%1"  # 10 after 2
    assert nav.next_by_position(rows, ("t", 0, 0)).pane.pane_id == "%2"  # wraps
    assert nav.next_by_position(rows, None).pane.pane_id == "%2"


def test_menu_order_by_state_then_longest_in_it():
    rows = [row("%1", "idle", since=10), row("%2", "unknown"), row("%3", "working", since=9),
            row("%4", "blocked", since=50), row("%5", "working", since=2),
            row("%6", "odd-state")]
    assert ids(nav.menu_order(rows)) == ["%4", "%5", "%3", "%1", "%2", "%6"]


@pytest.mark.parametrize("ms,text", [(-5, "0s"), (59_999, "59s"), (60_000, "1m"),
                                     (3_599_999, "59m"), (3_600_000, "1h"),
                                     (86_399_999, "23h"), (86_400_000, "1d")])
def test_age(ms, text):
    assert nav.age(ms) == text


# ---------------------------------------------------------------- the trail


def test_push_prunes_dead_no_repeat_and_caps():
    assert nav.push([], "%1") == ["%1"]
    assert nav.push(["%1", "%2"], "%2") == ["%1", "%2"]
    assert nav.push(["%1", "%2"], "") == ["%1", "%2"]  # a jump to the pane shown now
    assert nav.push(["%1", "%2"], "%3", live={"%2", "%3"}) == ["%2", "%3"]
    full = [f"%{n}" for n in range(nav.TRAIL_CAP)]
    assert nav.push(full, "%99") == full[1:] + ["%99"]


def test_back_pops_the_newest_live_entry_that_is_not_here():
    live = {"%1", "%2", "%4"}
    assert nav.back(["%1", "%2", "%3"], live, "%4") == ("%2", ["%1"])  # %3 closed
    assert nav.back(["%1", "%4"], live, "%4") == ("%1", [])  # the pane shown now: skipped
    assert nav.back(["%3", "%5"], live, "%1") == (None, [])  # all closed: nowhere
    assert nav.back([], live, "%1") == (None, [])


def test_back_and_forth_wraps_between_two_panes():
    # jump %1 -> %2 records %1; back to %1 empties the trail; a jump again records %2
    trail = nav.push([], "%1")
    target, trail = nav.back(trail, {"%1", "%2"}, "%2")
    assert (target, trail) == ("%1", [])
    trail = nav.push(trail, "%1")
    assert nav.back(trail, {"%1", "%2"}, "%2") == ("%1", [])


def test_home_is_the_oldest_live_entry():
    assert nav.home(["%3", "%1", "%2"], {"%1", "%2"}) == "%1"
    assert nav.home(["%3"], {"%1"}) is None
    assert nav.home([], {"%1"}) is None


# ---------------------------------------------------------------- tma.runtime.navigate


def navigator(rows, panes=(), sel=None, **g):
    said: list[str] = []
    session = Session(Globals(**g), env={"TMUX_PANE": "%1"}, warn=said.append)
    snap = Snapshot(panes=[r.pane for r in rows] + list(panes), clients=[],
                    socket_path="/tmp/sock")
    result = Result(snap, rows, None, [], [], [], None, {})
    return navigate.Navigator(session, result, sel), said


def test_nothing_to_jump_to_is_a_note_not_an_error():
    job, said = navigator([row("%1", "working")])
    assert job.forward("blocked") == 0
    assert job.forward("attention") == 0
    assert said == ["tma: no agent is blocked: nothing is waiting for your answer\n",
                    "tma: no agent is waiting for you: none is blocked and no finished "
                    "turn is unseen\n"]
    job, said = navigator([])
    assert job.forward("next") == 0
    assert said == ["tma: no agent panes to jump to: tma ls lists what tma sees\n"]


def test_to_pane_a_pane_without_an_agent_or_none_at_all():
    job, said = navigator([row("%1")], panes=[pane("%2")])
    assert job.to_pane("%2") == 0 and said == ["tma: no agent in pane %2\n"]
    with pytest.raises(NoPane):
        job.to_pane("%9")


def test_no_client_to_move():
    job, _ = navigator([row("%1")])
    with pytest.raises(nav.NoClient):
        job.client()


def test_child_argv_bakes_in_the_server_config_and_manifests(tmp_path):
    job, _ = navigator([], socket_name="work", config="rel.toml")
    argv = job.child_argv()
    assert argv[-4:-2] == ["--socket-name", "work"]
    assert argv[-2] == "--config" and argv[-1].endswith("/rel.toml") and argv[-1][0] == "/"
    job, _ = navigator([])  # no named server: the socket the snapshot read
    assert job.child_argv()[-2:] == ["--socket-path", "/tmp/sock"]


def test_menu_label_colours_the_glyph_and_doubles_hashes():
    r = row("%1", "blocked", since=1000)
    r.pane.title = "fix #12   now"
    text = navigate.label(r, Config(), 1000 + 125_000)
    assert text.startswith("#[fg=")
    assert "claude  blocked  s:0.1  2m  fix ##12 now" in text

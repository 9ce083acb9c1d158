"""tma.runtime.fleet.read's pure parts: the host records and the remote edges of
`subscribe --events --hosts`, and a remote row as `tma wait` decides on it."""

from __future__ import annotations

from tma.runtime import waiting
from tma.runtime.fleet import read as fleet_read
from tma.runtime.fleet.read import View


def _row(pane: str, state: str, *, host: str = "box", stale: bool = False,
         done: bool = False, episode: int = 100) -> dict:
    return {"pane": pane, "agent": "claude", "state": state, "detail": None,
            "attention": done, "done": done, "episode_ms": episode, "locator": "s:1.0",
            "repo": None, "branch": None, "host": host, "stale": stale}


def _host(name: str, state: str, link: str | None = None, error: str | None = None) -> dict:
    return {"name": name, "state": state, "link": link, "error": error}


def test_host_records_name_each_change_once_and_normalise_a_probes_failure():
    up = View([_host("box", "online", "ok")], [], "daemon")
    states, recs = fleet_read.host_records(None, up, 1)
    assert states == {"box": "online"} and recs == []  # the baseline says nothing
    down = View([_host("box", "offline", "timeout", "no frame for 6 s")], [], "daemon")
    states, recs = fleet_read.host_records(states, down, 2)
    assert recs == [{"schema": 1, "at_ms": 2, "host": "box", "from": "online",
                     "to": "offline", "link": "timeout", "error": "no frame for 6 s"}]
    assert fleet_read.host_records(states, down, 3)[1] == []
    # a probe's failure is offline, its state the link's
    probed = View([_host("box", "unreachable", None, "ssh: connect refused")], [], "probe")
    assert fleet_read.host_records({"box": "online"}, probed, 4)[1][0]["link"] == \
        "unreachable"
    back = View([_host("box", "ok")], [], "probe")
    rec = fleet_read.host_records(states, back, 5)[1][0]
    assert (rec["from"], rec["to"], rec["link"], rec["error"]) == ("offline", "online",
                                                                   "ok", None)
    gone = fleet_read.host_records(states, View([], [], "daemon"), 6)[1]
    assert [(r["host"], r["to"]) for r in gone] == [("box", "")]


def test_remote_edges_carry_the_host_and_an_offline_host_makes_none():
    hosts_up = [_host("box", "online", "ok"), _host("far", "online", "ok")]
    rows = [_row("%1", "idle"), _row("%1", "working", host="far")]
    view = View(hosts_up, rows, "daemon")
    states, recs = fleet_read.row_edges(None, view, rows, 1)
    assert recs == [] and set(states) == {("box", "%1"), ("far", "%1")}
    rows = [_row("%1", "blocked"), _row("%1", "working", host="far")]
    states, recs = fleet_read.row_edges(states, View(hosts_up, rows, "daemon"), rows, 2)
    assert [(r["host"], r["pane"], r["from"], r["to"]) for r in recs] == [
        ("box", "%1", "idle", "blocked")]
    # box goes offline: its stale row (whatever it says) and its absence make no edge
    down = [_host("box", "offline", "closed", "gone"), hosts_up[1]]
    stale = [_row("%1", "idle", stale=True), _row("%1", "working", host="far")]
    states, recs = fleet_read.row_edges(states, View(down, stale, "daemon"), stale, 3)
    assert recs == [] and states[("box", "%1")][0] == "blocked"
    states, recs = fleet_read.row_edges(states, View(down, stale[1:], "probe"), stale[1:], 4)
    assert recs == []
    # back: compared with what it said before it went
    rows = [_row("%1", "idle", done=True), _row("%1", "working", host="far")]
    states, recs = fleet_read.row_edges(states, View(hosts_up, rows, "daemon"), rows, 5)
    assert [(r["host"], r["from"], r["to"]) for r in recs] == [("box", "blocked", "done")]
    # a pane that left an online host vanished
    rows = [_row("%1", "working", host="far")]
    recs = fleet_read.row_edges(states, View(hosts_up, rows, "daemon"), rows, 6)[1]
    assert [(r["host"], r["from"], r["to"]) for r in recs] == [("box", "done", "")]


def test_live_rows_leave_out_a_stale_row_and_an_offline_hosts():
    view = View([_host("box", "offline"), _host("far", "ok")],
                [_row("%1", "blocked", stale=True), _row("%2", "blocked", host="far"),
                 _row("%3", "blocked", host="far", stale=True)], "probe")
    assert [(d["host"], d["pane"]) for d in view.live_rows()] == [("far", "%2")]
    assert not view.online("box") and view.online("far")


def test_a_remote_row_is_decided_on_as_a_local_one():
    waiter = waiting.Waiter(waiting.PANE, waiting.Goal(("blocked",)), pane="box:%1")
    idle = fleet_read.RemoteRow(_row("%1", "idle"))
    assert waiter.step([idle], ["box:%1"]).kind == waiting.WAITING
    blocked = fleet_read.RemoteRow(_row("%1", "blocked"))
    step = waiter.step([blocked], ["box:%1"])
    assert step.kind == waiting.MATCHED and step.rows[0].doc["host"] == "box"
    assert waiter.step([], []).kind == waiting.VANISHED
    done = waiting.Waiter(waiting.ANY, waiting.Goal(("done",), since=50))
    assert done.step([fleet_read.RemoteRow(_row("%2", "idle", done=True))], []).kind == \
        waiting.MATCHED
    later = waiting.Waiter(waiting.ANY, waiting.Goal(("done",), since=100))
    assert later.step([fleet_read.RemoteRow(_row("%2", "idle", done=True))], []).kind == \
        waiting.WAITING

"""The daemon fleet's pure pieces: the reconnect backoff, the rung-episode store, the
hosts' counts on a status line. The links themselves run against a real sshd
(tests/integration/test_fleet_daemon.py)."""

from __future__ import annotations

import json

from tma.core import proto
from tma.daemon import fleet
from tma.runtime import config
from tma.ui import status


def test_the_backoff_doubles_from_a_second_and_is_capped_near_a_minute():
    lows = [fleet.backoff(n, rand=lambda: 0.0) for n in range(1, 10)]
    highs = [fleet.backoff(n, rand=lambda: 1.0) for n in range(1, 10)]
    assert highs[:7] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0]
    assert highs[7:] == [60.0, 60.0]
    assert lows[:3] == [0.5, 1.0, 2.0] and lows[-1] == 30.0  # jittered in the upper half
    assert all(lo <= hi for lo, hi in zip(lows, highs, strict=True))


def test_an_episode_is_rung_once_and_the_record_outlives_the_process(tmp_path):
    path = tmp_path / "fleet" / "rung.json"
    rung = fleet.Rung(str(path))
    key = fleet.Rung.key("box", "%3", 1_700_000_000_000)
    assert rung.claim(key, 1_700_000_000_500) is True
    assert rung.claim(key, 1_700_000_001_000) is False
    again = fleet.Rung(str(path))  # a restarted daemon
    assert again.claim(key, 1_700_000_002_000) is False
    assert again.claim(fleet.Rung.key("box", "%3", 1_700_000_100_000), 1_700_000_100_500)
    assert json.loads(path.read_text())["schema"] == 1


def test_old_and_surplus_records_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(fleet, "RUNG_CAP", 3)
    rung = fleet.Rung(str(tmp_path / "rung.json"))
    for i in range(5):
        rung.claim(fleet.Rung.key("h", f"%{i}", i), 1000 + i)
    assert sorted(rung.seen) == [fleet.Rung.key("h", f"%{i}", i) for i in (2, 3, 4)]
    rung.claim("late", 1000 + fleet.RUNG_KEEP_MS + 10)
    assert list(rung.seen) == ["late"]


def test_a_broken_record_file_is_read_as_empty(tmp_path):
    path = tmp_path / "rung.json"
    path.write_text("{not json")
    assert fleet.Rung(str(path)).seen == {}


def _row(state: str, attention: bool = False) -> proto.FleetRow:
    return proto.FleetRow(
        pane="%1", agent="claude", state=state, detail=None, since=0, since_ms=0,
        episode_ms=0, locator="s:1.0", attention=attention, done=False, session=None,
        transcript=None, permission_request=None, stamped_at_ms=None, context=None,
        context_at_ms=None, muted=False, tokens=None, quota=None, cost_usd=None, repo=None,
        branch=None, worktree=None, pending_tool=None, pending_call=None,
        pending_summary=None, server="", host="box")


def test_the_hosts_counts_share_the_local_classes():
    c = status.fleet_counts([_row("blocked"), _row("working"), _row("idle", True),
                             _row("idle")])
    assert c == {"blocked": 1, "working": 1, "done": 1, "idle": 1, "unknown": 0}
    palette = config.Config().status
    assert status.with_fleet("", status.plain(c, palette)).startswith(status.FLEET_MARK)
    assert status.with_fleet("L", "") == "L"
    assert status.with_fleet("L", "R") == f"L {status.FLEET_MARK}R"


def test_fleet_settings_default_to_on_and_five_seconds():
    cfg = config.Config()
    assert fleet.settings(cfg) == (True, fleet.KEEPALIVE_S)
    cfg.fleet = {"status": False, "keepalive_secs": 2}
    assert fleet.settings(cfg) == (False, 2)


class _Sent:
    """The link's sending end, as _Keepalive uses it: ids in turn, frames kept."""

    def __init__(self) -> None:
        self.frames: list[proto.Frame] = []

    def next_id(self) -> str:
        return str(len(self.frames) + 2)

    def send(self, frame: proto.Frame) -> None:
        self.frames.append(frame)


def test_the_keepalive_is_a_receipts_request_answered_by_an_empty_list():
    lk, keep = _Sent(), fleet._Keepalive("1", 0.0)
    keep.send(lk, 5.0)
    (req,) = lk.frames
    assert isinstance(req, proto.ReceiptsRequest) and req.slot is None
    assert abs(req.since_ms - fleet._wall()) < 5000  # now: no receipt is that new
    assert len(proto.encode(req)) < 100
    assert keep.due == 5.0 and keep.asks == {"1"}  # a snapshot answer is not awaited
    assert keep.answered(proto.Receipts(req.id, ()), 1.0) is True
    assert keep.answered(proto.Receipts(req.id, ()), 1.0) is False  # answered once
    assert keep.answered(proto.Snapshot("1", ()), 1.0) is False  # the subscription's


def test_a_host_that_refuses_the_receipts_keepalive_gets_snapshots():
    lk, keep = _Sent(), fleet._Keepalive("1", 0.0)
    keep.send(lk, 5.0)
    refused = proto.Error(lk.frames[0].id, proto.UNSUPPORTED, "no receipts here")
    assert keep.answered(refused, 2.0) is True  # an answer all the same: it vouches
    assert keep.due == 2.0  # the next keepalive goes now, as a snapshot
    keep.send(lk, 7.0)
    assert isinstance(lk.frames[1], proto.SnapshotRequest)
    assert lk.frames[1].id in keep.asks


def test_unanswered_keepalives_are_bounded():
    lk, keep = _Sent(), fleet._Keepalive("1", 0.0)
    for n in range(5 * fleet.MISSES):
        keep.send(lk, float(n))
    assert len(keep.keeps) <= 2 * fleet.MISSES


def test_a_host_rings_at_most_its_budget_a_minute_and_owes_one_summary():
    b = fleet.RingBudget()
    now = 1_000_000
    taken = [b.take(now + i, 6) for i in range(10)]
    assert taken == [True] * 6 + [False] * 4
    for i in range(4):
        b.owe(f"%{i}")
    assert b.summary_due() == b.summary_at + fleet.RING_WINDOW_MS  # due at once
    assert b.pay(now) == (4, "%0") and b.summary_due() is None
    b.owe("%9")
    assert b.summary_due() == now + fleet.RING_WINDOW_MS  # one summary a minute
    assert b.take(now + fleet.RING_WINDOW_MS, 6) is True  # the window slid on


def test_a_replaced_link_never_repeats_a_generation_the_loop_saw():
    # a hosts.toml edit replaces a host's link: its first rows must still look new
    host = fleet.store.Host("box", "me@box")
    old = fleet.HostLink(host, ["true"], {}, 5, lambda: None)
    for _ in range(3):
        old.generation = next(fleet._GENERATIONS)
    seen = old.generation
    new = fleet.HostLink(host, ["true"], {}, 5, lambda: None)
    assert new.generation != seen and new.generation > seen


def test_the_read_throttle_sleeps_a_host_that_sends_past_its_rate():
    from tma.runtime.fleet.link import Throttle

    clock = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        clock[0] += s

    t = Throttle(1000, 5000, clock=lambda: clock[0], sleep=sleep)
    t.spend(5000)  # the burst: no wait
    assert slept == []
    t.spend(2000)  # 2 s of rate owed
    assert slept == [2.0]
    clock[0] += 10  # a quiet host earns its burst back, never more
    t.spend(5000)
    assert slept == [2.0] and t.tokens == 0

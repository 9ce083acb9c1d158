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

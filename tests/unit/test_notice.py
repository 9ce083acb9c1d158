"""tma.core.notice: mute durations and the notifier's pure decisions."""

from __future__ import annotations

import pytest

from tma.core import notice
from tma.core.codec import Stamp

NOW = 1_800_000_000_000


@pytest.mark.parametrize("text, ms", [
    ("30", 30_000), ("30s", 30_000), ("30m", 1_800_000), ("2h", 7_200_000),
    ("1d", 86_400_000), ("007m", 420_000)])
def test_durations(text, ms):
    assert notice.parse_duration(text) == ms


@pytest.mark.parametrize("text", ["0", "0m", "", "m", "1.5h", "-5", "+5", "5 m", " 5m", "5w",
                                  "5ms", "٣m", "1e3"])
def test_bad_durations_are_refused(text):
    with pytest.raises(notice.DurationError):
        notice.parse_duration(text)


def test_a_huge_duration_clamps_to_forever():
    assert notice.mute_deadline(NOW, notice.parse_duration("99999999999d")) == notice.MUTE_FOREVER
    assert notice.mute_deadline(NOW, None) == 99_999_999_999_999
    assert notice.mute_deadline(NOW, 60_000) == NOW + 60_000
    assert notice.describe_duration("90") == "90s" and notice.describe_duration("2h") == "2h"


def test_muted():
    assert notice.muted(str(NOW + 1), NOW) and notice.muted("99999999999999", NOW)
    assert not notice.muted(str(NOW), NOW) and not notice.muted("", NOW)
    assert not notice.muted("soon", NOW)
    assert notice.muted(str(NOW // 1000 + 60), NOW)  # legacy seconds scale up


def _stamp(state="blocked", attention=False, since=NOW - 5000, turn_at=0, notified_at=0):
    return Stamp(state=state, attention=attention, since=since, turn_at=turn_at,
                 notified_at=notified_at)


def test_triggers():
    assert notice.trigger("blocked", False) == "blocked"
    assert notice.trigger("idle", True) == "done"
    assert notice.trigger("idle", False) is None
    assert notice.trigger("working", True) is None and notice.trigger("unknown", True) is None


def test_due_follows_the_episode_and_the_on_list():
    on = ("blocked",)
    assert notice.due(_stamp(), on) == "blocked"
    assert notice.due(_stamp("idle", True), on) is None  # done not opted in
    assert notice.due(_stamp("idle", True), ("blocked", "done")) == "done"
    since = NOW - 5000
    assert notice.due(_stamp(notified_at=since - 1), on) == "blocked"  # an older run's marker
    assert notice.due(_stamp(notified_at=since), on) is None  # equal does not fire
    assert notice.due(_stamp(notified_at=since + 1), on) is None
    # a new turn inside an idle run is a new episode
    done = _stamp("idle", True, since=since, turn_at=since + 100, notified_at=since + 50)
    assert notice.due(done, ("done",)) == "done"
    assert notice.due(_stamp(since=0), on) is None  # no episode time: never


def test_the_marker_never_predates_the_episode():
    assert notice.marker(NOW, _stamp()) == NOW
    ahead = _stamp(since=NOW + 3000)  # a backward clock step
    assert notice.marker(NOW, ahead) == NOW + 3000
    assert notice.marker(NOW, _stamp(turn_at=NOW + 7)) == NOW + 7


def _ctx(pct="", at="1", fired=""):
    out = {}
    for key, value in (("@agent_context_pct", pct), ("@agent_context_at", at),
                       ("@agent_context_notified_at", fired)):
        if value:
            out[key] = value
    return out


def test_context_high_arms_fires_and_rearms():
    assert notice.context_step(_ctx("75"), 75) == notice.FIRE
    assert notice.context_step(_ctx("74"), 75) is None
    assert notice.context_step(_ctx("90", fired="5"), 75) is None  # fired: holds
    assert notice.context_step(_ctx("65", fired="5"), 75) is None  # inside the band
    assert notice.context_step(_ctx("64", fired="5"), 75) == notice.REARM
    assert notice.context_step(_ctx("", fired="5"), 75) is None  # a null reading holds
    assert notice.context_step(_ctx("90", at=""), 75) is None  # torn pair: deferred
    assert notice.context_step(_ctx("x9"), 75) is None

"""The option tuple codec: decode rules, legacy seconds, in-progress, clock step."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from tma.core import codec, states
from tma.core.codec import DecodeError, Stamp


def test_absent_state_is_never_stamped():
    assert codec.decode({}) is None
    assert codec.decode({"@agent_state": ""}) is None


@pytest.mark.parametrize("bad", ["done", "WORKING", "busy", "idle ", "working,idle"])
def test_out_of_set_state_fails_the_decode(bad):
    with pytest.raises(DecodeError) as exc:
        codec.decode({"@agent_state": bad})
    assert exc.value.option == "@agent_state"


def test_out_of_set_source_fails_the_decode():
    with pytest.raises(DecodeError):
        codec.decode({"@agent_state": "idle", "@agent_source": "my-tool"})


def test_absent_source_reads_as_capture_and_legacy_activity_too():
    assert codec.decode({"@agent_state": "idle"}).source == "capture"
    assert codec.decode({"@agent_state": "idle", "@agent_source": "activity"}).source == "capture"


def test_bad_integer_fails_the_decode():
    with pytest.raises(DecodeError):
        codec.decode({"@agent_state": "idle", "@agent_stamped_at": "12x"})
    with pytest.raises(DecodeError):
        codec.decode({"@agent_state": "idle", "@agent_since": "-5"})


def test_ten_digit_values_are_legacy_seconds():
    s = codec.decode({"@agent_state": "idle", "@agent_since": "1700000000",
                      "@agent_stamped_at": "1700000000123", "@agent_evidence_at": "1700000001"})
    assert s.since == 1_700_000_000_000
    assert s.evidence_at == 1_700_000_001_000
    assert s.stamped_at == 1_700_000_000_123


def test_pid_is_not_scaled():
    assert codec.decode({"@agent_state": "idle", "@agent_pid": "4242"}).pid == 4242


def test_in_progress_when_stamped_at_is_older():
    s = Stamp(state="working", since=5000, evidence_at=5000, stamped_at=4000)
    assert codec.in_progress(s)
    s = Stamp(state="working", since=1000, evidence_at=5000, stamped_at=4000)
    assert codec.in_progress(s)
    s = Stamp(state="working", since=1000, evidence_at=1000, stamped_at=4000)
    assert not codec.in_progress(s)


def test_clock_step_reads_as_settled():
    # since stranded more than 2000 ms ahead of stamped_at: a backward clock step
    s = Stamp(state="idle", since=10_001, evidence_at=0, stamped_at=8000)
    assert codec.is_clock_step(s)
    assert not codec.in_progress(s)
    s = Stamp(state="idle", since=10_000, evidence_at=0, stamped_at=8000)
    assert not codec.is_clock_step(s)
    assert codec.in_progress(s)


def test_freshness():
    s = Stamp(state="idle", since=1000, evidence_at=1000, stamped_at=1000)
    assert codec.is_fresh(s, now=3999, freshness_ms=3000)
    assert not codec.is_fresh(s, now=4000, freshness_ms=3000)
    assert not codec.is_fresh(s, now=999, freshness_ms=3000)  # from the future
    assert not codec.is_fresh(s, now=1000, freshness_ms=0)
    torn = Stamp(state="idle", since=2000, evidence_at=2000, stamped_at=1000)
    assert not codec.is_fresh(torn, now=1500, freshness_ms=3000)


def test_episode_ms_is_max_of_since_and_turn_at():
    assert Stamp(state="idle", since=5, turn_at=9).episode_ms == 9
    assert Stamp(state="idle", since=12, turn_at=9).episode_ms == 12


_ms = st.integers(min_value=0, max_value=99_999_999_999_999).map(
    lambda v: v if v == 0 or v >= codec.LEGACY_SECONDS_FLOOR else v + codec.LEGACY_SECONDS_FLOOR)
_token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
_ids = st.text(alphabet="abcdef0123456789-", min_size=1, max_size=20)

stamps = st.builds(
    Stamp,
    state=st.sampled_from(states.STATES),
    detail=st.one_of(st.just(""), _token),
    source=st.sampled_from(states.SOURCES),
    evidence_at=_ms, since=_ms, stamped_at=_ms,
    attention=st.booleans(),
    name=st.one_of(st.just(""), _token),
    pid=st.integers(min_value=0, max_value=4_194_304),
    hash=st.one_of(st.just(""), _ids),
    session=st.one_of(st.just(""), _ids),
    notified_at=_ms, turn_at=_ms,
    subagents=st.lists(_ids, max_size=3).map(tuple),
)


@given(stamps)
def test_round_trip(stamp):
    assert codec.decode(codec.encode(stamp)) == stamp


@given(st.dictionaries(st.sampled_from(["@agent_state", "@agent_source", "@agent_since",
                                        "@agent_stamped_at", "@agent_evidence_at",
                                        "@agent_pid", "@agent_detail"]),
                       st.text(max_size=16)))
def test_decode_never_raises_anything_but_decode_error(opts):
    try:
        s = codec.decode(opts)
    except DecodeError:
        return
    assert s is None or s.state in states.STATES


@given(st.integers(0, 10**14), st.integers(0, 10**14))
def test_clamp_future_never_writes_beyond_the_skew(at, now):
    from tma.core.codec import FUTURE_SKEW_MS, clamp_future

    got = clamp_future(at, now)
    assert got <= now + FUTURE_SKEW_MS
    assert got == (at if at <= now + FUTURE_SKEW_MS else now)

"""`cycle.quiet_until` says until when the clock alone keeps the quiet skip's answer: the
status line's memo (tma.runtime.status_memo) stands no longer. Property: at every moment
before it, with the screen and the pane's processes unchanged, `Cycle._quiet` still
reuses the stamp (the clock cannot have ended it), decisive chrome or not."""

from __future__ import annotations

from hypothesis import given, strategies as st

from tma.core import codec, states
from tma.runtime.config import Config
from tma.runtime.cycle import Cycle, quiet_until


class _Pane:
    window_activity = 1  # a window quiet since long before any stamp


class _Ident:
    pid = 0
    foreground_is_agent = True
    agent = "copilot"


class _Decisive(Cycle):
    def __init__(self, cfg) -> None:
        super().__init__(server=None, cfg=cfg)
        self._enders = frozenset({"copilot"})  # the dwell rule applies


@given(state=st.sampled_from([states.IDLE, states.BLOCKED, states.UNKNOWN]),
       evidence=st.integers(10_000, 10**9), lag=st.integers(0, 10**6),
       later=st.integers(0, 10**7), dwell=st.integers(0, 30), decay=st.integers(1, 600),
       blocked_decay=st.integers(1, 3600))
def test_the_clock_never_ends_the_quiet_reuse_before_quiet_until(
        state, evidence, lag, later, dwell, decay, blocked_decay):
    cfg = Config()
    cfg.dwell_secs, cfg.hook_decay_secs, cfg.blocked_decay_secs = dwell, decay, blocked_decay
    stamp = codec.Stamp(state=state, source=states.SOURCE_HOOK, evidence_at=evidence,
                        stamped_at=evidence + lag, hash="h", name="copilot")
    until = quiet_until(cfg, stamp)
    assert until is not None
    now = stamp.stamped_at + later
    if now < until:
        assert _Decisive(cfg)._quiet(_Pane(), stamp, _Ident(), now)


def test_a_capture_stamp_has_no_clock_of_its_own():
    stamp = codec.Stamp(state=states.IDLE, source=states.SOURCE_CAPTURE, hash="h")
    assert quiet_until(Config(), stamp) is None

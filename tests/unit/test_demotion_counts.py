"""tma.daemon.demotion: counting, threshold, reset on new hook evidence, cap."""

from __future__ import annotations

from tma.core import codec, states
from tma.daemon import demotion


def _stamp(source: str, evidence_at: int) -> codec.Stamp:
    return codec.Stamp(state=states.BLOCKED, source=source, evidence_at=evidence_at,
                       stamped_at=evidence_at, since=evidence_at, name="claude")


def test_only_stale_hook_claims_count_and_the_threshold_demotes():
    d = demotion.Demotion(3)
    stale, fresh, screen = _stamp("hook", 1_000), _stamp("hook", 99_000), _stamp("capture", 0)
    for _ in range(5):
        d.edge("%1", fresh, 100_000, 60_000)
        d.edge("%2", screen, 100_000, 60_000)
    assert d.demoted(["%1", "%2"]) == frozenset()
    for _ in range(3):
        assert d.demoted(["%3"]) == frozenset()
        d.edge("%3", stale, 100_000, 60_000)
    assert d.demoted(["%3"]) == {"%3"} and d.status()["demoted"] == ["%3"]


def test_new_hook_evidence_and_a_gone_pane_reset():
    d = demotion.Demotion(1)
    d.edge("%1", _stamp("hook", 1_000), 100_000, 60_000)
    d.edge("%2", _stamp("hook", 1_000), 100_000, 60_000)
    d.seen({"%1": _stamp("capture", 1_000), "%2": _stamp("hook", 1_000)})
    assert d.demoted(["%1", "%2"]) == {"%1", "%2"}  # a screen write is no hook evidence
    d.seen({"%1": _stamp("hook", 2_000)})
    assert d.demoted(["%1", "%2"]) == frozenset()


def test_the_map_is_capped():
    d = demotion.Demotion(1)
    for i in range(demotion.CAP + 10):
        d.edge(f"%{i}", _stamp("hook", 0), 100_000, 60_000)
    assert len(d.status()["demoted"]) == demotion.CAP
    assert d.demoted(["%0", f"%{demotion.CAP + 9}"]) == {f"%{demotion.CAP + 9}"}

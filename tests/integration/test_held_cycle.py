"""The poll cycle around a held write: the pane keeps the winner's tuple byte for byte,
and it is not captured again on every cycle afterwards.

A held write no longer moves @agent_stamped_at, and the cycle's quiet-pane skip
compares #{window_activity} with @agent_stamped_at. The winner's own stamp is what
the next cycles age and skip against; a write the cycle can already see losing (a
stored tuple its fold does not protect, e.g. hook/unknown) is sent as a refresh.
The cycles run in process on one timeline (`now` + an offset per step), 4 s apart,
so each one finds the stamps older than the 3 s freshness window.
"""

from __future__ import annotations

import time

import pytest

from tma.core import plan as P
from tma.tmux import write

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build


def real_ms() -> int:
    return time.time_ns() // 1_000_000


class Timeline:
    def __init__(self) -> None:
        self.offset = 0

    def __call__(self) -> int:
        return real_ms() + self.offset


def make_cycle(srv, monkeypatch, clock):
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMA_TMUX_BIN", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import Server

    return lambda: Cycle(Server(srv.tmux_bin, socket_name=srv.name), Config(),
                         manifest_dir=str(srv.manifests), clock=clock).run()


def test_a_write_that_loses_the_race_leaves_the_hook_tuple_and_is_not_recaptured(
        srv, monkeypatch):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    clock = Timeline()
    run = make_cycle(srv, monkeypatch, clock)
    first = run()
    assert first.stats.captures == 1 and srv.option(pane, "@agent_state") == "working"

    # The next cycle reads the capture stamp; a hook event lands before it writes.
    from tma.tmux import read
    from tma.tmux.adapter import Server

    real = read.capture_many
    hook_tuple = {}

    def hook_fires(server, panes, *args, **kw):
        at = clock()
        plan = P.Plan(P.PUBLISH, state="idle", source="hook", evidence_at=at,
                      guard=P.Guard(P.HOOK_ARBITRATE, at=at))
        stored = srv.options(pane)
        Server(srv.tmux_bin, socket_name=srv.name).source([write.render(
            pane, plan, at, name="fake", pid=int(stored["@agent_pid"]),
            hash=stored["@agent_hash"])])
        hook_tuple.update(srv.options(pane))
        return real(server, panes, *args, **kw)

    monkeypatch.setattr(read, "capture_many", hook_fires)
    clock.offset = 4000
    raced = run()
    monkeypatch.setattr(read, "capture_many", real)
    assert raced.stats.captures == 1
    # the cycle's working verdict held: the hook's tuple stands, byte for byte
    assert hook_tuple["@agent_state"] == "idle"
    assert srv.options(pane) == hook_tuple
    [row] = raced.rows
    assert (row.state, row.stamp.source) == ("idle", "hook")

    # The hook's stamp is what the next cycle ages: stale now, but its window has been
    # quiet since it, so the cycle reuses it without a capture (and writes nothing).
    clock.offset = 8000
    later = run()
    assert (later.stats.captures, later.stats.skipped) == (0, 1)
    assert srv.options(pane) == hook_tuple


def test_a_write_known_to_lose_is_sent_as_a_refresh(srv, monkeypatch):
    """hook/unknown is not a claim the fold protects, yet the protect-hook guard holds
    every capture write against it. The cycle refreshes instead of sending a write
    that would hold on every cycle and leave the pane stale (captured forever)."""
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-WORKING thinking\n")
    clock = Timeline()
    t0 = clock()
    pid = srv.tmux("list-panes", "-t", pane, "-F", "#{pane_pid}").strip()
    for key, value in (("@agent_state", "unknown"), ("@agent_source", "hook"),
                       ("@agent_evidence_at", str(t0)), ("@agent_since", str(t0)),
                       ("@agent_stamped_at", str(t0)), ("@agent_name", "fake"),
                       ("@agent_pid", pid), ("@agent_session", "s-1")):
        srv.tmux("set-option", "-p", "-t", pane, key, value)
    srv.next_second()
    run = make_cycle(srv, monkeypatch, clock)
    before = srv.options(pane)
    clock.offset = 4000
    first = run()
    assert first.stats.captures == 1
    after = srv.options(pane)
    moved = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert moved <= {"@agent_stamped_at", "@agent_hash", "@tma_title_match_pid"}
    assert int(after["@agent_stamped_at"]) >= t0 + 4000
    assert (after["@agent_state"], after["@agent_source"]) == ("unknown", "hook")
    clock.offset = 8000
    second = run()
    assert (second.stats.captures, second.stats.skipped) == (0, 1)

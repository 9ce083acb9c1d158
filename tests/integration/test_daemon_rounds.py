"""The daemon's stamping rounds against a real tmux: a round's write spawn also reads
every pane for the next round, and what the next round decides from that read is what
a fresh read would have given (tma.daemon.stamper)."""

from __future__ import annotations

import pytest

from tma.daemon.stamper import Stamper
from tma.runtime import config, manifests
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract


class _Daemon:
    """What the stamper needs of a daemon: its server, config and log."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.cfg = config.load(None)
        self.logged: list[str] = []

    def log(self, line: str) -> None:
        self.logged.append(line)


def _counting(srv) -> tuple[Server, list[list[str]]]:
    server = Server(srv.tmux_bin, socket_name=srv.name)
    argvs: list[list[str]] = []
    spawn = server._spawn

    def counted(argv, data=None, *a, **kw):
        argvs.append(list(argv))
        return spawn(argv, data, *a, **kw)

    server._spawn = counted  # type: ignore[method-assign]
    return server, argvs


def _put(st: Stamper, table, pane: str, kind: str, at: int) -> None:
    st.put([pane, "fake", kind, '{"session_id":"s1"}', str(at), "scope"], table)


def test_a_panes_events_in_successive_rounds_cost_one_spawn_each(srv):
    a, b = srv.agent_pane(), srv.agent_pane()
    server, argvs = _counting(srv)
    table = manifests.hook_tables(str(srv.manifests))["fake"]
    st = Stamper(_Daemon(server))
    t = 1_800_000_000_000
    # three rounds for pane a (one event of a pane per round), one event for b
    for n, (pane, kind) in enumerate([(a, "Work"), (b, "Work"), (a, "Ask"), (a, "Stop")]):
        _put(st, table, pane, kind, t + n)
    assert st.stamp(None, lambda: 0) is True
    assert not st.queue and st.rounds == 3
    # one read before the first round, then one spawn per round (its writes, and
    # the read for the next round while events wait)
    assert len(argvs) == 4, argvs
    assert srv.option(a, "@agent_state") == "idle"
    assert srv.option(a, "@agent_evidence_at") == str(t + 3)
    assert srv.option(b, "@agent_state") == "working"
    # the Ask was decided over the read the first round's spawn made after its writes:
    # a blocked edge out of working raises attention, and the Stop keeps it
    assert srv.option(a, "@agent_attention") == "1"


def test_a_pane_newer_than_the_carried_read_is_read_again(srv):
    from tma.daemon.stamper import take_round

    a = srv.agent_pane()
    server, argvs = _counting(srv)
    table = manifests.hook_tables(str(srv.manifests))["fake"]
    st = Stamper(_Daemon(server))
    t = 1_800_000_000_000
    _put(st, table, a, "Work", t)
    _put(st, table, a, "Ask", t + 1)
    taken, st.queue = take_round(st.queue, 64)
    wrote, every = st._round(taken, None)
    assert wrote and every is not None  # the Ask waits: the write spawn read every pane
    d = srv.agent_pane()  # a pane that read cannot know, and its event
    _put(st, table, d, "Work", t + 2)
    taken, st.queue = take_round(st.queue, 64)
    before = len(argvs)
    wrote, every = st._round(taken, every)
    assert wrote and every is None
    assert len(argvs) == before + 2  # read again, then the write
    assert srv.option(d, "@agent_state") == "working"
    assert srv.option(a, "@agent_state") == "blocked"

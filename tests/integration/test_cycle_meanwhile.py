"""A cycle's caller works while tmux runs the cycle's writes (Cycle.run(meanwhile=); `tma
ls --json` loads its JSON modules then): the work runs once, between the write batch's
start and its read, the rows are the re-read's as ever, a cycle that writes nothing
calls nothing, and a failing caller still has the batch read and its child reaped."""

from __future__ import annotations

import os

import pytest


def _children() -> dict[int, str]:
    """This process's children: pid -> comm."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                pids = [int(p) for p in fh.read().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/comm") as fh:
                    out[pid] = fh.read().strip()
            except OSError:
                out[pid] = "?"
    return out


def _cycle(srv, monkeypatch):
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMA_TMUX_BIN", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import Server

    return Cycle(Server(srv.tmux_bin, socket_name=srv.name), Config(),
                 manifest_dir=str(srv.manifests))


def _idle_agents(srv, n: int) -> list[str]:
    panes = [srv.agent_pane() for _ in range(n)]
    for p in panes:
        srv.draw(p, "FAKE-IDLE composer\n")
    return panes


def test_the_callers_work_runs_while_the_write_batch_is_out(srv, monkeypatch):
    panes = _idle_agents(srv, 2)
    cycle = _cycle(srv, monkeypatch)
    batches, seen = [], []
    real = cycle.server.begin_source

    def begin_source(lines):
        pending = real(lines)
        batches.append(pending.begun[0] if pending.begun else None)  # the child's pid
        return pending

    monkeypatch.setattr(cycle.server, "begin_source", begin_source)

    def meanwhile():
        seen.append((cycle.server.spawns, set(_children())))

    result = cycle.run(current=True, meanwhile=meanwhile)
    assert len(seen) == 1
    spawns, children = seen[0]
    # the write batch was the last spawn begun, and its tmux client was not read yet
    assert spawns == cycle.server.spawns and batches[-1] in children, (batches, seen)
    assert batches[-1] not in _children()  # read and reaped by the time run returns
    assert sorted(r.pane.pane_id for r in result.rows) == sorted(panes)
    assert {r.state for r in result.rows} == {"idle"}
    assert all(srv.option(p, "@agent_state") == "idle" for p in panes)


def test_a_cycle_that_writes_nothing_calls_nothing(srv, monkeypatch):
    _idle_agents(srv, 2)
    srv.next_second()  # stamps a second after the drawing: the next cycle consumes them
    cycle = _cycle(srv, monkeypatch)
    cycle.run(current=True)
    calls = []
    result = cycle.fresh().run(current=True, meanwhile=lambda: calls.append(1))
    assert result.stats.produced == 0 and result.stats.captures == 0, result.stats.line()
    assert calls == []


def test_a_failing_caller_still_has_the_batch_read_and_reaped(srv, monkeypatch):
    panes = _idle_agents(srv, 2)
    cycle = _cycle(srv, monkeypatch)
    before = set(_children())

    def meanwhile():
        raise RuntimeError("the caller's own failure")

    with pytest.raises(RuntimeError, match="the caller's own failure"):
        cycle.run(current=True, meanwhile=meanwhile)
    assert set(_children()) <= before  # no tmux client left unreaped
    assert all(srv.option(p, "@agent_state") == "idle" for p in panes)  # the batch ran

"""A cycle over many panes sends its first half's writes while the rules read the second
half (Cycle._fold_all, PIPELINE_PANES): two write batches, the second held in tmux
(wait-for) until the first has run, so its re-read (the rows every surface shows) follows
every write even when the first batch is slow; fewer panes keep the one batch."""

from __future__ import annotations

import pytest

from tma.tmux.adapter import PendingSource, Server

pytestmark = pytest.mark.tmux_contract  # wait-for inside source-file, on every build

SCREENS = ("FAKE-IDLE composer\n", "FAKE-WORKING\n", "FAKE-BLOCKED\n")
STATES = ("idle", "working", "blocked")


class SlowFirst(Server):
    """The adapter, keeping every write batch it sends (not the captures); the first
    batch that signals a channel starts with a half-second shell command, so it runs
    well after the second is sent."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.batches: list[list[str]] = []

    def begin_source(self, lines: list[str]) -> PendingSource:
        if any("@agent_stamped_at" in ln or ln.startswith("wait-for") for ln in lines):
            if lines[-1].startswith("wait-for -S ") and not self.batches:
                lines = ["run-shell 'sleep 0.5'", *lines]
            self.batches.append(list(lines))
        return super().begin_source(lines)


def _cycle(srv, monkeypatch, server):
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMA_TMUX_BIN", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle

    return Cycle(server, Config(), manifest_dir=str(srv.manifests))


def _agents(srv, n: int) -> dict[str, str]:
    """n fake agent panes drawn in turn idle, working and blocked: pane -> state."""
    want = {}
    for i in range(n):
        pane = srv.agent_pane()
        srv.draw(pane, SCREENS[i % 3])
        want[pane] = STATES[i % 3]
    srv.next_second()  # no prompt drawn this second: no confirmation read
    return want


def test_the_first_half_goes_ahead_and_the_re_read_follows_every_write(srv, monkeypatch):
    from tma.runtime.cycle import PIPELINE_PANES

    want = _agents(srv, PIPELINE_PANES + 2)
    server = SlowFirst(srv.tmux_bin, socket_name=srv.name)
    result = _cycle(srv, monkeypatch, server).run(current=True)
    assert len(server.batches) == 2, server.batches
    first, second = server.batches
    channel = first[-1].removeprefix("wait-for -S ")
    assert second[0] == f"wait-for {channel}" and second[-1].startswith("list-panes -a -F")
    ahead = {p for p in want if any(f"-t {p} " in line for line in first[1:-1])}
    assert len(ahead) == len(want) // 2  # the first half's stamps went ahead
    # the rows are the re-read's: it ran after the slow first batch, so it shows all
    assert {r.pane.pane_id: r.state for r in result.rows} == want
    assert {p: srv.option(p, "@agent_state") for p in want} == want
    # the listing, this server's first -F probe, the captures, two write batches
    assert result.stats.spawns == 5


def test_fewer_panes_keep_one_batch(srv, monkeypatch):
    from tma.runtime.cycle import PIPELINE_PANES

    want = _agents(srv, PIPELINE_PANES - 1)
    server = SlowFirst(srv.tmux_bin, socket_name=srv.name)
    result = _cycle(srv, monkeypatch, server).run(current=True)
    assert len(server.batches) == 1 and not any("wait-for" in ln for ln in server.batches[0])
    assert {r.pane.pane_id: r.state for r in result.rows} == want
    assert result.stats.spawns == 4  # the listing, the probe, the captures, one batch

"""`tma status` reads panes lean (no telemetry or request lanes, no pane path), and the
hook reads the lanes of its own pane only. Same verdicts, same cleanup, less work for
the server on every status line and every hook."""

from __future__ import annotations

import pytest

from tma.tmux import read
from tma.tmux.adapter import Server

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build

LANES = {"@agent_context_pct": "41", "@agent_model": "opus", "@agent_cost_usd": "0.12",
         "@agent_permission_request": "req-1", "@agent_pending_summary": "Bash: ls"}


def _set(srv, pane: str, opts: dict[str, str]) -> None:
    for k, v in opts.items():
        srv.tmux("set-option", "-p", "-t", pane, k, v)


@pytest.fixture
def server(srv):
    return Server(srv.tmux_bin, socket_name=srv.name)


def test_lean_listing_is_the_full_one_less_the_lanes_and_path(srv, server):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED\n")
    b = srv.agent_pane()
    srv.draw(b, "FAKE-IDLE\n")
    srv.ls()  # real stamps on both
    _set(srv, a, LANES)
    _set(srv, b, dict(LANES, **{"@agent_ignore": "1"}))
    full = {p.pane_id: p for p in read.list_panes(server).panes}
    lean = {p.pane_id: p for p in read.list_panes(server, lean=True).panes}
    assert full.keys() == lean.keys() == {a, b}
    assert full[a].options["@agent_state"] == "blocked"
    assert full[a].current_path and lean[a].current_path == ""
    # a pane that is read: every option the cycle reads, no lane
    assert lean[a].options == {k: v for k, v in full[a].options.items()
                               if k in read.CYCLE_OPTIONS}
    assert not LANES.keys() & lean[a].options.keys()
    # an ignored pane: what it holds, and that it still holds some lane (the cycle
    # clears every episode option of such a pane)
    assert LANES.items() <= full[b].options.items()
    assert {k: v for k, v in lean[b].options.items() if k != read.LANES_HELD} == \
        {k: v for k, v in full[b].options.items() if k in read.CYCLE_OPTIONS}
    assert lean[b].options[read.LANES_HELD] and read.LANES_HELD not in lean[a].options
    for pid in (a, b):  # the pane's own fields: alike
        assert lean[pid].replace(options={}, current_path="") == \
            full[pid].replace(options={}, current_path="")


def test_status_still_clears_an_ignored_panes_lanes(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-WORKING\n")
    srv.ls()
    srv.tmux("set-option", "-p", "-t", a, "@agent_ignore", "1")
    for k in ("@agent_state", "@agent_source", "@agent_evidence_at", "@agent_since",
              "@agent_stamped_at", "@agent_pid", "@agent_name", "@agent_hash"):
        srv.tmux("set-option", "-p", "-u", "-t", a, k)
    _set(srv, a, {"@agent_context_pct": "41"})  # a lane is all that is left
    srv.next_second()
    res = srv.tma("--debug-timing", "status", "--format", "plain", check=True)
    assert res.stdout == "\n" and "1 removed" in res.stderr, res.stderr
    assert srv.options(a) == {"@agent_ignore": "1"}


def test_status_counts_as_ls_does_with_lanes_set(srv):
    panes = {srv.agent_pane(): "FAKE-BLOCKED\n", srv.agent_pane(): "FAKE-WORKING\n",
             srv.agent_pane(): "FAKE-IDLE\n"}
    for p, screen in panes.items():
        srv.draw(p, screen)
        _set(srv, p, LANES)
    srv.next_second()
    out = srv.tma("status", "--format", "json", check=True).stdout
    assert '"working":1,"blocked":1,"idle":1' in out
    rows = srv.ls()
    assert {r["state"] for r in rows} == {"blocked", "working", "idle"}
    # the lanes survived the lean cycle's writes
    for p in panes:
        assert LANES.items() <= srv.options(p).items()


def test_hook_read_is_its_pane_in_full_and_the_rollup_facts_of_the_others(srv, server):
    a = srv.agent_pane()
    b = srv.agent_pane()
    c = srv.agent_pane()
    d = srv.agent_pane()
    srv.shell_pane(session="other")
    for p in (a, b, c, d):
        srv.draw(p, "FAKE-IDLE\n")
    srv.ls()
    for p in (a, b, c, d):
        _set(srv, p, LANES)
    srv.tmux("set-option", "-p", "-t", c, "@agent_ignore", "1")
    srv.tmux("set-option", "-p", "-t", d, "@agent_pid", "x12")  # an unreadable tuple
    panes = {p.pane_id: p for p in read.hook_panes(server, a)}
    assert panes.keys() == {a, b, c, d}  # the session's panes, not the other session's
    full = {p.pane_id: p for p in read.session_panes(server, a)}
    assert panes[a] == full[a]  # its own pane: every field and option
    for p in (b, c, d):
        assert panes[p].options == {k: v for k, v in full[p].options.items()
                                    if k in read.ROLLUP_READ_OPTIONS}
        assert (panes[p].window_id, panes[p].session_id) == (full[p].window_id,
                                                             full[p].session_id)
    # the rollups the hook writes are the same from either read
    from tma.runtime.hook import _rollup_lines

    for state in ("working", "blocked", None):
        assert _rollup_lines(list(panes.values()), a, state) == \
            _rollup_lines(list(full.values()), a, state)
    assert _rollup_lines(list(panes.values()), a, "blocked")  # something to compare


def test_hook_read_of_a_gone_pane_raises(srv, server):
    from tma.tmux.adapter import TmuxError

    srv.agent_pane()
    with pytest.raises(TmuxError):
        read.hook_panes(server, "%999")


def test_a_re_read_carries_the_first_reads_command_and_path(srv, server, tmp_path):
    """A cycle's re-read after its writes (read.Listing(prior=)) leaves each pane's command
    and path to the read before it (tmux resolves them through /proc for every pane):
    the values are the first read's, decoded alike (a backslash in a directory's name),
    and a pane the first read did not hold has none."""
    srv.agent_pane()
    odd = tmp_path / "a\\b c"
    odd.mkdir()
    a = srv.tmux("new-window", "-d", "-t", "s:", "-c", str(odd), "-P", "-F", "#{pane_id}",
                 f"exec {srv.fake('fakeagent')} 100000").strip()
    srv.wait_for(lambda: srv.display(a, "#{pane_current_command}") == "fakeagent")

    def read_with_path():  # 3.7c under load may read a just-started pane's path as ""
        snap = read.list_panes(server)
        return snap if {p.pane_id: p for p in snap.panes}[a].current_path else None

    first = srv.wait_for(read_with_path, timeout=10)
    was = {p.pane_id: p for p in first.panes}[a]
    assert was.current_path == str(odd) and was.current_command == "fakeagent"
    b = srv.agent_pane()  # after the first read
    for lean in (False, True):
        listing = read.Listing(lean, prior=first)
        assert "pane_current_path" not in listing.pane_format()
        assert "pane_current_command" not in listing.pane_format()
        again = {p.pane_id: p for p in listing.parse(server.run(*listing.pane_args())).panes}
        assert again.keys() == {p.pane_id for p in first.panes} | {b}
        assert again[a].current_command == "fakeagent"
        assert again[a].current_path == str(odd)
        assert again[b].current_command == again[b].current_path == ""
    fresh = {p.pane_id: p for p in read.list_panes(server).panes}
    assert fresh[b].current_command == "fakeagent"  # a read with no prior reads them

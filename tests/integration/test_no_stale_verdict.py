"""A surface a person reads never shows a verdict older than its screen (issue 18):
two `tma ls` in a row, the second within a second of the first (stampede guard) or
within the 3 s freshness window, used to serve the first one's `idle` over a screen
that had turned blocked meanwhile. The status line keeps its shortcuts."""

from __future__ import annotations

import json

import pytest


def _states(res) -> list[str]:
    return [r["state"] for r in json.loads(res.stdout)["agents"]]


@pytest.mark.parametrize("gap", ["same-second", "next-second"])
def test_ls_right_after_ls_reads_a_screen_that_changed(srv, gap):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.next_second()
    assert _states(srv.tma("ls", "--json", check=True)) == ["idle"]
    srv.draw(a, "FAKE-BLOCKED\n")
    if gap == "next-second":
        srv.next_second()  # past the stampede guard, inside the freshness window
    res = srv.tma("--debug-timing", "ls", "--json", check=True)
    assert _states(res) == ["blocked"], res.stderr


def test_ls_over_a_still_screen_still_consumes_a_fresh_stamp(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.next_second()
    srv.ls()
    res = srv.tma("--debug-timing", "ls", "--json", check=True)
    assert "1 consumed, 0 captures" in res.stderr, res.stderr


def test_the_status_line_keeps_the_stampede_guard(srv):
    a = srv.agent_pane()
    srv.draw(a, "FAKE-IDLE\n")
    srv.next_second()
    srv.ls()
    srv.draw(a, "FAKE-BLOCKED\n")
    res = srv.tma("--debug-timing", "status", check=True)
    assert "stampede-skipped" in res.stderr or "0 captures" in res.stderr, res.stderr

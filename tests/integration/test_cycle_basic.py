"""The poll cycle on a private server: identify, capture, fold, stamp, report."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build


def test_idle_agent_is_stamped_and_listed(srv):
    pane = srv.agent_pane()
    srv.shell_pane()
    srv.draw(pane, "FAKE-IDLE composer\n")
    rows = srv.ls()
    assert [r["pane"] for r in rows] == [pane]
    row = rows[0]
    assert (row["agent"], row["state"], row["detail"]) == ("fake", "idle", None)
    opts = srv.options(pane)
    assert opts["@agent_state"] == "idle"
    assert opts["@agent_source"] == "capture"
    assert opts["@agent_name"] == "fake"
    assert int(opts["@agent_pid"]) > 0
    assert re.fullmatch(r"\d{13}", opts["@agent_stamped_at"])


def test_blocked_then_status_formats(srv):
    a = srv.agent_pane()
    b = srv.agent_pane()
    srv.draw(a, "FAKE-BLOCKED do you want to proceed\n")
    srv.draw(b, "FAKE-WORKING thinking\n")
    rows = srv.ls()
    assert [(r["pane"], r["state"], r["detail"]) for r in rows] == [
        (a, "blocked", "permission"), (b, "working", None)]
    plain = srv.tma("status", "--format", "plain", check=True).stdout
    assert plain == "⚑1 ●1\n"
    tm = srv.tma("status", check=True).stdout
    assert tm.startswith("#[range=user|tma:blocked]#[fg=colour231,bg=red]⚑1#[fg=default,bg=default]#[norange] ")
    assert not tm.endswith("\n")
    js = srv.tma("status", "--format", "json", check=True).stdout
    assert js == '{"schema":1,"counts":{"working":1,"blocked":1,"idle":0,"unknown":0,"done":0}}\n'
    assert srv.tma("status", "--format", "nope").returncode == 2


def test_status_is_empty_without_agents(srv):
    srv.shell_pane()
    res = srv.tma("status", check=True)
    assert res.stdout == ""


def test_no_server_is_a_clean_exit_1(srv):
    res = srv.tma("ls")
    assert res.returncode == 1
    assert res.stderr.strip() == "tma: no tmux server running"

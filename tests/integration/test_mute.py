"""`tma mute` on a private server: targets, durations, selectors, exit statuses."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.tmux_contract  # every test runs on each tmux build


def _until(srv, pane: str) -> str:
    return srv.option(pane, "@agent_mute_until")


def test_mute_for_a_while_indefinitely_and_clear(srv):
    pane = srv.agent_pane()
    t0 = time.time_ns() // 1_000_000
    res = srv.tma("mute", "--pane", pane, "--for", "30m")
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"tma: muted for 30m: {pane}\n"
    assert t0 + 1_800_000 <= int(_until(srv, pane)) <= t0 + 1_800_000 + 10_000
    res = srv.tma("mute", "--pane", pane)
    assert res.stdout == f"tma: muted indefinitely: {pane}\n"
    assert _until(srv, pane) == "99999999999999"
    res = srv.tma("mute", "--pane", pane, "--for", "9999999999999d")  # clamps to forever
    assert res.returncode == 0 and _until(srv, pane) == "99999999999999"
    doc = srv.tma("ls", "--json", "--pane", pane)
    assert '"muted":true' in doc.stdout.replace(" ", "")
    res = srv.tma("mute", "--pane", pane, "--clear")
    assert res.stdout == f"tma: unmuted: {pane}\n" and _until(srv, pane) == ""


def test_the_default_target_is_tmux_pane(srv):
    pane = srv.agent_pane()
    res = srv.tma("mute", "--for", "90", env={"TMUX_PANE": pane})
    assert res.returncode == 0 and res.stdout == f"tma: muted for 90s: {pane}\n"
    assert _until(srv, pane).isdigit()


def test_selectors_mute_every_match(srv):
    a = srv.agent_pane(session="s")
    b = srv.agent_pane(session="s")
    other = srv.agent_pane(session="t")
    res = srv.tma("mute", "--session", "s", "--for", "1h")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("tma: muted for 1h: ")
    assert sorted(res.stdout.split(": ")[-1].split()) == sorted([a, b])
    assert _until(srv, a) and _until(srv, b) and not _until(srv, other)
    res = srv.tma("mute", "--session", "nope")
    assert res.returncode == 3 and "no agent pane" in res.stderr


@pytest.mark.parametrize("args", [
    ["--for", "0"], ["--for", "1.5h"], ["--for", "5 m"], ["--for", "5w"],
    ["--clear", "--for", "5m"], ["--session", "s"]])
def test_usage_errors_exit_2(srv, args):
    pane = srv.agent_pane()
    res = srv.tma("mute", "--pane", pane, *args)
    assert res.returncode == 2, (args, res.stderr)
    assert _until(srv, pane) == ""


def test_no_target_outside_tmux_and_a_missing_pane(srv):
    srv.agent_pane()
    res = srv.tma("mute")
    assert res.returncode == 2 and "$TMUX_PANE" in res.stderr
    res = srv.tma("mute", "--pane", "%999")
    assert res.returncode == 3 and "%999" in res.stderr

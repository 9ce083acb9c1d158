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


def test_no_target_on_an_agent_less_pane_is_an_error_not_a_silent_mute(srv):
    shell = srv.shell_pane()
    res = srv.tma("mute", env={"TMUX_PANE": shell})
    assert res.returncode == 2, res
    assert f"this pane ({shell}) runs no agent" in res.stderr and "--pane" in res.stderr
    assert _until(srv, shell) == "" and res.stdout == ""
    # named on purpose, a pane is muted whatever runs there (an agent may start later)
    res = srv.tma("mute", "--pane", shell, "--for", "1m")
    assert res.returncode == 0 and _until(srv, shell)


def test_list_shows_every_muted_pane_and_until_when(srv):
    a = srv.agent_pane(session="s")
    res = srv.tma("mute", "--list")
    assert (res.returncode, res.stdout) == (0, "no pane is muted\n")
    b = srv.agent_pane(session="t")
    quiet = srv.agent_pane(session="t")
    assert srv.tma("mute", "--pane", a, "--for", "30m").returncode == 0
    assert srv.tma("mute", "--pane", b).returncode == 0
    res = srv.tma("mute", "--list")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and quiet not in res.stdout
    line_a = next(ln for ln in lines if ln.startswith(a + " "))
    line_b = next(ln for ln in lines if ln.startswith(b + " "))
    assert "  fake  " in line_a and "muted for 29m" in line_a
    assert line_b.endswith("muted indefinitely")
    assert line_a.index("muted") == line_b.index("muted")  # aligned columns
    res = srv.tma("mute", "--list", "--session", "t")
    assert res.stdout.splitlines() == [line_b]
    res = srv.tma("mute", "--list", "--clear")
    assert res.returncode == 2

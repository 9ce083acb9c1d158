"""A compromised host against the daemon: one legal snapshot, or a stream of them, never
stalls this machine's own detection, never rings more than its budget, never grows the
daemon's files or memory without bound; and the picker and watch show its rows as plain
text (issue 28).

This machine is `srv` (a private tmux server with fake agents, its own HOME and config)
with a real `tma daemon`; the host is a real process speaking the protocol
(tests/helpers/hostile_host.py) as the host's `--via` argv.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import daemon as daemon_helper
from tests.helpers.daemon import _claude, _draw, _until
from tests.helpers.notify_log import _lines
from tests.helpers.screens import row_of, screen_pane, wait_screen

HOSTILE = Path(__file__).resolve().parents[1] / "helpers" / "hostile_host.py"
EVIL = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x1b\\\x1b[2J\x9b31m\a"
TICK = os.sysconf("SC_CLK_TCK")


@pytest.fixture
def daemon(srv, tmp_path):
    with daemon_helper.watched(srv, tmp_path) as d:
        yield d


def _config(srv, tmp_path: Path, extra: str = "") -> Path:
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[notify]\nlog = "{log}"\ndesktop = false\n'
                          f"[fleet]\nkeepalive_secs = 2\n{extra}", encoding="utf-8")
    return log


def _host(srv, tmp_path: Path, scenario: dict, name: str = "evil") -> None:
    path = tmp_path / f"{name}-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    via = shlex.join([sys.executable, str(HOSTILE), str(path)])
    res = srv.tma("host", "add", name, "evil.example", "--via", via, "--replace")
    assert res.returncode == 0, res.stderr


def _fleet(daemon) -> dict:
    status = daemon.status() or {}
    return status.get("fleet") or {}


def _online(srv, daemon, name: str = "evil", timeout: float = 20) -> dict:
    def check():
        hosts = {h["name"]: h for h in _fleet(daemon).get("hosts", ())}
        h = hosts.get(name)
        return h if h and h["state"] == "online" else None
    return srv.wait_for(check, timeout=timeout, interval=0.1)


def _rings(log: Path, host: str = "evil") -> list[dict]:
    return [r for r in _lines(log) if r["pane"].startswith(f"{host}:")]


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_a_flood_of_legal_rows_never_stalls_the_daemon_or_rings_past_its_budget(
        srv, daemon, tmp_path):
    log = _config(srv, tmp_path)
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    srv.wait_for(lambda: srv.option(pane, "@agent_state") == "idle", timeout=10)
    (pid,) = daemon.pids()
    rss_before = _rss_mb(pid)
    # 15,000 blocked rows in each 8 MB snapshot, re-sent as fast as the pipe takes them
    _host(srv, tmp_path, {"rows": [{"state": "blocked"}], "count": 15_000, "flood": True})
    _online(srv, daemon)
    cpu0, t0 = _cpu_s(pid), time.monotonic()
    time.sleep(3)
    # this machine's own agent is read as fast as ever while the host streams
    _draw(srv, pane, "blocked")
    took = _until(srv, pane, "@agent_state", "blocked", timeout=10)
    assert took < 2.0, f"the local pane was stamped {took:.2f} s late under the flood"
    time.sleep(max(0.0, 10 - (time.monotonic() - t0)))
    cpu = (_cpu_s(pid) - cpu0) / (time.monotonic() - t0)
    # reading, parsing and capping 8 MB a second would take most of a core; the host's
    # bytes are read at a bounded rate, so the flood costs a small share of one
    assert cpu < 0.35, f"the daemon used {cpu:.0%} of a core under the flood"
    assert _rss_mb(pid) - rss_before < 80, "the daemon's memory grew without bound"
    rings = _rings(log)
    per_minute = 6
    assert len(rings) <= per_minute + 1, len(rings)
    assert any("more blocked on evil" in (r.get("title") or "") for r in rings), rings
    hosts = {h["name"]: h for h in _fleet(daemon)["hosts"]}
    assert any("kept the first" in p for p in hosts["evil"]["problems"])
    state = Path(srv.env.get("XDG_STATE_HOME") or Path(srv.env["HOME"]) / ".local" / "state")
    rung = state / "tma" / "fleet" / "rung.json"
    assert rung.exists() and rung.stat().st_size < 128 * 1024


def test_a_paced_flood_of_new_episodes_rings_the_budget_and_one_summary(
        srv, daemon, tmp_path):
    log = _config(srv, tmp_path, "rings_per_minute = 3\n")
    srv.shell_pane()
    daemon.start()
    # one row whose episode changes four times a second: 24 new episodes in 6 s
    _host(srv, tmp_path, {"rows": [{"pane": "%7", "state": "blocked"}], "stream": 0.25,
                          "new_episode": True})
    _online(srv, daemon)
    time.sleep(6)
    rings = _rings(log)
    singles = [r for r in rings if r["pane"] == "evil:%7" and "more" not in r["agent"]]
    folded = [r for r in rings if "more blocked on evil" in (r.get("title") or "")]
    assert len(singles) == 3, rings
    assert len(folded) == 1, rings  # the surplus: one ring, not one each


def test_a_link_replaced_by_a_hosts_edit_still_rings_its_first_prompt(srv, daemon, tmp_path):
    log = _config(srv, tmp_path)
    srv.shell_pane()
    daemon.start()
    _host(srv, tmp_path, {"rows": [{"pane": "%1", "state": "idle"}]})
    first = _online(srv, daemon)
    assert first["connects"] == 1
    time.sleep(0.5)
    # the edit: another transport for the same host, whose agent is now blocked
    _host(srv, tmp_path, {"rows": [{"pane": "%1", "state": "blocked",
                                    "episode_ms": 5000, "since_ms": 5000}]})
    srv.wait_for(lambda: [r for r in _rings(log) if r["pane"] == "evil:%1"], timeout=15)


def test_the_picker_and_watch_show_a_hosts_rows_as_plain_text(srv, daemon, tmp_path):
    _config(srv, tmp_path)
    srv.shell_pane()
    srv.tmux("set-option", "-g", "set-clipboard", "on")
    daemon.start()
    _host(srv, tmp_path, {"rows": [{"pane": "%1#(touch PWNED)", "agent": "claude"},
                                   {"pane": "%5", "agent": f"ev{EVIL}il",
                                    "locator": f"lo{EVIL}c", "repo": EVIL,
                                    "pending_summary": f"Bash: {EVIL}"}],
                          "hello": {"host": EVIL}})
    _online(srv, daemon)
    env = f"XDG_RUNTIME_DIR={shlex.quote(str(daemon.runtime))} TERM=dumb"
    picker = screen_pane(srv, width=100, height=30, env=env)
    watch = screen_pane(srv, "watch", session="w", width=120, height=30, env=env)
    for pane in (picker, watch):
        s = wait_screen(srv, pane, lambda s: "evil" in row_of(s, "evil"), timeout=15)
        assert "PWNED" not in s and "%1#" not in s
    # Enter on every row the picker lists: nothing runs here
    for _ in range(4):
        srv.tmux("send-keys", "-t", picker, "Down")
    srv.tmux("send-keys", "-t", picker, "Enter")
    time.sleep(1.0)
    assert srv.tmux("list-buffers") == "", "a host's text wrote the clipboard"
    titles = srv.tmux("list-panes", "-a", "-F", "#{pane_title}")
    assert "owned" not in titles, "a host's text set a pane title"
    windows = srv.tmux("list-windows", "-a", "-F", "#{window_name}")
    assert "PWNED" not in windows
    assert not list(Path(srv.env["HOME"]).rglob("PWNED")) and not Path("PWNED").exists()

"""`tma ls` begins its pane read before its modules load (Session.begin_cycle_read): the
read is the cycle's own (no second listing, the cycle's spawns as counted), with the
binary the config names, and nothing begins for --help, a broken config or no server
that would change what ls says."""

from __future__ import annotations

from pathlib import Path


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_the_early_read_is_the_cycles_own_with_the_configs_binary(srv):
    pane = srv.agent_pane()
    srv.draw(pane, "FAKE-IDLE\n")
    wrapper, log = srv.logging_tmux()
    srv.config.write_text(f'[tmux]\nbin = "{wrapper}"\n')
    env = {"TMA_TMUX_BIN": ""}  # the config names the binary
    res = srv.tma("--debug-timing", "ls", "--json", check=True, env=env)
    assert '"state": "idle"' in res.stdout or '"state":"idle"' in res.stdout, res.stdout
    calls = _calls(log)
    spawns = int(res.stderr.split(" spawns")[0].rsplit(" ", 1)[1])
    assert len(calls) == spawns, (calls, res.stderr)
    assert calls[0].split()[3] == "list-panes" and sum("list-panes -a" in c for c in calls) == 1


def test_ls_help_begins_no_read(srv):
    srv.agent_pane()
    wrapper, log = srv.logging_tmux()
    for argv in (["ls", "--help"], ["ls", "-h"]):
        res = srv.tma(*argv, check=True, env={"TMA_TMUX_BIN": str(wrapper)})
        assert "--json" in res.stdout
    assert _calls(log) == []


def test_a_broken_config_is_still_the_error_ls_reports(srv):
    srv.agent_pane()
    wrapper, log = srv.logging_tmux()
    srv.config.write_text("[tmux]\nbinn = 1\n")
    res = srv.tma("ls", env={"TMA_TMUX_BIN": str(wrapper)})
    assert res.returncode == 1 and "tmux.binn" in res.stderr, res.stderr
    assert _calls(log) == []  # nothing began on a config that does not load


def test_no_server_is_still_said_as_before(srv):
    res = srv.tma("ls")  # the fixture's server was never started
    assert res.returncode == 1 and res.stderr.strip() == "tma: no tmux server running"


def test_a_usage_error_is_still_the_error(srv):
    srv.agent_pane()
    res = srv.tma("ls", "--bogus")
    assert res.returncode == 2 and "--bogus" in res.stderr

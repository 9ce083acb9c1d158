"""The fleet over a real OpenSSH server: this machine's `tma host` and `tma ls --hosts`
reading a second tmux server (its own -L name and HOME) through sshd's forced command
`tma serve --stdio`, with real agent-named processes drawing captured Claude screens.

Every way a host can fail is a named state within a bounded time, never a hang or a
traceback: sshd killed, remote tmux killed, remote tma missing or too old, a shell that
prints a banner first (its rows are still read).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers.fleet import Here
from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.schemas import _schema
from tma.core import fixture

jsonschema = pytest.importorskip("jsonschema")

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
LS_SCHEMA = _schema("ls.schema.json")
#: A failing host is named within its timeout plus process start-up, never later.
BOUND_S = 12.0


class Local(Here):
    """This machine's tma, no local tmux server (the hosts' rows alone)."""

    def check(self, name: str) -> tuple[int, str, float]:
        start = time.monotonic()
        res = self.tma("host", "check", name, "--timeout", "5")
        assert "Traceback" not in res.stdout + res.stderr
        return res.returncode, res.stdout + res.stderr, time.monotonic() - start


@pytest.fixture
def local(tmp_path):
    return Local(tmp_path / "local", prefix="nolocal")


def _claude(srv, screen: str = "blocked") -> KeyRecorder:
    cap = fixture.parse((CAPTURES / f"claude-2.1.332_{screen}.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    return KeyRecorder.start(srv, "claude", cap, after=idle, redraw_ms=100)


def _add(local: Local, sshd, name: str = "box", *extra: str) -> None:
    res = local.tma("host", "add", name, "tma-test", "--via", sshd.via(), *extra)
    assert res.returncode == 0, res.stderr


def _host(doc: dict, name: str) -> dict:
    return next(h for h in doc["hosts"] if h["name"] == name)


def test_remote_rows_reach_ls_and_host_check_passes(srv, sshd, local):
    rec = _claude(srv)
    srv.tmux("select-pane", "-t", rec.pane, "-T", "secret-title")
    sshd.set_command(sshd.serve_command(srv, "--scope", "read,act:answer"))
    _add(local, sshd, "box", "--act", "answer")
    hosts_file = Path(local.env["XDG_CONFIG_HOME"]) / "tma" / "hosts.toml"
    assert hosts_file.stat().st_mode & 0o777 == 0o600

    doc, err, took = local.ls_hosts()
    assert _host(doc, "box") == {"name": "box", "state": "ok", "error": None,
                                 "age_ms": _host(doc, "box")["age_ms"]}
    rows = [r for r in doc["agents"] if r["host"] == "box"]
    assert [(r["pane"], r["agent"], r["state"]) for r in rows] == [(rec.pane, "claude",
                                                                     "blocked")]
    assert rows[0]["title"] is None and rows[0]["stale"] is False
    assert "secret-title" not in json.dumps(doc)  # titles never leave the host
    assert took < BOUND_S

    text = local.tma("ls", "--hosts")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"box:{rec.pane}\tclaude\tblocked\t"), text.stdout

    code, out, _ = local.check("box")
    assert code == 0, out
    assert "ok   reachable: yes" in out and "ok   remote tma: " in out
    assert "ok   remote tmux: 1 agent pane" in out
    assert "act: allowed (act:answer)" in out

    # a second poll reuses the ControlMaster connection the first one left
    assert list(sshd.control.glob("ssh-*")), "no ControlMaster socket"
    doc, _err, _took = local.ls_hosts()
    assert _host(doc, "box")["state"] == "ok"


def test_a_read_only_host_says_act_is_not_allowed(srv, sshd, local):
    _claude(srv)
    sshd.set_command(sshd.serve_command(srv, "--scope", "read"))
    _add(local, sshd, "ro", "--act", "answer")
    code, out, _ = local.check("ro")
    assert code == 1
    assert "FAIL act: not allowed (read-only)" in out
    assert "fix: host ro grants acting in its forced command" in out
    doc, _err, _took = local.ls_hosts()  # reading is still fine
    assert _host(doc, "ro")["state"] == "ok" and doc["agents"]


def test_a_banner_is_skipped_and_named(srv, sshd, local):
    rec = _claude(srv)
    sshd.set_command("echo 'Welcome to host'; echo 'Last login: yesterday'; "
                     + sshd.serve_command(srv))
    _add(local, sshd, "chatty")
    doc, err, _took = local.ls_hosts()
    assert _host(doc, "chatty")["state"] == "ok"
    assert [r["pane"] for r in doc["agents"]] == [rec.pane]
    assert "the remote shell printed 2 lines before tma: a banner or motd" in err
    code, out, _ = local.check("chatty")
    assert code == 1
    assert "FAIL stdout: the remote shell printed 2 lines before tma" in out


def _failing(local: Local, name: str) -> tuple[dict, str]:
    doc, err, took = local.ls_hosts()
    assert took < BOUND_S, f"ls --hosts took {took:.1f}s"
    assert doc["agents"] == []
    code, out, took = local.check(name)
    assert code == 1 and took < BOUND_S, (code, took, out)
    return _host(doc, name), err + out


def test_sshd_killed_is_unreachable_in_bounded_time(srv, sshd, local):
    _claude(srv)
    sshd.set_command(sshd.serve_command(srv))
    _add(local, sshd, "gone")
    assert _host(local.ls_hosts()[0], "gone")["state"] == "ok"  # a master connection now
    sshd.kill()
    host, said = _failing(local, "gone")
    assert host["state"] == "unreachable" and host["age_ms"] is None
    assert "Connection refused" in host["error"] or "closed" in host["error"], host
    assert "tma: host gone: unreachable: " in said
    assert "FAIL reachable: no (unreachable: " in said


def test_remote_tmux_killed_is_named(srv, sshd, local):
    _claude(srv)
    sshd.set_command(sshd.serve_command(srv))
    _add(local, sshd, "notmux")
    assert _host(local.ls_hosts()[0], "notmux")["state"] == "ok"
    srv.tmux("kill-server")
    host, said = _failing(local, "notmux")
    assert host["state"] == "tmux-down", host
    assert "FAIL remote tmux: no server running" in said
    assert "fix: start tmux on host notmux" in said


def test_remote_tma_missing_is_named(srv, sshd, local):
    srv.shell_pane()
    sshd.set_command("exec /nonexistent/bin/tma serve --stdio")
    _add(local, sshd, "bare")
    host, said = _failing(local, "bare")
    assert host["state"] == "tma-missing", host
    assert "remote tma not found" in host["error"]
    assert "FAIL remote tma: missing" in said and "fix: install tma on host bare" in said


def test_a_remote_tma_without_serve_is_too_old(srv, sshd, local, tmp_path):
    srv.shell_pane()
    old = tmp_path / "old-tma"
    # what a tma from before `serve` says to a command it does not know
    old.write_text("#!/bin/sh\necho \"tma: unknown command '$1'; did you mean 'status'? "
                   "(see tma --help)\" >&2\nexit 2\n")
    old.chmod(0o755)
    sshd.set_command(f"exec {old} serve --stdio")
    _add(local, sshd, "old")
    host, said = _failing(local, "old")
    assert host["state"] == "tma-too-old", host
    assert "FAIL remote tma: too old" in said


def test_the_default_transport_is_ssh_with_a_control_master(srv, sshd, local, tmp_path):
    # `tma host add NAME TARGET` with no --via: tma's own ssh argv. The only help it gets
    # is this test's ssh_config, through an `ssh` on PATH that adds `-F` to it.
    rec = _claude(srv)
    sshd.set_command(sshd.serve_command(srv))
    _ssh_on_path(local, sshd, tmp_path)
    res = local.tma("host", "add", "plain", "tma-test")
    assert res.returncode == 0, res.stderr
    listed = json.loads(local.tma("host", "list", "--json").stdout)
    assert listed["hosts"] == [{"name": "plain", "target": "tma-test", "via": None,
                                "act": None, "login": None}]
    doc, _err, _took = local.ls_hosts()
    assert _host(doc, "plain")["state"] == "ok"
    assert [(r["host"], r["pane"]) for r in doc["agents"]] == [("plain", rec.pane)]
    masters = list((sshd.control / "tma").glob("ssh-*"))
    assert masters, "the default transport left no ControlMaster socket"
    code, out, _ = local.check("plain")
    assert code == 0, out


def _ssh_on_path(local: Local, sshd, tmp_path: Path) -> None:
    """The default transport's `ssh`, helped only by this test's ssh_config (`-F`)."""
    wrapper = tmp_path / "client-bin"
    wrapper.mkdir()
    (wrapper / "ssh").write_text(f"#!/bin/sh\nexec /usr/bin/ssh -F {sshd.client_config} "
                                 "\"$@\"\n")
    (wrapper / "ssh").chmod(0o755)
    local.env["PATH"] = f"{wrapper}:{local.env['PATH']}"
    local.env["XDG_RUNTIME_DIR"] = str(sshd.control)  # short: a ControlPath must fit


def test_host_check_fixes_name_the_host_not_its_ssh_alias(srv, sshd, local, tmp_path):
    # the person knows the machine as `devbox` (hosts.toml); `tma-test` is only the
    # ssh_config alias its link dials: a fix that says "start tmux on tma-test" sends
    # them looking for a machine they never named
    srv.shell_pane()  # a server with no agent: the hooks line has its fix too
    sshd.set_command(sshd.serve_command(srv, "--scope", "read"))
    _ssh_on_path(local, sshd, tmp_path)
    res = local.tma("host", "add", "devbox", "tma-test", "--act", "answer")
    assert res.returncode == 0, res.stderr
    code, read_only, _ = local.check("devbox")
    assert code == 1, read_only
    srv.tmux("kill-server")
    code, down, _ = local.check("devbox")
    assert code == 1, down
    fixes = [ln for ln in (read_only + down).splitlines() if "fix:" in ln]
    assert len(fixes) == 2 and not [f for f in fixes if "tma-test" in f], fixes
    assert "fix: host devbox grants acting in its forced command" in read_only, read_only
    assert "fix: start tmux on host devbox" in down, down

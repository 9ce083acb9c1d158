"""A compromised host: nothing it sends runs here, prints raw or piles up (issue 28).

The host is a real process speaking the protocol (tests/helpers/hostile_host.py) as the
host's `--via` argv, saying what an attacker would: pane ids that are tmux formats or
shell commands, escape sequences (OSC 52 writes the clipboard, OSC 0 the title, CSI
moves the cursor) in every string, a flood of legal rows. This machine is `fleet_local`
(its own tmux server, HOME and config; tests/helpers/fleet.py)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parents[1] / "helpers" / "hostile_host.py"
#: What an attacker puts in every string: the clipboard, the window title, a screen
#: clear, a C1 CSI, a bell, a carriage return, a bidi override.
EVIL = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x1b\\\x1b[2J\x9b31m\a\r\u202eX"
#: The bytes a terminal would act on: none may reach one from a host.
CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0))] + ["\u202e"]


def _add(here, tmp_path: Path, scenario: dict, name: str = "evil", *extra: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    via = shlex.join([sys.executable, str(HOSTILE), str(path)])
    res = here.tma("host", "add", name, "evil.example", "--via", via, "--replace", *extra)
    assert res.returncode == 0, res.stderr
    return path


def _no_control(text: str, where: str) -> None:
    found = sorted({repr(c) for c in text if c in CONTROL})
    assert not found, f"{where}: control characters from the host reached it: {found}"


def _evil_rows() -> list[dict]:
    strings = {k: EVIL for k in ("agent", "locator", "session", "repo", "branch",
                                 "pending_tool", "pending_call", "pending_summary",
                                 "permission_request", "transcript", "server", "host")}
    return [{"pane": "%1", **strings, "detail": "x\x1b"},
            {"pane": "%1#(touch PWNED)"}, {"pane": "%2;touch PWNED"},
            {"pane": "%3", "agent": "claude"}]


def test_host_text_never_reaches_a_terminal_raw(fleet_local, tmp_path):
    here = fleet_local
    _add(here, tmp_path, {"rows": _evil_rows(),
                          "hello": {"host": EVIL, "tma_version": EVIL,
                                    "scopes": ["read", EVIL]}})
    # what a person sees (a PTY: the table with its columns) and what a script reads
    seen = here.on_a_terminal("ls", "--hosts", "--timeout", "5")
    _no_control(seen.replace("\r\n", "\n").replace("\x1b[", ""), "ls --hosts on a terminal")
    assert "evil:%3" in seen and "evil:%1" in seen
    assert "PWNED" not in seen  # the rows naming a format or a command are refused
    res = here.tma("ls", "--hosts", "--timeout", "5")
    _no_control(res.stdout.replace("\t", " ").replace("\n", " "), "ls --hosts (TSV)")
    _no_control(res.stderr.replace("\n", " "), "ls --hosts stderr")
    assert "refused 2 rows whose pane is not a pane id" in res.stderr
    doc, _err, _took = here.ls_hosts()
    assert sorted(a["pane"] for a in doc["agents"] if a["host"] == "evil") == ["%1", "%3"]
    _no_control(json.dumps(doc, ensure_ascii=False), "ls --hosts --json")
    res = here.tma("host", "check", "evil", "--timeout", "5")
    _no_control(res.stdout.replace("\n", " "), "host check")
    assert "owned" in res.stdout  # the host's name is shown, as plain text
    assert not (Path(here.env["HOME"]) / "PWNED").exists()


def test_a_transport_that_talks_on_stderr_is_quoted_plain(fleet_local, tmp_path):
    here = fleet_local
    _add(here, tmp_path, {"stderr": f"ssh: {EVIL} failed\n", "exit_after_stderr": 255})
    res = here.tma("ls", "--hosts", "--timeout", "5")
    assert "tma: host evil:" in res.stderr
    _no_control(res.stderr.replace("\n", " "), "the transport's stderr")
    res = here.tma("host", "check", "evil", "--timeout", "5")
    _no_control(res.stdout.replace("\n", " "), "host check of a failing transport")
    res = here.tma("act", "approve", "--pane", "evil:%1")
    _no_control((res.stdout + res.stderr).replace("\n", " "), "act's message")


def test_an_act_refusal_from_the_host_is_quoted_plain(fleet_local, tmp_path):
    here = fleet_local
    _add(here, tmp_path, {"rows": [{"pane": "%1"}], "error": f"no {EVIL}"},
         "evil", "--act", "answer")
    res = here.tma("act", "approve", "--pane", "evil:%1")
    assert res.returncode != 0
    _no_control((res.stdout + res.stderr).replace("\n", " "), "act's message")
    assert "no " in res.stdout + res.stderr


@pytest.mark.parametrize("pane", ["%1#(touch PWNED)", "%1;touch PWNED", "%1$(touch PWNED)"])
def test_a_pane_id_that_is_a_format_or_a_command_never_runs(fleet_local, tmp_path, pane):
    here = fleet_local
    _add(here, tmp_path, {"rows": [{"pane": pane}]}, "evil")
    res = here.tma("jump", f"evil:{pane}")
    assert res.returncode == 2, (res.returncode, res.stderr)  # a usage error, named
    assert "pane id" in res.stderr
    res = here.tma("act", "approve", "--pane", f"evil:{pane}")
    assert res.returncode == 2
    windows = here.tmux("list-windows", "-a", "-F", "#{window_name}")
    assert "PWNED" not in windows
    assert not list(Path(here.root).rglob("PWNED")) and not Path("PWNED").exists()


def _fake_ssh(tmp_path: Path) -> Path:
    """An `ssh` on PATH that records its argv and does nothing else."""
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    log = tmp_path / "ssh.argv"
    ssh = bindir / "ssh"
    ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> {shlex.quote(str(log))}\n"
                   "echo '---' >> " + shlex.quote(str(log)) + "\nsleep 5\n")
    ssh.chmod(ssh.stat().st_mode | stat.S_IXUSR)
    return log


def test_ssh_options_never_come_from_a_target_or_a_login(fleet_local, tmp_path):
    here = fleet_local
    marker = tmp_path / "PWNED"
    evil = f"-oProxyCommand=touch {marker}"
    res = here.tma("host", "add", "t1", "--", evil)
    assert res.returncode != 0 and "starts with '-'" in res.stderr
    res = here.tma("host", "add", "t1", "me@box", f"--login={evil}")
    assert res.returncode != 0 and "starts with '-'" in res.stderr
    res = here.tma("host", "add", "t2", "")
    assert res.returncode != 0 and "non-empty" in res.stderr
    # a hosts.toml edited by hand is refused when read, by every command
    hosts = Path(here.env["XDG_CONFIG_HOME"]) / "tma" / "hosts.toml"
    hosts.parent.mkdir(parents=True, exist_ok=True)
    hosts.write_text(f'[hosts.t1]\ntarget = "{evil}"\n', encoding="utf-8")
    for args in (("host", "list"), ("ls", "--hosts"), ("jump", "t1:%1")):
        res = here.tma(*args)
        assert res.returncode != 0 and "starts with '-'" in res.stderr, args
        assert "Traceback" not in res.stderr
    # a well-formed host: ssh's options end with `--` before the destination
    hosts.write_text('[hosts.t1]\ntarget = "me@box"\n', encoding="utf-8")
    log = _fake_ssh(tmp_path)
    here.env["PATH"] = f"{tmp_path / 'fakebin'}{os.pathsep}{here.env['PATH']}"
    here.tma("ls", "--hosts", "--timeout", "2")
    here.tma("host", "check", "t1", "--timeout", "2")
    calls = [c.strip().split("\n") for c in log.read_text().split("---") if c.strip()]
    assert calls, "the fake ssh never ran"
    for argv in calls:
        assert argv[argv.index("me@box") - 1] == "--", argv
    assert not marker.exists()


def test_a_broken_hosts_file_is_named_not_a_traceback(fleet_local):
    here = fleet_local
    hosts = Path(here.env["XDG_CONFIG_HOME"]) / "tma" / "hosts.toml"
    hosts.parent.mkdir(parents=True, exist_ok=True)
    hosts.write_bytes(b'[hosts.a]\ntarget = "caf\xe9"\n')
    for args in (("host", "list"), ("ls", "--hosts")):
        res = here.tma(*args)
        assert res.returncode == 1 and "not UTF-8" in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
    hosts.unlink()
    hosts.mkdir()
    for args in (("host", "list"), ("ls", "--hosts")):
        res = here.tma(*args)
        assert res.returncode == 1 and "is a directory" in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr


def test_host_set_changes_one_setting_and_keeps_the_rest(fleet_local):
    here = fleet_local
    hosts = Path(here.env["XDG_CONFIG_HOME"]) / "tma" / "hosts.toml"
    res = here.tma("host", "add", "devbox", "me@devbox", "--login", "me@login")
    assert res.returncode == 0, res.stderr
    with open(hosts, "a", encoding="utf-8") as fh:
        fh.write("# my own note\n")
    res = here.tma("host", "set", "devbox", "--act", "steer")
    assert res.returncode == 0, res.stderr
    listed = json.loads(here.tma("host", "list", "--json").stdout)["hosts"]
    assert listed == [{"name": "devbox", "target": "me@devbox", "via": None, "act": "steer",
                       "login": "me@login"}]
    assert "# my own note" in hosts.read_text()
    res = here.tma("host", "set", "devbox", "--act", "none", "--login", "")
    assert res.returncode == 0, res.stderr
    listed = json.loads(here.tma("host", "list", "--json").stdout)["hosts"]
    assert listed[0]["act"] is None and listed[0]["login"] is None
    res = here.tma("host", "set", "devbox", "--login=-oProxyCommand=x")
    assert res.returncode == 1 and "starts with '-'" in res.stderr
    assert here.tma("host", "set", "devbox").returncode == 2
    assert here.tma("host", "set", "nobox", "--act", "answer").returncode == 1

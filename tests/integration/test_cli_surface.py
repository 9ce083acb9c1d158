"""The command line as a newcomer meets it: help, version, one rule for bad input, one
exit status per kind of error (cli/main.py's boundary)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tma import __version__


def _run(srv, *args, **kw):
    return srv.tma(*args, manifests=kw.pop("manifests", True), **kw)


@pytest.mark.parametrize("flag", ["--version", "-V", "version"])
def test_version_in_every_spelling(srv, flag):
    res = _run(srv, flag)
    assert (res.returncode, res.stdout, res.stderr) == (0, f"tma {__version__}\n", "")


def test_bare_tma_prints_help_on_stderr_and_exits_2(srv):
    res = subprocess.run([sys.executable, "-m", "tma"], capture_output=True, text=True,
                         env=srv.env, timeout=30)
    assert res.returncode == 2 and res.stdout == ""
    assert "commands:" in res.stderr and "docs/reference/cli.md" in res.stderr


def test_unknown_option_is_not_an_unknown_command(srv):
    res = _run(srv, "--bogus")
    assert res.returncode == 2 and "tma: unknown option --bogus" in res.stderr
    res = _run(srv, "bogus")
    assert res.returncode == 2 and "tma: unknown command 'bogus'" in res.stderr
    res = _run(srv, "ls", "--bogus")
    assert res.returncode == 2 and "tma ls: unknown option --bogus" in res.stderr


def test_help_command_and_flag_agree_and_list_flags_and_exits(srv):
    by_help = _run(srv, "help", "wait")
    by_flag = _run(srv, "wait", "--help")
    assert by_help.returncode == by_flag.returncode == 0
    assert by_help.stdout == by_flag.stdout
    for word in ("--until STATES", "--timeout SECS", "--agent NAME", "exit status:", "124"):
        assert word in by_help.stdout, word
    assert _run(srv, "help", "nope").returncode == 2
    top = _run(srv, "--help")
    assert top.returncode == 0 and "docs/reference/cli.md" in top.stdout


@pytest.mark.parametrize("argv", [
    ("ls", "--pane", "{}"), ("jump", "--pane", "{}"),
    ("wait", "--pane", "{}", "--until", "idle", "--timeout", "20"),
    ("act", "approve", "--pane", "{}"), ("debug", "explain", "{}"), ("debug", "capture", "{}"),
])
def test_one_rule_for_pane_ids(srv, argv):
    srv.agent_pane()
    bad = _run(srv, *[a.format("foo") for a in argv])
    assert bad.returncode == 2, bad.stderr
    assert "expected a pane id like %3, got 'foo'" in bad.stderr
    start = time.monotonic()
    gone = _run(srv, *[a.format("%999") for a in argv])
    assert gone.returncode == 3, gone.stderr
    assert "no pane %999" in gone.stderr
    assert time.monotonic() - start < 10  # wait does not wait for a pane that is not there


def test_jump_to_a_live_pane_without_an_agent_is_a_note(srv):
    shell = srv.shell_pane()
    srv.agent_pane()
    res = _run(srv, "jump", "--pane", shell, "--client", "nobody")
    assert res.returncode == 0 and f"no agent in pane {shell}" in res.stderr


@pytest.mark.parametrize("cmd", ["ls", "status", "wait --any --until idle --timeout 0",
                                 "jump"])
def test_unknown_agent_lists_the_known_ones(srv, cmd):
    srv.agent_pane()
    res = _run(srv, *cmd.split(), "--agent", "nosuch")
    assert res.returncode == 2
    assert "unknown agent 'nosuch' (expected one of: fake)" in res.stderr


def test_a_named_config_must_exist(srv, tmp_path):
    missing = str(tmp_path / "nope.toml")
    res = _run(srv, "ls", "--config", missing)
    assert res.returncode == 1 and f"config {missing}: no such file" in res.stderr
    res = _run(srv, "ls", env={"TMA_CONFIG": missing})
    assert res.returncode == 1 and "named by TMA_CONFIG" in res.stderr
    # a manifest dir named on the command line too: a typo would load no agent at all
    for cmd in (["ls"], ["status", "--format", "plain"], ["doctor"]):
        res = _run(srv, *cmd, "--manifest-dir", str(tmp_path / "agnets"))
        assert res.returncode == 1, (cmd, res.stderr)
        assert f"manifest dir {tmp_path / 'agnets'}: no such directory" in res.stderr


def test_broken_config_is_visible_on_the_status_line_and_in_doctor(srv):
    srv.agent_pane()
    srv.config.write_text("[fold]\nbogus = 1\n")
    res = _run(srv, "status")  # stdout is a pipe, as under #()
    assert res.returncode == 1
    assert res.stdout == "tma:config!"
    assert "fold.bogus" in res.stderr
    as_json = _run(srv, "status", "--format", "json")
    assert as_json.returncode == 1 and as_json.stdout == ""  # no marker in a machine format
    doctor = _run(srv, "doctor")  # one ✗ line, and the rest diagnosed (issue 22)
    assert doctor.returncode == 0 and "config:  ✗ " in doctor.stdout
    assert "fold.bogus" in doctor.stdout and "tmux:" in doctor.stdout


def test_no_server_is_one_message(srv):
    for cmd in (["ls"], ["status"], ["jump"], ["doctor"], ["debug", "capture", "%1"]):
        res = _run(srv, *cmd)
        assert res.returncode == 1, (cmd, res.stderr)
        assert res.stderr.strip() == "tma: no tmux server running", cmd


def test_ctrl_c_exits_130_without_a_traceback(srv):
    shell = srv.shell_pane()
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, "--manifest-dir",
            str(srv.manifests), "wait", "--pane", shell, "--until", "working"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=srv.env)
    time.sleep(1.5)  # past the first cycle: now in the wait loop
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert "Traceback" not in err


def test_a_closed_pipe_is_a_quiet_success(srv):
    script = f"set -o pipefail; {sys.executable} -m tma completions bash | true"
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=srv.env,
                         timeout=30)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "Broken pipe" not in res.stderr


def test_did_you_mean_for_a_mistyped_command_or_flag(srv):
    for args, said in ((["lss"], "tma: unknown command 'lss'; did you mean 'ls'?"),
                       (["ls", "--jsno"], "tma ls: unknown option --jsno; did you mean --json?"),
                       (["--sockt-name", "x", "ls"], "unknown option --sockt-name; did you "
                                                     "mean --socket-name?"),
                       (["mute", "--lst"], "tma mute: unknown option --lst; did you mean "
                                           "--list?"),
                       (["status", "--formt", "plain"], "did you mean --format?")):
        res = srv.tma(*args)
        assert res.returncode == 2 and said in res.stderr, (args, res.stderr)
    res = srv.tma("qqqqq")
    assert res.returncode == 2 and "did you mean" not in res.stderr

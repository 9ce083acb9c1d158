"""`tma debug notify-test`: rings every live sink on a made-up note and reports each; with
no tmux server the message line is skipped (not failed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tma.runtime import daemon_files


def _run(tmp_path, config: str, *args: str, **env):
    cfg = tmp_path / "config.toml"
    cfg.write_text(config)
    run = tmp_path / "run"
    run.mkdir(exist_ok=True, mode=0o700)
    base = {k: v for k, v in os.environ.items()
            if k not in ("TMA_NOTIFY_CMD", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE")}
    base.update(TMA_CONFIG=str(cfg), XDG_RUNTIME_DIR=str(run), **env)
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", "tma-no-such-server",
                          "debug", "notify-test", *args], capture_output=True, text=True,
                         env=base, timeout=30, cwd=tmp_path)
    # the record of the server notify-test was pointed at (keyed as its daemon's files)
    sock = os.path.join(os.path.realpath(f"{base.get('TMUX_TMPDIR') or '/tmp'}/tmux-"
                                         f"{os.getuid()}"), "tma-no-such-server")
    return res, run / "tma" / f"{daemon_files.key(sock)}.notify-error"


def test_a_failing_command_shows_its_exit_and_stderr_and_is_recorded(tmp_path):
    res, record = _run(tmp_path, '[notify]\ncommand = "cat >&2; echo oops >&2; exit 3"\n',
                       "--trigger", "context_high")
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    payload = json.loads(lines[0].removeprefix("payload "))
    assert (payload["state"], payload["context_pct"], payload["agent"]) == (
        "context_high", 80, "test")
    assert lines[1] == "message skipped: no tmux server reachable (no tmux server running)"
    assert lines[2] == 'command cat >&2; echo oops >&2; exit 3'
    assert lines[3] == "exit 3"
    assert lines[4].startswith('stderr {"schema":3') and lines[-2] == "stderr oops"
    assert lines[-1] == "rings nothing for context_high: [notify.context_high] is absent"
    assert json.loads(record.read_text())["reason"] == "exit status 3"
    res, record = _run(tmp_path, '[notify]\nblocked = { command = "cat > /dev/null" }\n')
    assert res.returncode == 0 and res.stdout.splitlines()[1:] == [
        "message skipped: no tmux server reachable (no tmux server running)",
        "command cat > /dev/null", "exit 0",
        "rings the tmux message line on every attached client; the command above"]
    assert not record.exists()  # a clean run clears the record


def test_nothing_to_run_and_a_bad_trigger_exit_1(tmp_path):
    res, _ = _run(tmp_path, "[notify]\ndesktop = false\n")
    assert res.returncode == 1 and "command none: desktop = false" in res.stdout
    res, _ = _run(tmp_path, "", "--trigger", "working")
    assert res.returncode == 1 and "unknown trigger 'working'" in res.stderr


def test_it_says_what_rings_when_no_sink_resolves(tmp_path):
    """No command and no desktop notifier: the message line still shows a real one, and
    the report says so rather than leaving "command none" as the last word."""
    res, _ = _run(tmp_path, "[notify]\ndesktop = false\n")
    last = res.stdout.splitlines()[-1]
    assert last == "rings the tmux message line on every attached client"
    log = tmp_path / "x.log"
    res, _ = _run(tmp_path, '[notify]\ndesktop = false\nmessage = false\nbell = true\n'
                            f'log = "{log}"\n')
    assert res.stdout.splitlines()[-1] == f"rings a bell in the pane; a line in {log}"
    # the log is rung for real (the bell has no pane to reach outside tmux: skipped)
    assert res.stdout.splitlines()[1:3] == [
        "bell skipped: not run in a pane of a reachable tmux server",
        f"log appended a line to {log}"]
    assert res.returncode == 0 and '"agent":"test"' in log.read_text()
    res, _ = _run(tmp_path, "[notify]\ndesktop = false\nmessage = false\n")
    assert res.stdout.splitlines()[-1].startswith("rings nothing: message = false")
    res, _ = _run(tmp_path, '[notify]\ncommand = "true"\n', "--trigger", "done")
    assert res.returncode == 0
    assert res.stdout.splitlines()[-1] == \
        'rings nothing for done: done is not in [notify] on (default ["blocked"])'


def test_the_desktop_notifier_says_what_its_notification_offers(tmp_path):
    """With the real notify-send on a real session bus: the test notification is shown
    (its Notify received), and a line says whether the daemon's one offers actions."""
    from tests.helpers.notify_server import NotifyBus, need_tools

    need_tools()
    with NotifyBus() as bus:
        res, _ = _run(tmp_path, "", DBUS_SESSION_BUS_ADDRESS=bus.address)
        assert res.returncode == 0, res.stdout + res.stderr
        note = bus.wait_notify()
        assert note.summary == "tma: test blocked"
        lines = res.stdout.splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith("command "))
        assert lines[at].startswith("command notify-send (desktop)")
        assert lines[at + 1].startswith("desktop notify-send: a click on the body jumps to "
                                        "the pane; Approve / Deny buttons")
        res, _ = _run(tmp_path, '[notify]\ndesktop_actions = "jump"\n',
                      DBUS_SESSION_BUS_ADDRESS=bus.address)
        assert "(desktop_actions = \"jump\": no Approve / Deny)" in res.stdout
        res, _ = _run(tmp_path, "[notify]\ndesktop_actions = false\n",
                      DBUS_SESSION_BUS_ADDRESS=bus.address)
        assert "desktop notify-send: no actions (desktop_actions = false)" in res.stdout


def test_with_a_server_and_a_client_every_live_sink_rings_and_is_reported(srv, tmp_path):
    """Run in a pane of a live server with a real client attached: the message line is
    shown on the client for real, the bell and OSC reach the pane's tty, the log gets
    its line and the command runs; one report line (or more) per sink, exit 0."""
    from tests.helpers.ptyclient import PtyClient

    pane = srv.shell_pane()
    client = PtyClient(srv, "s")
    try:
        log = tmp_path / "n.jsonl"
        out = tmp_path / "cmd.out"
        srv.config.write_text(f'[notify]\nbell = true\nosc = true\nlog = "{log}"\n'
                              f'command = "cat > {out}"\n')
        tty = srv.display(pane, "#{pane_tty}")
        res = srv.tma("debug", "notify-test", env={"TMUX_PANE": pane})
        lines = res.stdout.splitlines()
        shown = "tma: test blocked — tma notify-test"
        assert lines[1:8] == [f"message shown on 1 attached client: {shown}",
                              f"bell written to {tty}", f"osc written to {tty}",
                              f"log appended a line to {log}", f"command cat > {out}",
                              "exit 0", "rings the tmux message line on every attached client; "
                              f"a bell in the pane; an OSC 9 notification in the pane; "
                              f"a line in {log}; the command above"], res.stdout
        assert res.returncode == 0, res.stdout + res.stderr
        srv.wait_for(lambda: shown in client.output())  # on the client's status line
        assert '"agent":"test"' in log.read_text() and '"pane":"' + pane in out.read_text()

        # one sink that fails makes the exit 1; the others are still rung and reported
        srv.config.write_text('[notify]\ncommand = "exit 3"\n')
        res = srv.tma("debug", "notify-test", env={"TMUX_PANE": pane})
        assert res.returncode == 1
        assert res.stdout.splitlines()[1:4] == [
            f"message shown on 1 attached client: {shown}", "command exit 3", "exit 3"]
    finally:
        client.close()


def test_the_daemons_control_client_is_not_an_attached_client(srv, tmp_path):
    """The daemon attaches a control-mode client to every session: that is tma, not a
    person, so notify-test neither counts it nor shows its message there."""
    from tests.helpers.daemon import watched
    from tests.helpers.ptyclient import PtyClient

    srv.env["XDG_RUNTIME_DIR"] = str(tmp_path / "rt")  # the daemon's and notify-test's
    pane = srv.shell_pane()
    srv.config.write_text("[notify]\ndesktop = false\n")
    with watched(srv, tmp_path) as daemon:
        daemon.start()
        srv.wait_for(lambda: srv.tmux("list-clients", "-F", "#{client_control_mode}")
                     .split() == ["1"])
        res = srv.tma("debug", "notify-test", env={"TMUX_PANE": pane})
        assert res.stdout.splitlines()[1] == \
            "message skipped: no client attached to the tmux server", res.stdout
        client = PtyClient(srv, "s")
        try:
            res = srv.tma("debug", "notify-test", env={"TMUX_PANE": pane})
            assert res.stdout.splitlines()[1] == \
                "message shown on 1 attached client: tma: test blocked — tma notify-test"
        finally:
            client.close()

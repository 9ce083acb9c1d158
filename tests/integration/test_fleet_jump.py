"""Reaching a fleet host's pane by hand: `tma attach --pane %N` on the host (a real tmux
client on a pseudo-terminal lands on the pane), and `tma jump HOST:%N` on this machine (a
local window running `ssh -t ... tma attach --pane %N` through a real OpenSSH server,
reused by the next jump)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.helpers.ptyclient import PtyClient, client_names

FLEET_DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "fleet.md"
PREFIX = b"\x02"  # C-b: the prefix of both servers (their config is /dev/null)


def _clients_on(srv) -> dict[str, str]:
    out = srv.tmux("list-clients", "-F", "#{client_name}\t#{pane_id}")
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)


def test_attach_lands_on_the_pane_in_its_own_session(srv):
    srv.shell_pane(session="s")
    target = srv.agent_pane(session="other")
    later = srv.new_pane("exec sh", session="other")  # the session's current window now
    srv.tmux("select-window", "-t", later)
    client = PtyClient(srv, argv=[sys.executable, "-m", "tma", "--socket-name", srv.name,
                                  "attach", "--pane", target])
    try:
        assert client.pane() == target
        assert srv.display(target, "#{session_name}") == "other"
    finally:
        client.close()


def test_attach_to_no_such_pane_is_exit_3(srv):
    srv.shell_pane()
    res = srv.tma("attach", "--pane", "%999")
    assert res.returncode == 3
    assert res.stderr == "tma: no pane %999\n"
    assert srv.tma("attach", "--pane", "box:%1").returncode == 2  # a pane here, not a host


def test_jump_to_a_remote_pane_opens_a_window_and_reuses_it(srv, srv2, sshd):
    # srv is the host (its agent pane); srv2 is this machine, with a person's client
    target = srv.agent_pane()
    sshd.set_command(sshd.login_command(srv), pty=True)
    home = srv2.shell_pane()
    me = PtyClient(srv2, "s")
    try:
        res = srv2.tma("host", "add", "box", "tma-test", "--via", sshd.via())
        assert res.returncode == 0, res.stderr
        tag = f"box:{target}"
        res = srv2.tma("jump", tag, "--client", me.name)
        assert res.returncode == 0, res.stderr
        tagged = _tagged(srv2, tag)
        assert len(tagged) == 1
        window = tagged[0]
        assert me.pane() == window
        command = srv2.display(window, "#{pane_start_command}").strip('"')  # tmux quotes it
        assert command.startswith("ssh -F ") and " -t " in command, command
        assert "ControlPath" not in command  # a login of its own, not the link's master
        assert command.endswith(f"tma-test tma attach --pane {target}"), command
        # the window's ssh logged in and attached a client to the host's pane
        srv.wait_for(lambda: target in _clients_on(srv).values(), timeout=20)

        srv2.tmux("switch-client", "-c", me.name, "-t", home)
        assert me.pane() == home
        res = srv2.tma("jump", "--pane", tag, "--client", me.name)
        assert res.returncode == 0, res.stderr
        assert _tagged(srv2, tag) == [window]  # reused, not a second window
        assert me.pane() == window
        assert len(_clients_on(srv)) == 1  # still the one remote client
    finally:
        me.close()


def test_a_jump_through_a_key_that_serves_only_the_link_says_so_and_fails(srv, srv2, sshd):
    # the fleet key's forced command is `tma serve` (restrict: no terminal): a login with
    # it cannot attach, ends at once, and its window with it. The jump says what failed
    # and what to set, exits 1, and leaves the person where they were
    target = srv.agent_pane()
    sshd.set_command(sshd.serve_command(srv))
    home = srv2.shell_pane()
    me = PtyClient(srv2, "s")
    try:
        res = srv2.tma("host", "add", "box", "tma-test", "--via", sshd.via())
        assert res.returncode == 0, res.stderr
        tag = f"box:{target}"
        res = srv2.tma("jump", tag, "--client", me.name)
        assert res.returncode == 1, (res.stdout, res.stderr)
        assert res.stderr.startswith("tma: the login to box ended at once"), res.stderr
        assert "the host's key runs only `tma serve`" in res.stderr, res.stderr
        assert "tma host set box --login TARGET" in res.stderr, res.stderr
        assert not _tagged(srv2, tag)  # no dead window left behind
        assert me.pane() == home
        assert not srv2.tmux("show-options", "-s", "-q", "-v",
                             _trail_key(me.name)).strip()  # and no trail entry
    finally:
        me.close()


def _trail_key(client: str) -> str:
    from tma.tmux.nav import trail_key

    return trail_key(client)


def test_jump_to_an_unknown_host_names_it(srv2):
    srv2.shell_pane()
    me = PtyClient(srv2, "s")
    try:
        res = srv2.tma("jump", "nowhere:%1", "--client", me.name)
        assert res.returncode == 1 and "no host named 'nowhere'" in res.stderr
        assert not _tagged(srv2, "nowhere:%1")
        assert me.name in client_names(srv2)
    finally:
        me.close()


def _tagged(srv, tag: str) -> list[str]:
    out = srv.tmux("list-panes", "-a", "-F", "#{pane_id}\t#{@tma_remote}")
    return [p for p, _, v in (line.partition("\t") for line in out.splitlines()) if v == tag]


def test_attach_inside_tmux_switches_the_client(srv):
    home = srv.shell_pane(session="s")
    target = srv.agent_pane(session="other")
    me = PtyClient(srv, "s")
    try:
        assert me.pane() == home
        # run as from a shell in `home`: $TMUX says so, so the client there switches
        res = srv.tma("attach", "--pane", target,
                      env={"TMUX": f"/nonexistent,{me.pid},0", "TMUX_PANE": home})
        assert res.returncode == 0, res.stderr
        assert me.pane() == target
    finally:
        me.close()


def test_the_documented_detach_ends_the_login_and_a_plain_prefix_d_does_not(srv, srv2,
                                                                             sshd):
    # a jump's window is a tmux client inside a tmux client, with one prefix for both:
    # this machine's tmux takes `prefix d` and detaches the person. `prefix prefix d`
    # (its default binding of the prefix key is send-prefix) hands the host's tmux
    # `prefix d`: its client detaches, the login ends and the window closes. The how-to
    # says the one that works.
    assert "`prefix prefix d`" in FLEET_DOC.read_text(encoding="utf-8")
    target = srv.agent_pane()
    sshd.set_command(sshd.login_command(srv), pty=True)
    home = srv2.shell_pane()
    me = PtyClient(srv2, "s")
    try:
        res = srv2.tma("host", "add", "box", "tma-test", "--via", sshd.via())
        assert res.returncode == 0, res.stderr
        tag = f"box:{target}"

        def jumped() -> None:
            res = srv2.tma("jump", tag, "--client", me.name)
            assert res.returncode == 0, res.stderr
            srv.wait_for(lambda: target in _clients_on(srv).values(), timeout=20)

        jumped()
        me.type(PREFIX + PREFIX + b"d")
        srv.wait_for(lambda: target not in _clients_on(srv).values(), timeout=10)
        srv2.wait_for(lambda: not _tagged(srv2, tag), timeout=10)  # the login ended
        assert me.name in client_names(srv2) and me.pane() == home  # still here

        jumped()
        me.type(PREFIX + b"d")  # what the how-to used to say
        srv2.wait_for(lambda: me.name not in client_names(srv2), timeout=10)
        assert target in _clients_on(srv).values()  # the login goes on, unseen
    finally:
        me.close()

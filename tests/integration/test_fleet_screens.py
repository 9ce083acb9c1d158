"""The picker and `tma watch` with a fleet host, in real panes, over a REAL OpenSSH server.

This machine is `srv` (a private tmux server with a real attached PTY client, its own
HOME and config) with a real `tma daemon` holding the host's long-lived link; the host is
`srv2` (another tmux server, another HOME) with a fake Claude drawing a captured
permission prompt and recording every byte typed into it, behind sshd's forced command
`tma serve --stdio`. The screens are driven with send-keys and read with capture-pane.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from tests.helpers import daemon as daemon_helper
from tests.helpers.keyrecorder import KeyRecorder
from tests.helpers.screens import row_of, screen_pane, wait_screen
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures"
KEEPALIVE_S = 2  # offline after 3 of them without a frame
CONFIG = f"[fold]\nfreshness_secs = 3600\n[fleet]\nkeepalive_secs = {KEEPALIVE_S}\n"


@pytest.fixture
def daemon(srv, tmp_path):
    with daemon_helper.watched(srv, tmp_path) as d:
        yield d


def keys(srv, pane: str, *names: str) -> None:
    srv.tmux("send-keys", "-t", pane, *names)


def alive(srv, pane: str) -> bool:
    return pane in srv.tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def blocked_claude(host) -> KeyRecorder:
    cap = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text("utf-8"))
    idle = fixture.parse((CAPTURES / "claude-2.1.332_idle.txt").read_text("utf-8"))
    rec = KeyRecorder.start(host, "claude", cap, after=idle, redraw_ms=100)
    host.ls(manifests=False)  # a cycle on the host stamps it blocked
    assert host.display(rec.pane, "#{@agent_state}") == "blocked"
    return rec


def forced(sshd, host, *serve_flags: str) -> None:
    """The link (no remote command) gets `tma serve --stdio`; a login with a command
    (the jump's `ssh -t ... tma attach --pane %N`) runs that tma on the host."""
    serve = sshd.serve_command(host, "--interval", "500", *serve_flags)
    login = sshd.login_command(host)
    sshd.set_command(f'if [ -z "$SSH_ORIGINAL_COMMAND" ]; then {serve}; else {login}; fi',
                     pty=True)


def add_host(srv, sshd, *extra: str) -> None:
    res = srv.tma("host", "add", "box", "tma-test", "--via", sshd.via(), *extra)
    assert res.returncode == 0, res.stderr


def online(srv, daemon, timeout: float = 20) -> dict:
    env = {"XDG_RUNTIME_DIR": str(daemon.runtime)}

    def doc():
        res = srv.tma("ls", "--hosts", "--json", env=env)
        d = json.loads(res.stdout) if res.returncode == 0 else {"hosts": []}
        box = [h for h in d.get("hosts", []) if h["name"] == "box"]
        return d if box and box[0]["state"] == "online" and box[0].get("source") else None

    return srv.wait_for(doc, timeout=timeout, interval=0.25)


def ui(srv, daemon, *args: str, width: int, height: int, session: str = "ui") -> str:
    return screen_pane(srv, *args, session=session, width=width, height=height,
                       env=f"XDG_RUNTIME_DIR={shlex.quote(str(daemon.runtime))}")


def test_host_rows_appear_with_their_host_and_a_cut_link_leaves_them_stale(
        srv, srv2, sshd, daemon):
    srv.config.write_text(CONFIG)
    local = srv.agent_pane()  # this machine's own agent: listed first
    srv.draw(local, "FAKE-IDLE ready\n")
    rec = blocked_claude(srv2)
    forced(sshd, srv2)
    add_host(srv, sshd)
    # a second host whose transport never answers: one line, never a silent gap
    res = srv.tma("host", "add", "gone", "nowhere", "--via", "false")
    assert res.returncode == 0, res.stderr

    # no daemon yet: no SSH from the screen, one line saying what shows the hosts
    picker = ui(srv, daemon, width=80, height=24)
    s = wait_screen(srv, picker, lambda s: "tma daemon" in s and " fake " in s)
    assert "2 hosts: their rows need `tma daemon`" in s and "box" not in s.replace("tma daemon", "")
    keys(srv, picker, "q")
    srv.wait_for(lambda: not alive(srv, picker))

    daemon.start()
    online(srv, daemon)
    picker = ui(srv, daemon, width=80, height=24)
    watch = ui(srv, daemon, "watch", width=120, height=30, session="w")
    name = f"box:{rec.pane}"
    for pane in (picker, watch):
        s = wait_screen(srv, pane, lambda s: "box" in row_of(s, "claude")
                        and "blocked" in row_of(s, "claude"), timeout=15)
        lines = s.splitlines()
        assert lines.index(row_of(s, " fake ")) < lines.index(row_of(s, "claude")), s
        # the host column: the agent names line up, local row or host row
        assert row_of(s, " fake ").index("fake") == row_of(s, "claude").index("claude"), s
        wait_screen(srv, pane, lambda s: row_of(s, "gone").strip().startswith(
            ("gone  offline", "gone  connecting")))
        assert "tma daemon" not in s
    # the host's row selected: its preview says what the row knows (no capture)
    keys(srv, picker, "Down")
    s = wait_screen(srv, picker, lambda s: row_of(s, "claude").startswith(">"))
    wait_screen(srv, picker, lambda s: f"── {name}" in s and "on host box" in s)

    sshd.kill()  # the link is cut: the host goes offline, its rows stay, stale
    for pane in (picker, watch):
        s = wait_screen(srv, pane, lambda s: "stale: offline" in row_of(s, "claude"),
                        timeout=30)
        assert "box" in row_of(s, "claude")
    # the selected row is stale: Tab says so in one line and the picker stays
    keys(srv, picker, "Tab")
    wait_screen(srv, picker, lambda s: "host box is offline (stale: offline" in s)
    assert alive(srv, picker)
    keys(srv, picker, "q")
    keys(srv, watch, "q")
    srv.wait_for(lambda: not alive(srv, picker) and not alive(srv, watch))


def test_enter_on_a_host_row_opens_the_remote_jump_window(srv, srv2, sshd, daemon, attach):
    srv.config.write_text(CONFIG)
    home = srv.shell_pane()
    rec = blocked_claude(srv2)
    forced(sshd, srv2)
    add_host(srv, sshd)
    daemon.start()
    online(srv, daemon)
    c = attach("s")
    assert c.pane() == home
    picker = ui(srv, daemon, "--client", c.name, width=100, height=30)
    wait_screen(srv, picker, lambda s: row_of(s, "claude").startswith(">")
                and "box" in row_of(s, "claude"), timeout=15)
    keys(srv, picker, "Enter")
    tag = f"box:{rec.pane}"

    def tagged() -> list[str]:
        out = srv.tmux("list-panes", "-a", "-F", "#{pane_id}\t#{@tma_remote}")
        return [p for p, t in (ln.split("\t", 1) for ln in out.splitlines()) if t == tag]

    window = srv.wait_for(tagged, timeout=15)[0]
    srv.wait_for(lambda: c.pane() == window, timeout=10)
    srv.wait_for(lambda: not alive(srv, picker))  # the picker closes once it took you there
    # the window's ssh logged in and attached a client to the host's pane
    srv2.wait_for(lambda: rec.pane in srv2.tmux(
        "list-clients", "-F", "#{pane_id}").split(), timeout=20)


def test_tab_on_a_host_row_fires_through_the_link_exactly_once(srv, srv2, sshd, daemon,
                                                                attach):
    srv.config.write_text(CONFIG)
    srv.shell_pane()
    rec = blocked_claude(srv2)
    forced(sshd, srv2, "--scope", "read,act:answer")
    add_host(srv, sshd, "--act", "answer")
    daemon.start()
    online(srv, daemon)
    c = attach("s", cols=120, rows=40)
    picker = ui(srv, daemon, "--client", c.name, width=100, height=30)
    wait_screen(srv, picker, lambda s: row_of(s, "claude").startswith(">")
                and "box" in row_of(s, "claude"), timeout=15)
    keys(srv, picker, "Tab")  # the picker closes; the host pane's menu opens on the client
    srv.wait_for(lambda: not alive(srv, picker))
    srv.wait_for(lambda: "Approve" in c.output() and f"box:{rec.pane}" in c.output(),
                 timeout=15)
    assert "Interrupt" not in c.output()  # hosts.toml grants answer, not steer
    # what the host would refuse is not offered: Claude at a permission prompt has no
    # question to reject (it would come back `gated`, as tmux's raw `returned 4`)
    assert "Reject question" not in c.output()
    c.clear_output()
    c.type(b"1")
    sent = rec.settle(expect=1, timeout=20)
    assert sent, "the approve never reached the host's agent"
    # the entry says what it did on the message line (run-shell drops its stderr)
    srv.wait_for(lambda: f"approve sent to box:{rec.pane}" in c.output(), timeout=15)
    time.sleep(1.5)
    assert rec.received() == sent  # exactly once
    state = srv.env.get("XDG_STATE_HOME") or str(Path(srv.env["HOME"]) / ".local" / "state")
    outbox = Path(state) / "tma" / "fleet" / "dispatch.jsonl"  # the test's own HOME's
    lines = [json.loads(x) for x in outbox.read_text().splitlines()]
    assert [x["status"] for x in lines] == ["pending", "done"]
    assert lines[0]["episode_ms"] > 0  # the episode the picker showed: the binder

    # answered, the pane is idle: nothing answer grants fires there, and the picker
    # says so in words and stays, rather than close for a menu of refusals
    picker = ui(srv, daemon, "--client", c.name, width=100, height=30, session="again")
    wait_screen(srv, picker, lambda s: row_of(s, "claude").startswith(">")
                and "done" in row_of(s, "claude"), timeout=20)
    keys(srv, picker, "Tab")
    wait_screen(srv, picker, lambda s: f"no action from here fires on box:{rec.pane} now: "
                                       "it is idle" in s)
    assert alive(srv, picker)


def test_a_read_only_host_says_so_in_one_line_and_the_picker_stays(srv, srv2, sshd,
                                                                    daemon, attach):
    srv.config.write_text(CONFIG)
    srv.shell_pane()
    blocked_claude(srv2)
    forced(sshd, srv2)
    add_host(srv, sshd)  # no --act: nothing to fire there from here
    daemon.start()
    online(srv, daemon)
    c = attach("s")
    watch = ui(srv, daemon, "--client", c.name, "watch", width=100, height=30)
    wait_screen(srv, watch, lambda s: row_of(s, "claude").startswith(">"), timeout=15)
    keys(srv, watch, "a")
    s = wait_screen(srv, watch, lambda s: "read-only here" in s)
    assert alive(srv, watch) and "Traceback" not in s
    picker = ui(srv, daemon, "--client", c.name, width=100, height=30, session="p")
    wait_screen(srv, picker, lambda s: row_of(s, "claude").startswith(">"), timeout=15)
    keys(srv, picker, "Tab")
    wait_screen(srv, picker, lambda s: "read-only here" in s)
    assert alive(srv, picker)


def test_ctrl_t_on_a_host_row_shows_the_conversation_its_host_reads(srv, srv2, sshd, daemon):
    """The host reads its own pane's transcript (a recorded Claude session its hook named)
    and answers the picker's `window` and `event` requests over a link of their own."""
    srv.config.write_text(CONFIG)
    srv.shell_pane()  # no local agent: the host's row is the only one
    rec = blocked_claude(srv2)
    talk = srv2.root / "talk.jsonl"
    talk.write_bytes(next((Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
                           / "claude-2.1.332" / "tool-approved").glob("*.jsonl")).read_bytes())
    srv2.tmux("set-option", "-p", "-t", rec.pane, "@agent_transcript", str(talk))
    forced(sshd, srv2)
    add_host(srv, sshd)
    daemon.start()
    online(srv, daemon)
    picker = ui(srv, daemon, width=100, height=30)
    name = f"box:{rec.pane}"
    wait_screen(srv, picker, lambda s: f"── {name}" in s and "on host box" in s, timeout=15)
    keys(srv, picker, "C-t")
    s = wait_screen(srv, picker, lambda s: "TOOL RESULT SEEN: the command ran. All done." in s,
                    timeout=20)
    assert f"── {name} " in s and " · conversation" in s and "RUNTOOL please write the file" in s
    assert "▸ Bash  echo hi > mockllm-hi.txt  ✓" in s and "Traceback" not in s
    assert "first words" not in s  # every message's whole text came (fewer than 8)
    keys(srv, picker, "C-t")  # back to what the row says of the host's screen
    s = wait_screen(srv, picker, lambda s: "on host box" in s and "TOOL RESULT" not in s)
    assert "· conversation" not in s
    keys(srv, picker, "q")
    srv.wait_for(lambda: not alive(srv, picker))

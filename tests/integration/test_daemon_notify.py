"""The daemon's notifications on private servers: blocked, done, mute, context_high,
exactly once across a `kill -9` and `--ensure`, and the desktop notifier's jump.

The agents are hookless fakes (a process named `claude`) drawing real captured
Claude screens; the daemon runs for real (tests/integration/test_daemon.py's
fixture) with `sweep_secs = 1`, so it re-reads every pane each second and would
re-ring anything the marker did not hold.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.daemon import _claude, _draw, _until, watched
from tests.helpers.notify_log import _lines
from tma.runtime import daemon_files


@pytest.fixture
def daemon(srv, tmp_path):
    with watched(srv, tmp_path) as d:
        d.env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no desktop unless a test asks for one
        yield d


def _config(srv, log: Path, extra: str = "") -> None:
    srv.config.write_text(f'[daemon]\nsweep_secs = 1\n[notify]\nlog = "{log}"\n{extra}')


def _wait_lines(srv, log: Path, n: int, timeout: float = 8.0) -> list[dict]:
    srv.wait_for(lambda: len(_lines(log)) >= n, timeout=timeout)
    return _lines(log)


def _sweeps_past(daemon, extra: int) -> None:
    """Let the daemon run `extra` more full reads (each one a chance to re-ring)."""
    start = daemon.status()["sweeps"]
    daemon.srv.wait_for(lambda: (daemon.status() or {}).get("sweeps", 0) >= start + extra,
                        timeout=extra * 3 + 5)


def _tma(srv, daemon, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv.name, *args],
                          env=daemon.env, capture_output=True, text=True, timeout=20)


@pytest.mark.tmux_contract
def test_blocked_rings_once_and_a_kill_9_restart_rerings_nothing(srv, daemon, tmp_path):
    log = tmp_path / "notify.jsonl"
    _config(srv, log)
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    t0 = time.monotonic()
    _draw(srv, pane, "blocked")
    got = _wait_lines(srv, log, 1)
    print(f"\nMEASURED blocked-to-notification {time.monotonic() - t0:.3f}s")
    assert [(x["state"], x["pane"], x["agent"]) for x in got] == [("blocked", pane, "claude")]
    assert srv.option(pane, "@agent_notified_at").isdigit()
    _sweeps_past(daemon, 3)
    assert len(_lines(log)) == 1  # three more full reads of a blocked pane: no re-ring

    old = daemon.status()["pid"]
    os.kill(old, signal.SIGKILL)
    daemon.proc.wait(timeout=5)
    # while no daemon runs, a second agent blocks: the new daemon must ring it (so it
    # does dispatch at its cold start), and only it
    other, _ = _claude(srv)
    _draw(srv, other, "blocked")
    res = subprocess.run(daemon.argv("--ensure"), env=daemon.env, capture_output=True,
                         text=True, timeout=20)
    assert res.returncode == 0, res.stderr
    assert daemon.status()["pid"] != old
    got = _wait_lines(srv, log, 2)
    _sweeps_past(daemon, 3)
    got = _lines(log)
    assert [(x["state"], x["pane"]) for x in got] == [("blocked", pane), ("blocked", other)]


def test_a_command_sink_gets_the_payload_and_is_reaped(srv, daemon, tmp_path):
    out = tmp_path / "cmd.out"
    log = tmp_path / "notify.jsonl"
    _config(srv, log, f'command = "cat >> {out}; echo \\"$TMA_STATE $TMA_PANE\\" >> {out}"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "blocked")
    daemon.start()
    srv.wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 2, timeout=10)
    lines = out.read_text().splitlines()
    doc = json.loads(lines[0])
    assert (doc["state"], doc["pane"], doc["agent"]) == ("blocked", pane, "claude")
    assert lines[1] == f"blocked {pane}"
    _sweeps_past(daemon, 2)
    assert len(out.read_text().splitlines()) == 2
    status = daemon.status()
    assert status["notify"]["fired"]["blocked"] == 1
    assert status["notify"]["in_flight"] == 0  # reaped: no zombie left behind
    kids = Path(f"/proc/{status['pid']}/task/{status['pid']}/children").read_text().split()
    assert all(Path(f"/proc/{k}/stat").read_text().split(") ")[-1][:1] != "Z" for k in kids)


def test_done_rings_when_opted_in_and_not_otherwise(srv, daemon, tmp_path):
    log = tmp_path / "notify.jsonl"
    _config(srv, log, 'on = ["blocked", "done"]\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "working")
    _until(srv, pane, "@agent_state", "working")
    time.sleep(0.3)
    _draw(srv, pane, "idle")
    _until(srv, pane, "@agent_attention", "1", timeout=8)
    got = _wait_lines(srv, log, 1)
    assert [(x["state"], x["pane"]) for x in got] == [("done", pane)]
    _sweeps_past(daemon, 2)
    assert len(_lines(log)) == 1

    # the default (`on` unset = blocked only) leaves a finished agent silent
    log.unlink()
    _config(srv, log)
    assert _tma(srv, daemon, "reload").returncode == 0
    _draw(srv, pane, "working")
    _until(srv, pane, "@agent_state", "working")
    time.sleep(0.3)
    _draw(srv, pane, "idle")
    _until(srv, pane, "@agent_state", "idle", timeout=8)
    _sweeps_past(daemon, 2)
    assert _lines(log) == []


def test_a_muted_pane_rings_nothing_and_its_episode_is_consumed(srv, daemon, tmp_path):
    log = tmp_path / "notify.jsonl"
    _config(srv, log)
    pane, _pid = _claude(srv)
    loud, _ = _claude(srv)
    _draw(srv, pane, "idle")
    _draw(srv, loud, "idle")
    res = _tma(srv, daemon, "mute", "--pane", pane, "--for", "10m")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"tma: muted for 10m: {pane}"
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "blocked")
    _until(srv, pane, "@agent_notified_at", lambda v: v.isdigit(), timeout=8)
    _draw(srv, loud, "blocked")  # the control: an unmuted pane rings
    got = _wait_lines(srv, log, 1)
    assert [x["pane"] for x in got] == [loud]
    res = _tma(srv, daemon, "mute", "--pane", pane, "--clear")
    assert res.returncode == 0 and res.stdout.strip() == "tma: unmuted: " + pane
    assert srv.option(pane, "@agent_mute_until") == ""
    _sweeps_past(daemon, 2)
    assert [x["pane"] for x in _lines(log)] == [loud]  # consumed, not queued
    assert daemon.status()["notify"]["fired"]["muted"] >= 1


def test_context_high_fires_once_and_rearms_below_the_band(srv, daemon, tmp_path):
    log = tmp_path / "notify.jsonl"
    _config(srv, log, "[notify.context_high]\nthreshold = 75\n")
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)

    def reading(pct: int | None, at: bool = True) -> None:
        now = str(time.time_ns() // 1_000_000)
        if pct is None:
            srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_context_pct")
        else:
            srv.tmux("set-option", "-p", "-t", pane, "@agent_context_pct", str(pct))
        if at:
            srv.tmux("set-option", "-p", "-t", pane, "@agent_context_at", now)
        else:
            srv.tmux("set-option", "-p", "-u", "-t", pane, "@agent_context_at")

    reading(90, at=False)  # a torn pair: deferred
    _sweeps_past(daemon, 2)
    assert _lines(log) == []
    reading(80)
    got = _wait_lines(srv, log, 1)
    assert [(x["state"], x["context_pct"]) for x in got] == [("context_high", 80)]
    assert srv.option(pane, "@agent_context_notified_at").isdigit()
    reading(70)  # under the threshold, inside the band: stays fired
    _sweeps_past(daemon, 2)
    reading(None)  # a null reading holds
    _sweeps_past(daemon, 2)
    assert len(_lines(log)) == 1 and srv.option(pane, "@agent_context_notified_at")
    reading(60)  # under threshold - 10: re-armed
    _until(srv, pane, "@agent_context_notified_at", "", timeout=6)
    reading(76)
    got = _wait_lines(srv, log, 2)
    assert [x["context_pct"] for x in got] == [80, 76]


FAKE_NOTIFY_SEND = """#!/bin/sh
if [ "$1" = --help ]; then echo "  -A, --action=[NAME=]Text  -w, --wait"; exit 0; fi
{ printf 'ARGV'; for a in "$@"; do printf ' [%s]' "$a"; done; echo
  echo "ENV TMA_PANE=$TMA_PANE TMA_STATE=$TMA_STATE DBUS=$DBUS_SESSION_BUS_ADDRESS"; } >> "$FAKE_NS_LOG"
case "$*" in *--wait*) sleep 0.3; echo jump ;; esac
"""


def test_the_desktop_notifier_rings_once_and_its_action_jumps(srv, daemon, tmp_path, attach):
    bindir = tmp_path / "nsbin"
    bindir.mkdir()
    ns = bindir / "notify-send"
    ns.write_text(FAKE_NOTIFY_SEND)
    ns.chmod(0o755)
    record = tmp_path / "ns.log"
    daemon.env.update(PATH=f"{bindir}:{daemon.env['PATH']}", FAKE_NS_LOG=str(record),
                      DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/bus")
    srv.config.write_text("[daemon]\nsweep_secs = 1\n")
    home = srv.new_pane("sh")
    pane, _pid = _claude(srv, session="agents")
    _draw(srv, pane, "idle")
    client = attach("s")
    srv.wait_for(lambda: srv.tmux("list-clients", "-F", "#{pane_id}").strip() == home)
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "blocked")
    srv.wait_for(lambda: record.exists() and "ARGV" in record.read_text(), timeout=8)
    # the action was chosen ("jump"): the client now shows the blocked pane
    srv.wait_for(lambda: pane in srv.tmux("list-clients", "-F", "#{pane_id}"), timeout=8)
    _sweeps_past(daemon, 2)
    text = record.read_text().splitlines()
    argv = [x for x in text if x.startswith("ARGV")]
    assert len(argv) == 1, text
    # a permission prompt claude's actions answer: Approve / Deny, and the body jumps
    assert "[--wait]" in argv[0] and "[--action=default=Jump]" in argv[0]
    assert "[--action=approve=Approve] [--action=deny=Deny]" in argv[0]
    assert "[tma: claude blocked]" in argv[0]
    # the body's first line is what the dialog asks (read off the screen: no hook), as
    # markup, escaped; the pane's title follows it
    assert argv[0].endswith("[Bash: echo hi &gt; mockllm-hi.txt"), text
    [env_line] = [x for x in text if x.startswith("ENV ")]
    assert f"TMA_PANE={pane} TMA_STATE=blocked" in env_line
    assert client is not None
    # doctor, run from a shell with no session bus, reports what the daemon reaches
    env = {k: v for k, v in daemon.env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    res = subprocess.run([sys.executable, "-m", "tma", "--socket-name", srv.name, "doctor",
                          "--json"], env=env, capture_output=True, text=True, timeout=30)
    doc = json.loads(res.stdout)
    assert doc["notify"]["dispatcher"] == "daemon"
    rings = [{"sink": "message", "what": ""}, {"sink": "desktop", "what": "notify-send"}]
    assert doc["notify"]["sink"]["blocked"] == {"kind": "desktop", "what": "notify-send",
                                                "rings": rings}
    assert doc["notify"]["sink"]["done"]["kind"] == "off"
    assert daemon.status()["notify"]["sink"] == {
        "blocked": {"kind": "desktop", "what": "notify-send", "rings": rings}}


def test_a_slow_command_is_reaped_between_reads(srv, daemon, tmp_path):
    """No read follows the fire (a 60 s sweep, a quiet pane): the part's own deadline
    reaps the child and clears nothing it should not."""
    out = tmp_path / "cmd.out"
    srv.config.write_text(f'[daemon]\nsweep_secs = 60\n[notify]\n'
                          f'command = "cat > {out}; sleep 0.4; exit 5"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "blocked")
    daemon.start()
    srv.wait_for(lambda: out.exists() and out.read_text(), timeout=10)
    assert daemon.status()["notify"]["in_flight"] == 1
    srv.wait_for(lambda: daemon.status()["notify"]["in_flight"] == 0, timeout=5)
    assert daemon.status()["sweeps"] == 1
    sock = srv.tmux("display-message", "-p", "#{socket_path}").strip()
    key = daemon_files.key(sock)  # the server's record: its daemon's files are keyed so
    record = json.loads((daemon.runtime / "tma" / f"{key}.notify-error").read_text())
    assert record["reason"] == "exit status 5" and "sleep 0.4" in record["command"]


def test_a_quiet_edge_rings_within_5s_with_no_sweep(srv, daemon, tmp_path):
    """The default sweep (45 s): only the startup read and the quiet edge can ring."""
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[notify]\nlog = "{log}"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    t0 = time.monotonic()
    _draw(srv, pane, "blocked")
    _wait_lines(srv, log, 1, timeout=5)
    dt = time.monotonic() - t0
    print(f"\nMEASURED quiet-edge-to-notification {dt:.3f}s")
    assert dt < 5 and daemon.status()["sweeps"] == 1


def test_a_reload_that_turns_done_on_rings_the_standing_done_episode(srv, daemon, tmp_path):
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[daemon]\nsweep_secs = 600\n[notify]\nlog = "{log}"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "working")
    daemon.start()
    _until(srv, pane, "@agent_state", "working", timeout=10)
    time.sleep(0.3)
    _draw(srv, pane, "idle")
    _until(srv, pane, "@agent_attention", "1", timeout=8)
    time.sleep(1.0)
    assert _lines(log) == []  # done is not on
    # done rings are held for [notify] coalesce_done_ms (3 s by default) to ring several
    # as one: this test is about the reload, so it rings each at once (the wait was the
    # same 3 s as the window, and lost the race on a loaded machine)
    srv.config.write_text(f'[daemon]\nsweep_secs = 600\n[notify]\nlog = "{log}"\n'
                          'on = ["blocked", "done"]\ncoalesce_done_ms = 0\n')
    assert _tma(srv, daemon, "reload").returncode == 0
    got = _wait_lines(srv, log, 1, timeout=3)  # no read follows: the reload rang it
    assert [(x["state"], x["pane"]) for x in got] == [("done", pane)]
    assert daemon.status()["sweeps"] == 1


@pytest.mark.tmux_contract
def test_a_hook_stamped_blocked_rings_without_waiting_for_the_sweep(srv, daemon, tmp_path):
    """A hook agent stamps itself (here: the same guarded write `tma event` makes, via
    `tma debug stamp`); the daemon's view of the pane is a fresh hook claim, so its
    quiet edge captures nothing, but the notifier must still hear the new stamp."""
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[daemon]\nsweep_secs = 600\n[notify]\nlog = "{log}"\n')
    pane, pid = _claude(srv)
    _draw(srv, pane, "idle")

    def hook(state: str) -> None:
        now = str(time.time_ns() // 1_000_000)
        res = _tma(srv, daemon, "debug", "stamp", pane, "--state", state, "--source", "hook",
                   "--name", "claude", "--pid", str(pid), "--evidence-at", now,
                   "--stamped-at", now, "--episode-reset")
        assert res.returncode == 0, res.stderr

    hook("idle")
    daemon.start()
    time.sleep(1.0)  # past the startup read
    t0 = time.monotonic()
    hook("blocked")
    _draw(srv, pane, "blocked")  # the output: a quiet edge follows
    _wait_lines(srv, log, 1, timeout=5)
    dt = time.monotonic() - t0
    print(f"\nMEASURED hook-blocked-to-notification {dt:.3f}s")
    assert [(x["state"], x["pane"]) for x in _lines(log)] == [("blocked", pane)]
    assert daemon.status()["sweeps"] == 1


def test_the_daemon_and_the_hook_path_together_ring_once(srv, daemon, tmp_path):
    """`from_event` on and a daemon running: five concurrent hook events for one blocked
    run and the daemon's reads (every second) share the one marker."""
    log = tmp_path / "fired.log"
    rec = tmp_path / "rec.sh"
    rec.write_text(f'#!/bin/sh\ncat >/dev/null\necho "$TMA_STATE $TMA_PANE" >> {log}\n')
    rec.chmod(0o755)
    srv.config.write_text(f'[daemon]\nsweep_secs = 1\n[notify]\nfrom_event = true\n'
                          f'command = "{rec}"\n')
    manifests = ["--manifest-dir", str(srv.manifests)]
    plain = daemon.argv
    daemon.argv = lambda *a: plain(*a)[:3] + manifests + plain(*a)[3:]  # type: ignore[method-assign]
    pane = srv.agent_pane()
    daemon.start()
    _sweeps_past(daemon, 1)
    argv = [sys.executable, "-m", "tma", "--socket-name", srv.name, *manifests, "event",
            "--agent", "fake", "--kind", "Ask", "--pane", pane]
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=daemon.env) for _ in range(5)]
    for p in procs:
        out, err = p.communicate(b"{}", timeout=30)
        assert p.returncode == 0 and out == b"", err
    assert srv.option(pane, "@agent_state") == "blocked"
    srv.wait_for(lambda: log.exists(), timeout=5)
    _sweeps_past(daemon, 3)
    assert log.read_text().splitlines() == [f"blocked {pane}"]


def test_a_held_permission_request_reaches_the_daemon_before_its_hold_ends(
        srv, daemon, tmp_path):
    """Claude's PermissionRequest is never handed off (its reply lane holds in the hook
    process); the hook wakes the daemon before it starts holding, so the daemon's
    notifier rings while the hook still holds, with no pane output and no sweep."""
    log = tmp_path / "notify.jsonl"
    srv.config.write_text(f'[daemon]\nsweep_secs = 600\n[notify]\nlog = "{log}"\n')
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    time.sleep(1.0)  # past the startup read and the idle screen's quiet edge
    payload = json.dumps({"session_id": "s1", "tool_name": "Bash",
                          "tool_input": {"command": "ls"}})
    hook = subprocess.Popen(
        [sys.executable, "-m", "tma", "--socket-name", srv.name, "event", "--agent", "claude",
         "--kind", "PermissionRequest", "--pane", pane],
        env=daemon.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        hook.stdin.write(payload)
        hook.stdin.close()
        got = _wait_lines(srv, log, 1, timeout=4)
        assert [(x["state"], x["pane"]) for x in got] == [("blocked", pane)]
        assert hook.poll() is None, "the hook was expected to be holding still"
    finally:
        hook.kill()
        hook.wait(timeout=5)


def test_a_hookless_blocked_ring_says_what_the_dialog_asks(srv, daemon, tmp_path):
    """No hook parked the call: the daemon's note takes the tool and summary from the
    card's screen lane (the manifest's [dialog] rules over the real captured dialog), so
    the log, the command's payload and the message line carry them."""
    log = tmp_path / "notify.jsonl"
    _config(srv, log)
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "blocked")
    [got] = _wait_lines(srv, log, 1)
    assert (got["state"], got["tool"], got["summary"]) == (
        "blocked", "Bash", "Bash: echo hi > mockllm-hi.txt")
    assert srv.option(pane, "@agent_pending_tool") == ""  # read off the screen, not stamped


def _draw_prompt_b(srv, pane: str, clock: str = "") -> None:
    """Claude's permission prompt for another command (`rm -rf build/cache`): the next
    tool call's, drawn with no working screen between; `clock` replaces the screen's
    blank first row (a ticking clock far from the dialog)."""
    from tests.helpers.daemon import _body

    body = _body("blocked").replace("echo hi > mockllm-hi.txt", "rm -rf build/cache")
    if clock:
        body = clock + "\n" + body.split("\n", 1)[1]
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))
    marker = clock or "rm -rf build/cache"
    srv.wait_for(lambda: marker in srv.tmux("capture-pane", "-p", "-t", pane), interval=0.01)


def test_the_next_prompt_drawn_at_once_rings_once_as_its_own_episode(srv, daemon, tmp_path):
    """Prompt A rang; it is answered by hand and the agent draws prompt B at once, with
    no working screen any read could see: B is a new episode (its since moved) and rings
    once; B repainted with a clock ticking above it rings nothing more (issue 28)."""
    log = tmp_path / "notify.jsonl"
    _config(srv, log)
    pane, _pid = _claude(srv)
    _draw(srv, pane, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "blocked")
    [a] = _wait_lines(srv, log, 1)
    assert a["summary"] == "Bash: echo hi > mockllm-hi.txt"
    since_a = int(srv.option(pane, "@agent_since"))
    _draw_prompt_b(srv, pane)
    got = _wait_lines(srv, log, 2)
    assert [(x["state"], x["summary"]) for x in got] == [
        ("blocked", "Bash: echo hi > mockllm-hi.txt"), ("blocked", "Bash: rm -rf build/cache")]
    assert int(srv.option(pane, "@agent_since")) > since_a
    since_b = srv.option(pane, "@agent_since")
    for tick in ("12:00:01", "12:00:02"):
        _draw_prompt_b(srv, pane, clock=tick)
        _sweeps_past(daemon, 2)
    assert len(_lines(log)) == 2  # one ring per prompt, however often it is read
    assert srv.option(pane, "@agent_since") == since_b


def test_the_daemons_ring_carries_the_last_sentence_only_where_opted_in(srv, daemon, tmp_path):
    """`[notify] last_sentence = true`: the daemon reads the blocked pane's transcript
    (the file its hook named, @agent_transcript: a recorded Claude session) as it rings;
    the log line carries the last sentence of the agent's newest answer. Without the
    opt-in the same ring carries null."""
    transcript = tmp_path / "session.jsonl"
    shutil.copyfile(next(Path(__file__).resolve().parents[1].joinpath(
        "fixtures/transcripts/claude-2.1.332/plain").glob("*.jsonl")), transcript)
    log = tmp_path / "notify.jsonl"
    _config(srv, log, "last_sentence = true\n")
    pane, _pid = _claude(srv)
    other, _ = _claude(srv)
    for p in (pane, other):
        srv.tmux("set-option", "-p", "-t", p, "@agent_transcript", str(transcript))
        _draw(srv, p, "idle")
    daemon.start()
    _until(srv, pane, "@agent_state", "idle", timeout=10)
    _draw(srv, pane, "blocked")
    got = _wait_lines(srv, log, 1)
    assert [(x["pane"], x["last_sentence"]) for x in got] == [
        (pane, "This is a short scripted reply.")]
    reloads = daemon.status()["reloads"]
    _config(srv, log)  # the opt-in gone (the daemon reloads a changed config)
    # its watch looks every 2 s and waits for the file to hold still: wait for the
    # reload itself, not for sweeps that may come before it
    srv.wait_for(lambda: (daemon.status() or {}).get("reloads", 0) > reloads, timeout=10)
    _draw(srv, other, "blocked")
    got = _wait_lines(srv, log, 2)
    assert [(x["pane"], x["last_sentence"]) for x in got[1:]] == [(other, None)]

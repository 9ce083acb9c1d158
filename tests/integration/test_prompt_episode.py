"""A blocked episode is one prompt: a prompt answered by hand and followed at once by
another starts a new episode, however fast, and an answer bound to the first one (a
desktop notification's Approve: `tma act approve --pane P --expect-episode MS`) types
nothing into the second (issue 28). A benign redraw of the same prompt (a resize, a
clock or spinner row elsewhere) is not a new prompt.

The agent is a real process named `claude` (tests/helpers/keyrecorder.py) drawing a
captured Claude Code permission prompt, recording every byte it receives, and drawing
the next prompt 50 ms after the first key it gets, as an agent does when one tool call's
approval is followed by the next call's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.keyrecorder import KeyRecorder
from tma.core import fixture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
COMMAND_A = "echo hi > mockllm-hi.txt"
COMMAND_B = "rm -rf build/cache"


def _cap(name: str) -> fixture.Capture:
    return fixture.parse((CAPTURES / f"claude-2.1.332_{name}.txt").read_text(encoding="utf-8"))


def _prompt_b() -> fixture.Capture:
    """The same dialog asking about another command (the next tool call's prompt)."""
    a = _cap("blocked")
    assert a.body.count(COMMAND_A) == 2  # the transcript's tool row and the dialog's
    return fixture.Capture(a.headers, a.body.replace(COMMAND_A, COMMAND_B))


def _act(srv, pane: str, *extra: str):
    res = srv.tma("act", "approve", "--pane", pane, "--json", *extra, manifests=False)
    return res, json.loads(res.stdout) if res.stdout.strip() else None


def _screen(srv, pane: str) -> str:
    return srv.tmux("capture-pane", "-p", "-t", pane)


def _long_freshness(srv) -> None:
    """Stamps stay fresh for a minute: no surface re-reads the pane on its own, so only
    the readers a test runs look at it (act's own cycle consumes the stamp as it is)."""
    srv.config.write_text("[fold]\nfreshness_secs = 60\n")


def _answer_a_by_hand(srv, rec) -> None:
    srv.tmux("send-keys", "-t", rec.pane, "1")  # the person, at the keyboard
    srv.wait_for(lambda: COMMAND_B in _screen(srv, rec.pane), interval=0.01)


def test_a_stale_approve_types_nothing_into_the_next_prompt_no_reader_saw(srv):
    """Prompt B is on screen and no cycle has read it yet: the stamp still names A's
    episode, so only the broker's fresh look under the lock can tell B from A."""
    _long_freshness(srv)
    rec = KeyRecorder.start(srv, "claude", _cap("blocked"), after=_prompt_b(), redraw_ms=50)
    row = srv.row(rec.pane, manifests=False)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    episode_a = str(row["episode_ms"])
    _answer_a_by_hand(srv, rec)
    res, doc = _act(srv, rec.pane, "--expect-episode", episode_a)
    assert (res.returncode, doc["outcome"], doc["reason"]) == (4, "refused", "episode-changed"), \
        res.stderr
    assert "nothing" in res.stderr
    assert rec.settle(1) == b"1"  # only the hand's key: B got nothing


def test_a_stale_approve_is_refused_once_a_reader_saw_the_next_prompt(srv):
    """A cycle read B: B is its own episode (a new since), so the binder refuses A's
    answer on the stamp alone, and B's own episode still takes its answer."""
    rec = KeyRecorder.start(srv, "claude", _cap("blocked"), after=_prompt_b(), redraw_ms=50)
    row = srv.row(rec.pane, manifests=False)
    episode_a = row["episode_ms"]
    _answer_a_by_hand(srv, rec)
    srv.next_second()  # B's output lands in a later second than A's stamp: ls re-reads
    row = srv.row(rec.pane, manifests=False)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert row["episode_ms"] > episode_a, "prompt B kept prompt A's episode"
    assert row["attention"]  # a new prompt is news: raised again
    res, doc = _act(srv, rec.pane, "--expect-episode", str(episode_a))
    assert (res.returncode, doc["reason"]) == (4, "episode-changed"), res.stderr
    assert rec.settle(1) == b"1"
    res, doc = _act(srv, rec.pane, "--expect-episode", str(row["episode_ms"]))
    assert (res.returncode, doc["outcome"]) == (0, "sent"), res.stderr
    assert rec.settle(2) == b"11"


def _redraw(srv, pane: str, cap: fixture.Capture, extra: str = "") -> None:
    """Draw a capture's visible screen into a `sleep` pane (its tty), `extra` on top."""
    height = cap.height or 30
    body = "\n".join(cap.body.rstrip("\n").split("\n")[-height:])
    if extra:
        body = extra + "\n" + body.split("\n", 1)[1]
    tty = srv.display(pane, "#{pane_tty}")
    with open(tty, "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))
    last = [ln for ln in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", body).splitlines()
            if ln.strip()][-1].strip()[:20]
    srv.wait_for(lambda: last in _screen(srv, pane), interval=0.01)


def test_a_redraw_of_the_same_prompt_keeps_its_episode(srv):
    """The same prompt redrawn at another width (the pane resized: the agent repaints
    what it asks at 60 columns, the option rows wrapped and cut otherwise) and with a
    clock row above it that ticks: one episode throughout, and the bound answer still
    goes through."""
    fake = srv.fake("claude")
    pane = srv.new_pane(f"exec {fake} 100000", width=200)
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    _redraw(srv, pane, _cap("blocked_shell_w200"))
    row = srv.row(pane, manifests=False)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    since = row["episode_ms"]
    for cap, extra in ((_cap("blocked_shell_w60"), ""), (_cap("blocked_shell_w40"), ""),
                       (_cap("blocked_shell_w60"), "  12:00:01"),
                       (_cap("blocked_shell_w60"), "  12:00:02 ✶")):
        if cap.headers["width"] != srv.display(pane, "#{pane_width}"):
            srv.tmux("resize-window", "-t", pane, "-x", cap.headers["width"])
        _redraw(srv, pane, cap, extra)
        srv.next_second()
        row = srv.row(pane, manifests=False)
        assert row["state"] == "blocked"
        assert row["episode_ms"] == since, f"a redraw ({cap.headers['width']} columns, " \
            f"{extra!r}) started a new episode"
        # read each time, not left as it stood
        assert int(srv.option(pane, "@agent_stamped_at")) > since
    res, doc = _act(srv, pane, "--expect-episode", str(since))
    assert (res.returncode, doc["outcome"]) == (0, "sent"), res.stderr


def _in_process_cycle(srv, monkeypatch):
    """This server's poll cycle run in the test's own process (so the test can stand in
    for the time it waits), over the bundled manifests, with the test's HOME; it reads
    every agent pane whatever its stamp's age (the daemon's first look)."""
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import Server

    return lambda: Cycle(Server(srv.tmux_bin, socket_name=srv.name), Config()).run(
        everything=True)


def test_a_repaint_caught_half_way_is_not_a_new_prompt(srv, monkeypatch):
    """The pane shrinks: tmux rewraps the frame on screen at the new width at once, and
    the agent repaints its prompt a moment later. A cycle that reads in between sees a
    mangled dialog that reads as another command; before it starts a new episode on
    that, it reads the pane again (CONFIRM_MS later: here, once the agent repainted),
    finds the episode's own prompt, and the episode stands."""
    from tma.core import bundled, prompt as prompt_mod
    from tma.core.rules import Screen
    from tma.runtime import cycle as cycle_mod

    fake = srv.fake("claude")
    pane = srv.new_pane(f"exec {fake} 100000", width=200)
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    _redraw(srv, pane, _cap("blocked_shell_w200"))
    run = _in_process_cycle(srv, monkeypatch)
    run()
    since = srv.option(pane, "@agent_since")
    recorded = srv.option(pane, "@tma_prompt")
    assert srv.option(pane, "@agent_state") == "blocked" and recorded.startswith(since + ":")

    srv.tmux("resize-window", "-t", pane, "-x", "100")  # tmux rewraps; nobody repaints yet
    mangled = prompt_mod.of_screen(Screen(_screen(srv, pane), "", 30), "permission",
                                   bundled.load("claude").dialog)
    assert prompt_mod.changed(recorded.split(":", 1)[1], mangled), \
        "the rewrapped frame reads as the same prompt: this test shows nothing"
    waits = []

    def the_agent_repaints(ms: int) -> None:
        waits.append(ms)
        _redraw(srv, pane, _cap("blocked"))  # the same prompt, drawn at 100 columns

    monkeypatch.setattr(cycle_mod, "settle", the_agent_repaints)
    run()
    # it did read the pane again, CONFIRM_MS after its first read (the rules' own time
    # since that read is taken off the wait)
    assert len(waits) == 1 and 0 <= waits[0] <= cycle_mod.CONFIRM_MS
    assert srv.option(pane, "@agent_since") == since, "a half-repainted frame started a " \
        "new episode"
    assert srv.option(pane, "@agent_attention") == "1"  # raised once, at the episode's start
    run()
    assert srv.option(pane, "@agent_since") == since
    assert srv.option(pane, "@tma_prompt") == recorded


def test_the_second_read_is_confirm_ms_after_the_first_not_after_the_rules(srv, monkeypatch):
    """The wait before the second read counts from the first read (the batched capture's
    return): what the rules took to read every capture in between is part of it, so a
    cold refresh that meets a new dialog pays CONFIRM_MS once, not CONFIRM_MS plus the
    rules' time (bench/RESULTS.md, issue 29). A second read that finds the same screen
    is not read by the rules again."""
    from tma.runtime import cycle as cycle_mod

    fake = srv.fake("claude")
    pane = srv.new_pane(f"exec {fake} 100000")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    _redraw(srv, pane, _cap("blocked"))
    clock = iter([50.0, 50.030])  # the capture returns; the rules are done 30 ms later
    monkeypatch.setattr(cycle_mod, "_monotonic", lambda: next(clock))
    waits = []
    monkeypatch.setattr(cycle_mod, "settle", waits.append)
    reads = []
    evaluate = cycle_mod.Cycle._evaluate

    def counted(self, pane, ident, cap):
        reads.append(pane.pane_id)
        return evaluate(self, pane, ident, cap)

    monkeypatch.setattr(cycle_mod.Cycle, "_evaluate", counted)
    _in_process_cycle(srv, monkeypatch)()
    assert waits == [cycle_mod.CONFIRM_MS - 30]
    # the second read found the very same screen: the rules (pure) are not run again on it
    assert reads == [pane]
    assert srv.option(pane, "@agent_state") == "blocked"
    assert srv.option(pane, "@tma_prompt").startswith(srv.option(pane, "@agent_since") + ":")


def test_the_broker_looks_twice_before_refusing_on_another_prompt(srv, monkeypatch):
    """The bound answer arrives while the agent repaints its prompt after a resize (tmux
    rewrapped the frame; the repaint follows): the first look under the lock reads
    another prompt, the second (CONFIRM_MS later: here, once the agent repainted) reads
    the episode's own, and the answer goes through. Without the second look the person's
    click is refused for a prompt that never changed."""
    import time

    from tma.core import codec
    from tma.runtime.act import fire as actions_fire, registry as actions
    from tma.runtime.config import Config
    from tma.runtime.cycle import Cycle
    from tma.tmux import read
    from tma.tmux.adapter import Server

    rec = KeyRecorder.start(srv, "claude", _cap("blocked_shell_w200"))  # 200 columns
    run = _in_process_cycle(srv, monkeypatch)
    run()
    assert srv.option(rec.pane, "@agent_state") == "blocked"
    srv.tmux("resize-window", "-t", rec.pane, "-x", "100")  # tmux rewraps; no repaint yet
    waits = []

    def the_agent_repaints(ms: int) -> None:
        waits.append(ms)
        _redraw(srv, rec.pane, _cap("blocked"))

    monkeypatch.setattr(actions_fire, "settle", the_agent_repaints)
    server = Server(srv.tmux_bin, socket_name=srv.name)
    cfg = Config()
    broker = actions_fire.Broker(server, cfg, Cycle(server, cfg),
                                 lambda: time.time_ns() // 1_000_000)
    pane = next(p for p in read.session_panes(server, rec.pane) if p.pane_id == rec.pane)
    stamp = codec.decode(pane.options)
    assert stamp is not None and stamp.prompt
    res = broker.fire(actions.load().get("approve"), pane, stamp, "claude",
                      actions_fire.Request(expect_episode_ms=stamp.episode_ms))
    assert waits == [actions_fire.CONFIRM_MS]  # it did look again
    assert (res.outcome, res.reason) == ("sent", None), res.message
    assert rec.settle(1) == b"1"

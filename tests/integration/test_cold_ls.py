"""A cold `tma ls --json` pays once for what it reads (issue 29, bench/RESULTS.md): over a
blocked pane no stamp speaks for yet, the run loads the manifest set once (the cycle's
set is the session's), and the dialog's pending tool and summary come from the screens
the cycle captured, with the same answer the screen lane gives when it captures itself
(a warm run, whose cycle consumes the fresh stamp and captures nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from tma.core import fixture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"


def _blocked_claude(srv) -> str:
    cap = fixture.parse((CAPTURES / "claude-2.1.332_blocked.txt").read_text(encoding="utf-8"))
    fake = srv.fake("claude")
    pane = srv.new_pane(f"exec {fake} 100000")
    srv.wait_for(lambda: srv.display(pane, "#{pane_current_command}") == "claude")
    srv.tmux("select-pane", "-t", pane, "-T", "✳ Claude Code")
    body = "\n".join(cap.body.rstrip("\n").split("\n")[-(cap.height or 30):])
    with open(srv.display(pane, "#{pane_tty}"), "w", encoding="utf-8") as fh:
        fh.write("\x1b[2J\x1b[H" + body.replace("\n", "\r\n"))
    srv.wait_for(lambda: "Do you want to proceed?" in srv.tmux("capture-pane", "-p", "-t", pane))
    srv.next_second()  # the stamp lands in a later second than the drawing: ls consumes it
    return pane


def _ls_json_in_process(srv, monkeypatch, capsys) -> tuple[dict, dict]:
    """One `tma ls --json` in this process (bundled manifests): its row for the pane,
    and how many times it loaded the manifest set and spawned a batched capture."""
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMA_CONFIG", "TMA_TMUX_BIN"):
        monkeypatch.setenv(key, srv.env[key])
    for key in ("TMA_SOCKET_PATH", "TMUX", "TMUX_PANE"):
        monkeypatch.delenv(key, raising=False)
    from tma.cli.main import main
    from tma.runtime import manifests
    from tma.tmux import read

    counts = {"load": 0, "capture": 0}
    load, capture_many = manifests.load, read.capture_many

    def counted_load(*a, **kw):
        counts["load"] += 1
        return load(*a, **kw)

    def counted_capture(*a, **kw):
        counts["capture"] += 1
        return capture_many(*a, **kw)

    monkeypatch.setattr(manifests, "load", counted_load)
    monkeypatch.setattr(read, "capture_many", counted_capture)
    capsys.readouterr()
    assert main(["--socket-name", srv.name, "ls", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(manifests, "load", load)
    monkeypatch.setattr(read, "capture_many", capture_many)
    return doc, counts


def test_a_cold_ls_json_loads_the_manifests_once_and_reads_the_dialog_off_its_capture(
        srv, monkeypatch, capsys):
    import time

    pane = _blocked_claude(srv)
    drawn = int(srv.display(pane, "#{window_activity}"))
    before = time.time()
    cold, counts = _ls_json_in_process(srv, monkeypatch, capsys)
    after = time.time()
    row = next(r for r in cold["agents"] if r["pane"] == pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert row["pending_tool"] and row["pending_summary"], row
    assert counts["load"] == 1, counts
    # the cycle's capture, and its second read of a prompt drawn less than a whole second
    # before (a loaded machine can start the run later than that: then one read); the
    # dialog's reading takes no capture of its own
    if after < drawn + 2:
        assert counts["capture"] == 2, counts
    elif before >= drawn + 2:
        assert counts["capture"] == 1, counts
    else:
        assert counts["capture"] in (1, 2), counts

    warm, counts = _ls_json_in_process(srv, monkeypatch, capsys)
    again = next(r for r in warm["agents"] if r["pane"] == pane)
    assert counts["capture"] == 1, counts  # fresh stamp consumed: the screen lane's own
    assert (again["pending_tool"], again["pending_summary"]) == \
        (row["pending_tool"], row["pending_summary"])


def test_a_prompt_that_sat_still_for_a_second_is_read_once(srv, monkeypatch, capsys):
    """No frame can be caught half-way in a window that drew nothing for a whole second:
    a cold refresh over a pane sitting on its prompt records the prompt on one read,
    without the second read (and its wait) a prompt still being drawn gets."""
    pane = _blocked_claude(srv)
    srv.next_second()
    srv.next_second()  # #{window_activity} is in whole seconds: two of them passed
    cold, counts = _ls_json_in_process(srv, monkeypatch, capsys)
    row = next(r for r in cold["agents"] if r["pane"] == pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert counts["capture"] == 1, counts
    assert srv.option(pane, "@tma_prompt"), "the prompt was recorded on its one read"


def test_the_visible_rows_of_a_capture_with_scrollback_are_those_of_a_visible_capture(srv):
    """What the screen lane reads off a cycle's capture (scrollback rows above the screen)
    is what a capture of the visible screen alone returns, row for row."""
    from tma.runtime.act.card_screen import visible
    from tma.tmux import read
    from tma.tmux.adapter import Server

    pane = srv.new_pane(f"exec {srv.fake('claude')} 100000", height=10)
    rows = "".join(f"row {i}\x1c{'x' * (i % 7)}\r\n" for i in range(40)) + "last"
    with open(srv.display(pane, "#{pane_tty}"), "w", encoding="utf-8") as fh:
        fh.write(rows)
    srv.wait_for(lambda: "last" in srv.tmux("capture-pane", "-p", "-t", pane))
    server = Server(srv.tmux_bin, socket_name=srv.name)
    deep = read.capture_many(server, [(pane, 50)])[pane]
    flat = read.capture_many(server, [(pane, 0)])[pane]
    assert deep.body != flat.body and deep.height == 10
    assert visible(deep) == flat.body
    assert visible(flat) == flat.body
    assert visible(read.Captured(pane, 0, deep.body)) is None  # no height: captured again

"""A cold `tma ls --json` pays once for what it reads (issue 29, bench/RESULTS.md): over a
blocked pane no stamp speaks for yet, the run loads the manifest set once (the cycle's
set is the session's), and the dialog's pending tool and summary are those of a warm run
(whose cycle consumes the fresh stamp)."""

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


def test_a_cold_ls_json_loads_the_manifests_once(
        srv, monkeypatch, capsys):
    pane = _blocked_claude(srv)
    cold, counts = _ls_json_in_process(srv, monkeypatch, capsys)
    row = next(r for r in cold["agents"] if r["pane"] == pane)
    assert (row["state"], row["detail"]) == ("blocked", "permission")
    assert row["pending_tool"] and row["pending_summary"], row
    assert counts["load"] == 1, counts

    warm, counts = _ls_json_in_process(srv, monkeypatch, capsys)
    again = next(r for r in warm["agents"] if r["pane"] == pane)
    assert (again["pending_tool"], again["pending_summary"]) == \
        (row["pending_tool"], row["pending_summary"])

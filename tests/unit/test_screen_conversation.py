"""The Feed's `conversation` (tma.runtime.screen), what the picker's and watch's ctrl-t
shows: a local pane's transcript read on every refresh, or why there is none; a host's
pane asked of its host only when the view is turned on or the selection comes to it in
a new state, never on a refresh, on a thread of its own."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from tma.runtime import screen

FIXTURE = next((Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
                / "claude-2.1.332" / "tool-approved").glob("*.jsonl"))


def feed(rows=(), remote=()) -> screen.Feed:
    """A Feed over fixed rows: no session's cycle, no hosts file."""
    f = screen.Feed.__new__(screen.Feed)
    f.session = SimpleNamespace(env={"HOME": "/nonexistent"})
    f.rows_feed = SimpleNamespace(result=SimpleNamespace(rows=list(rows)))
    f.remote_rows = list(remote)
    f._talks, f._asking, f._talk_lock = {}, set(), threading.Lock()
    return f


def local_row(pane: str, transcript: str = "", session: str = "") -> SimpleNamespace:
    return SimpleNamespace(
        agent="claude", stamp=SimpleNamespace(session=session),
        pane=SimpleNamespace(pane_id=pane, current_path="/w",
                             options={"@agent_transcript": transcript} if transcript else {}))


def test_a_local_panes_conversation_is_its_transcript_with_the_bodies():
    said = feed([local_row("%1", str(FIXTURE))]).conversation("%1", "refresh")
    assert said["agent"] == "claude" and "note" not in said
    texts = [e["body"]["text"] for e in said["events"]
             if e["kind"] == "assistant_text" and e["body"]]
    assert texts[0] == "TOOL RESULT SEEN: the command ran. All done."  # newest first


def test_a_local_pane_without_a_transcript_or_agent_says_why():
    f = feed([local_row("%1")])
    assert "claude has named no session on this pane yet" in f.conversation("%1")["note"]
    assert f.conversation("%9")["note"] == "%9 runs no agent tma knows"
    assert f.conversation(None) is None
    f.rows_feed.result = None  # no cycle read yet
    assert f.conversation("%1") is None


def test_a_host_is_asked_when_turned_on_or_in_a_new_state_never_on_a_refresh(monkeypatch):
    asked: list[str] = []
    release = threading.Event()

    def ask(self, pane_id, key):
        asked.append(pane_id)
        release.wait(5)
        with self._talk_lock:
            self._talks[pane_id] = (key, {"agent": "claude", "events": [], "note": "said"})
            self._asking.discard(pane_id)

    monkeypatch.setattr(screen.Feed, "_ask_host", ask)
    row = {"pane": "box:%5", "agent": "claude", "state": "idle", "since": 1}
    f = feed(remote=[row])

    def settled():
        release.set()
        deadline = time.monotonic() + 5
        while f._asking and time.monotonic() < deadline:
            time.sleep(0.01)
        release.clear()

    assert "ctrl-t twice asks box" in f.conversation("box:%5", "refresh")["note"]
    got = f.conversation("box:%5", "fresh")
    assert got["asking"] == "asking box for %5's conversation…"
    assert f.conversation("box:%5", "fresh")["asking"]  # one request at a time
    settled()
    assert asked == ["box:%5"]
    assert f.conversation("box:%5", "refresh")["note"] == "said"
    assert f.conversation("box:%5", "cached")["note"] == "said"  # kept: same state
    assert asked == ["box:%5"]
    row["state"] = "blocked"  # a new state: the selection coming back asks anew
    assert f.conversation("box:%5", "refresh")["note"] == "said"
    assert f.conversation("box:%5", "cached")["asking"]
    settled()
    assert asked == ["box:%5", "box:%5"]
    f.remote_rows = []
    assert f.conversation("box:%5", "fresh")["note"] == "box:%5 is gone"

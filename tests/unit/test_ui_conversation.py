"""tma.ui.conversation: a pane's last turns drawn as a chat (newest at the bottom), from a
transcript's events as `tma transcript --json` prints them; the agent's text cleaned
before any of it reaches the terminal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tma.runtime.transcript import locate, read
from tma.ui import conversation, transcript as document, width as cw
from tma.ui.picker import text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def _recorded(agent: str, scenario: str) -> dict:
    path = os.path.abspath(next((FIXTURES / scenario).glob("*.jsonl")))
    w = read.window(locate.Target("%1", agent, "", "/x", path), {}, last=200, bodies=True)
    return {"agent": agent, "events": document.document(w, "%1")["events"]}


def ev(kind: str, text: str | None = None, **keys) -> dict:
    out = {"cursor": f"c{id(keys)}", "kind": kind, **keys, "preview": text,
           "body": {"kind": "text", "text": text} if text is not None else None}
    return out


def test_a_recorded_claude_turn_reads_as_a_chat():
    got = text(conversation.lines(_recorded("claude", "claude-2.1.332/tool-approved"), 80, 30))
    assert got.splitlines() == [
        "you", "  RUNTOOL please write the file", "",
        "claude", "  I will run a command.", "  ▸ Bash  echo hi > mockllm-hi.txt  ✓",
        "  TOOL RESULT SEEN: the command ran. All done."]


def test_a_refused_call_says_so_and_the_turn_that_ended():
    got = text(conversation.lines(_recorded("codex", "codex-0.171.0/tool-denied"), 100, 30))
    assert "▸ exec_command  echo hi > mockllm-hi.txt  ✗" in got and "aborted by user" in got
    assert got.splitlines()[-1] == "  (the turn ended: interrupted)"


def test_newest_at_the_bottom_within_the_height_and_width():
    events = [ev("user_message", f"question {i}", bytes=1, attachments=0) for i in range(30)]
    out = conversation.lines({"agent": "a", "events": list(reversed(events))}, 40, 5)
    assert len(out) == 5 and text(out).splitlines()[-1] == "  question 29"
    assert all(sum(len(t) for t, _ in ln) <= 40 for ln in out)


def test_a_call_waiting_for_its_result_is_marked_and_a_result_names_its_status():
    events = [ev("user_message", "go", bytes=2, attachments=0),
              ev("tool_call", "ls -la", name="Bash", call_id="a", arg_keys=["command"], bytes=5),
              ev("tool_result", "boom: no such file", call_id="a", status="error", bytes=5),
              ev("tool_call", "rm -rf build", name="Bash", call_id="b", arg_keys=[], bytes=5)]
    got = text(conversation.lines({"agent": "claude", "events": events[::-1]}, 80, 20))
    assert "▸ Bash  ls -la  ✗ boom: no such file" in got
    assert got.splitlines()[-1] == "  ▸ Bash  rm -rf build  … waiting"


HOSTILE = ("\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[31mred\x1b[0m \u202eevil\u202c done\x07\x00\r"
           "\x9b31m\x1bP+q\x1b\\")


@pytest.mark.parametrize("kind", ["user_message", "assistant_text"])
def test_the_agents_text_loses_every_escape_and_control_character(kind):
    keys = {"bytes": 1, "attachments": 0} if kind == "user_message" else {"bytes": 1}
    out = conversation.lines({"agent": "x\x1b[2Jy", "events": [ev(kind, HOSTILE, **keys)]},
                             80, 10)
    flat = "".join(t for ln in out for t, _ in ln)
    assert "red" in flat and "done" in flat
    assert "[2J" not in flat and "52;c" not in flat  # a sequence goes whole, not its tail
    assert "31m" not in flat and "+q" not in flat  # its 8-bit CSI too, and a DCS string
    assert kind == "user_message" or "xy" in flat  # the agent's name, its sequence gone
    assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 or c in "\u202e\u202c" for c in flat)


@given(st.lists(st.tuples(st.sampled_from(["user_message", "assistant_text", "tool_call",
                                           "tool_result", "thinking", "compaction",
                                           "turn_boundary", "unknown"]),
                          st.text(max_size=200)), max_size=12),
       st.integers(8, 120), st.integers(1, 30))
def test_any_conversation_fits_its_box_and_no_control_byte_reaches_it(items, width, height):
    events = [ev(kind, said, call_id=str(i % 3), status="ok", name="T", boundary="end",
                 reason="interrupted") for i, (kind, said) in enumerate(items)]
    out = conversation.lines({"agent": "a", "events": events}, width, height)
    assert len(out) <= height
    for ln in out:
        flat = "".join(t for t, _ in ln)
        assert cw.cells(flat) <= width  # cells: st.text draws wide characters too
        assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in flat)


def test_the_notes_when_there_is_nothing_to_show():
    assert text(conversation.lines(None, 60, 3)) == "(reading the conversation…)"
    assert "no conversation: claude has named no session" in text(conversation.lines(
        {"events": [], "note": "claude has named no session on this pane yet"}, 80, 3))
    assert "asking box for %3" in text(conversation.lines(
        {"events": [], "asking": "asking box for %3's conversation…"}, 80, 3))
    assert text(conversation.lines({"events": []}, 80, 3)) == "(nothing said in this session yet)"


def test_chinese_wraps_by_cells_and_nothing_spills():
    """A message in Chinese (two cells a character, no spaces) wraps inside the words at
    the box's width in cells, not in characters."""
    said = "请把部署脚本改成先打印每一步再执行，并且在出错时立即停止。" * 3
    out = conversation.lines({"agent": "a", "events": [ev("assistant_text", said, bytes=1)]},
                             30, 20)
    flat = [("".join(t for t, _ in ln)) for ln in out]
    assert all(cw.cells(ln) <= 30 for ln in flat), flat
    body = [ln for ln in flat if ln.startswith("  ")]
    assert "".join(ln.strip() for ln in body) == said
    assert max(cw.cells(ln) for ln in body) >= 28  # the box is used, not half of it

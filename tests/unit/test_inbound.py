"""A host's frames made data (tma.core.inbound): every fix rebuilds its frame with the
record's `replace`, so each kind of response frame goes through it here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tma.core import inbound, proto as P

VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "proto" / "vectors"


def _responses() -> list[P.Frame]:
    """Every host-to-device frame of the golden vectors (tests/unit/test_proto.py)."""
    if not VECTORS.is_dir():
        pytest.skip(f"protocol vectors not found at {VECTORS} (shared reference folder absent)")
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for frame in doc if isinstance(doc, list) else [doc]:
            try:
                out.append(P.parse_line(json.dumps(frame), P.RESPONSE))
            except P.ProtoError:
                pass  # a request (device to host), or a payload that is not a frame
    return out


def test_every_clean_vector_passes_unchanged_through_its_fix():
    frames = _responses()
    for frame in frames:
        safe, problems = inbound.response(frame)
        assert problems == [], frame
        assert type(safe) is type(frame)
        assert safe == frame  # every field kept: the golden vectors are clean
    assert set(inbound._FIXES) <= {type(f) for f in frames}  # each fix ran at least once


def _row(pane: str, agent: str = "claude") -> P.FleetRow:
    return P.FleetRow(pane, agent, "idle", None, 1, 1000, 0, "s:1.0", False, False, None,
                      None, None, None, None, None, False, None, None, None, None, None,
                      None, None, None, None, "/tmp/tmux-1/default", "box")


def test_a_dirty_snapshot_is_cleaned_and_its_bad_rows_named():
    frame = P.Snapshot("7", (_row("%1", "cla\x1bude"), _row("1; rm -rf"), _row("%1")))
    safe, problems = inbound.response(frame)
    assert isinstance(safe, P.Snapshot) and safe.id == "7"
    assert [r.pane for r in safe.agents] == ["%1"]
    assert safe.agents[0].agent == "claude"  # the escape byte is gone
    assert problems == ["refused 1 row whose pane is not a pane id like %3 (the first: "
                        "'1; rm -rf')", "dropped 1 repeated pane rows"]
    with pytest.raises(AttributeError, match="frozen"):
        safe.id = "8"  # type: ignore[misc]  # what a host said stays as it was made safe


def test_a_frame_whose_pane_is_not_a_pane_id_is_refused():
    edge = P.Edge("1", 5, "x", "claude", "idle", "working", None, "s:1.0", None, None)
    with pytest.raises(inbound.Refused, match="an edge names pane 'x'"):
        inbound.response(edge)


def test_every_text_of_an_edge_is_cleaned_its_host_too():
    edge = P.Edge("1", 5, "%2", "cla\x1bude", "idle", "working", None, "s:1.0\x07",
                  "re\x1b]0;po\x07", None, "bo\x1b[2Jx")
    safe, problems = inbound.response(edge)
    assert (safe.agent, safe.locator, safe.host) == ("claude", "s:1.0", "bo[2Jx")  # no ESC
    assert "\x1b" not in (safe.repo or "") and problems == []


def test_a_receipts_sentence_is_cleaned_and_bounded():
    # the host's words reach the person's terminal and tmux's message line: no escape
    # byte, no newline, and no more than a long sentence
    said = "%3 is working\x1b]52;c;cGF5bG9hZA==\x07\n" + "x" * 5000
    row = P.ReceiptRow("tma-1", "%3", "approve", "refused", "gated", 4, False, None, 7, said)
    safe, problems = inbound.response(P.Receipt("1", row))
    assert problems == [] and isinstance(safe, P.Receipt)
    message = safe.receipt.message
    assert message is not None and message.startswith("%3 is working")
    assert not [c for c in message if c < " " or c == "\x7f"]
    assert len(message) <= inbound.LONG
    many, _ = inbound.response(P.Receipts("2", (row,)))
    assert isinstance(many, P.Receipts) and many.receipts[0].message == message


def test_an_events_body_keeps_its_lines_and_loses_its_escapes():
    header = P.EventHeader("t1.1.2.3.4.0", "assistant_text", {"bytes": 9}, None,
                           "a\x1b]52;c;x\x07b", P.EventBody("text", "line 1\r\n\tline 2\x1b[2J\u202e"))
    frame, problems = inbound.response(P.Event("8", header))
    assert isinstance(frame, P.Event) and problems == []
    assert frame.header.body == P.EventBody("text", "line 1\n\tline 2[2J")
    assert frame.header.preview == "a]52;c;xb"
    long = P.EventBody("text", "x" * (inbound.EVENT_BODY + 10))
    cut = inbound.response(P.Event("8", header.replace(body=long)))[0]
    assert len(cut.header.body.text) == inbound.EVENT_BODY

"""A transcript page as the protocol carries it (tma.core.transcript.window, pure): the
budgets a caller may lower and never raise, cursors, headers cut to their byte budget,
the frame a page fits, and which turns the last answer is."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from tma.core import proto
from tma.core.transcript import event as E, window as W

ints = st.integers(-(1 << 40), 1 << 40)


@given(st.one_of(st.none(), ints), st.one_of(st.none(), st.builds(proto.Budget, ints, ints, ints)))
def test_a_caller_lowers_the_budget_and_never_raises_it(last, budget):
    lim = W.clamp(last, budget)
    assert 1 <= lim.last <= W.LAST_MAX
    assert lim.last == (W.LAST if last is None else min(max(last, 1), W.LAST_MAX))
    assert W.HEADER_FLOOR <= lim.header_bytes <= W.HEADER_BYTES
    assert W.CHUNK <= lim.read_bytes <= W.READ_BYTES
    assert W.FRAME_FLOOR <= lim.frame_bytes <= W.FRAME_BYTES
    if budget is not None and budget.frame_bytes >= W.FRAME_FLOOR:
        assert lim.frame_bytes == min(budget.frame_bytes, W.FRAME_BYTES)


@given(st.integers(0, 1 << 62), st.integers(0, 1 << 62), st.integers(0, 1 << 62),
       st.integers(0, 1 << 62), st.integers(0, 1 << 20))
def test_a_cursor_reads_back(dev, ino, size, offset, part):
    c = W.Cursor(dev, ino, size, offset, part)
    assert W.parse_cursor(c.text()) == c
    assert c.text() == c.text().lower() and c.text().startswith("t1.")


def test_a_cursor_addresses_its_bytes_only_while_the_file_grows():
    c = W.Cursor(1, 2, 100, 40, 0)
    assert c.addresses(1, 2, 100) and c.addresses(1, 2, 5000)
    assert not c.addresses(1, 3, 100)  # replaced
    assert not c.addresses(9, 2, 100)  # another device
    assert not c.addresses(1, 2, 99)  # truncated
    assert not W.Cursor(1, 2, 100, 100, 0).addresses(1, 2, 200)  # never inside


@given(st.text(max_size=300), st.integers(4, 300))
def test_a_cut_string_fits_its_bytes_and_keeps_whole_characters(text, limit):
    out = W.cut(text, limit)
    if len(text.encode()) <= limit:
        assert out == text
    else:
        assert len(out.encode()) <= limit
        assert out.endswith(W.ELLIPSIS) and text.startswith(out[:-1])


def test_every_string_of_a_header_is_cut_to_the_header_budget():
    long = "é" * 400
    ev = E.make("tool_call", name=long, call_id="c" * 300, arg_keys=[long] * 50, bytes=3,
                ts="2026-01-01T00:00:00Z", preview=long, body=("json", long))
    h = W.header("t1.1.2.3.4.0", ev, 256)
    assert len(h.data["name"].encode()) <= 256 and h.data["name"].endswith(W.ELLIPSIS)
    assert len(h.preview.encode()) <= 256
    assert len(h.data["arg_keys"]) == W.ARG_KEYS_MAX
    assert all(len(k.encode()) <= 256 for k in h.data["arg_keys"])
    assert h.body is None  # a window's header never carries the body
    full = W.header("t1.1.2.3.4.0", ev, 256, body=True)
    assert full.body == proto.EventBody("json", long)
    assert list(h.data) == list(proto.EVENT_KINDS["tool_call"])


def _window(heads, n, older="t1.1.2.3.4.0"):
    return proto.Window("7", "%1", "claude", None, older if n else None, False, 0,
                        tuple(heads[:n]))


def test_a_page_fits_its_frame_budget_and_holds_at_least_one_event():
    heads = [W.header(f"t1.1.2.3.{i:x}.0", E.make("assistant_text", bytes=9,
                                                   preview="w" * 200), 256)
             for i in range(400)]
    fitted = W.fit(heads, 32 << 10, lambda n: _window(heads, n))
    assert fitted.cut and 0 < fitted.count < 400
    assert len(proto.encode(_window(heads, fitted.count))) <= 32 << 10
    assert len(proto.encode(_window(heads, fitted.count + 1))) > 32 << 10
    one = W.fit(heads, 10, lambda n: _window(heads, n))
    assert (one.count, one.cut) == (1, True)
    few = W.fit(heads[:3], 32 << 10, lambda n: _window(heads, n))
    assert (few.count, few.cut) == (3, False)
    assert W.fit([], 32 << 10, lambda n: _window(heads, n)) == W.Fitted(0, False)


def test_the_session_meta_is_the_windows_session():
    ev = E.make("session_meta", agent="claude", session_id="s", cwd="/w", version=None,
                model="m")
    assert W.session_meta(ev) == proto.SessionMeta("claude", "s", "/w", "", "m")
    # and as an event, its names are strings too (a store that knows no model says "")
    assert W.header("t1.1.2.3.0.0", ev).data["version"] == ""
    assert W.session_meta(None) is None
    assert W.session_meta(E.unknown("x")) is None


def _turns(kinds, n, at_start=False):
    pairs = [(f"c{i}", k) for i, k in enumerate(kinds)]  # newest first
    return W.last_turns(pairs, n, at_start=at_start)


def test_the_last_answer_is_the_assistant_text_of_the_newest_turns_that_have_any():
    kinds = ["tool_call", "assistant_text", "assistant_text", "user_message",  # turn 1
             "assistant_text", "user_message",  # turn 2
             "user_message",  # an empty turn between
             "assistant_text", "user_message"]  # turn 3
    assert _turns(kinds, 1) == W.Turns(("c2", "c1"), True)
    assert _turns(kinds, 2) == W.Turns(("c4", "c2", "c1"), True)
    assert _turns(kinds, 3) == W.Turns(("c7", "c4", "c2", "c1"), True)
    assert _turns(kinds, 4) == W.Turns(("c7", "c4", "c2", "c1"), False)
    assert _turns(kinds, 4, at_start=True).complete
    # a turn still working, no text yet: the answer before it
    assert _turns(["user_message", "assistant_text", "user_message"], 1) == W.Turns(
        ("c1",), True)
    assert _turns(["assistant_text"], 1) == W.Turns(("c0",), False)


def test_a_window_header_is_the_wire_header():
    ev = E.make("usage", input=1, output=2, total=3, context_window=4, cost_usd=0.5,
                ts="2026-01-01T00:00:00Z")
    h = W.header("t1.1.2.3.4.0", ev)
    line = proto.dumps(proto.Event("9", h))
    assert list(json.loads(line))[3:] == ["cursor", "kind", "input", "output", "total",
                                          "context_window", "cost_usd", "ts", "preview", "body"]
    assert proto.parse_line(line, proto.RESPONSE) == proto.Event("9", h)


@settings(max_examples=30)
@given(st.lists(st.sampled_from(sorted(proto.EVENT_KINDS)), max_size=30), st.integers(1, 5))
def test_the_picked_turns_are_assistant_text_oldest_first(kinds, n):
    t = _turns(kinds, n)
    idx = [int(c[1:]) for c in t.cursors]
    assert idx == sorted(idx, reverse=True)  # oldest (highest index) first
    assert all(kinds[i] == "assistant_text" for i in idx)


def test_only_one_unanswered_call_is_the_pending_one():
    """Parallel calls: A waits for its approval while B (newer) still runs. The newest
    unanswered would be B, whose command the card would show next to an Approve that
    answers A: two unanswered name none (the screen's call stands)."""
    from tma.core.transcript.window import unanswered

    call = lambda cid: ("tool_call", {"call_id": cid})  # noqa: E731
    done = lambda cid: ("tool_result", {"call_id": cid})  # noqa: E731
    assert unanswered([call("b"), call("a"), ("user_message", {})]) is None
    assert unanswered([done("b"), call("b"), call("a")]) == 2
    assert unanswered([call("a"), done("b"), call("b")]) == 0
    assert unanswered([("user_message", {}), call("a")]) is None
    assert unanswered([call("c"), ("turn_boundary", {"boundary": "end"}), call("a")]) == 0

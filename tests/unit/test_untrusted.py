"""What a host sends, made data: tma.core.untrusted (strings, pane ids) and
tma.core.inbound (whole frames). A compromised host's text must never reach a terminal,
a tmux format, a shell or a file as anything but plain, bounded text."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given, strategies as st

from tma.core import inbound, proto
from tma.core.untrusted import clean, lines, pane_id_ok, token


#: The code points a terminal may act on: C0, DEL, C1, and the marks that reorder text.
def _forbidden(ch: str) -> bool:
    o = ord(ch)
    return (o < 0x20 or 0x7F <= o < 0xA0 or o in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029)
            or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069)


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_clean_leaves_no_control_and_keeps_the_bound(text, limit):
    out = clean(text, limit)
    assert not any(_forbidden(c) for c in out)
    assert len(out) <= limit
    if len(text) <= limit and not any(_forbidden(c) for c in text):
        assert out == text  # plain text passes as it is


def test_clean_takes_out_every_escape_a_terminal_would_act_on():
    osc52 = "\x1b]52;c;aGVsbG8=\x07"
    title = "\x1b]0;pwned\x1b\\"
    csi = "\x1b[2J\x9b31m"
    out = clean(f"a{osc52}b{title}c{csi}d\re\bf\u202eg", 200)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\r" not in out and "\b" not in out and "\u202e" not in out
    assert out.startswith("a]52;c;") and out.endswith("g")


def test_a_megabyte_costs_its_bound_and_says_it_was_cut():
    out = clean("x" * 1_000_000, 64)
    assert len(out) == 64 and out.endswith("…")


def test_lines_keeps_the_last_lines_each_clean():
    text = "".join(f"line {i}\x1b[31m\n" for i in range(100)) + "\n\n"
    out = lines(text, 4096, max_lines=3)
    assert out.splitlines() == ["line 97[31m", "line 98[31m", "line 99[31m"]


@given(st.text(max_size=14))
def test_a_pane_id_is_percent_and_ascii_digits_only(text):
    ok = pane_id_ok(text)
    assert ok == (len(text) >= 2 and text[0] == "%" and all(c in "0123456789"
                                                            for c in text[1:])
                  and len(text) <= 11)


def test_pane_ids_that_would_reach_a_format_or_a_shell_are_refused():
    for bad in ("%1#(touch F)", "%1;touch F", "%1 x", "%1\n", "%\u0661", "%", "1",
                "%" + "1" * 11, "%1$(id)"):
        assert not pane_id_ok(bad), bad
    assert pane_id_ok("%0") and pane_id_ok("%1234567890")


def test_a_detail_keeps_the_token_alphabet_or_goes():
    assert token("rate_limit") == "rate_limit"
    for bad in ("Permission", "a b", "x#{y}", "\x1b[1m", "", "a" * 65):
        assert token(bad) is None


# ---------------------------------------------------------------- frames


def _row(**over) -> dict:
    row = {"pane": "%1", "agent": "claude", "state": "blocked", "detail": "permission",
           "since": 1, "since_ms": 1000, "episode_ms": 1000, "locator": "s:1.0",
           "attention": False, "done": False, "session": None, "transcript": None,
           "permission_request": None, "stamped_at_ms": None, "context": None,
           "context_at_ms": None, "muted": False, "tokens": None, "quota": None,
           "cost_usd": None, "repo": None, "branch": None, "worktree": None,
           "pending_tool": None, "pending_call": None, "pending_summary": None,
           "server": "/tmp/tmux-0/default", "host": "box"}
    row.update(over)
    return row


def _read(doc: dict) -> tuple[proto.Frame, list[str]]:
    frame = proto.parse_line(json.dumps(doc), proto.RESPONSE, limit=1 << 24)
    return inbound.response(frame)


def _snapshot(rows: list[dict]) -> dict:
    return {"schema": 1, "id": "2", "t": "snapshot", "agents": rows}


def test_a_row_whose_pane_is_not_a_pane_id_is_refused_by_name():
    frame, problems = _read(_snapshot([_row(pane="%1#(touch F)"), _row(pane="%2"),
                                       _row(pane="%3;id")]))
    assert [r.pane for r in frame.agents] == ["%2"]
    assert len(problems) == 1 and "refused 2 rows" in problems[0] and "%1#(touch F)" in problems[0]


def test_every_string_of_a_row_is_cleaned_and_bounded():
    evil = "\x1b]52;c;SGVsbG8=\x07" + "A" * 10_000
    frame, _ = _read(_snapshot([_row(agent=evil, locator=evil, session=evil, repo=evil,
                                     branch=evil, pending_tool=evil, pending_call=evil,
                                     pending_summary=evil, permission_request=evil,
                                     transcript=evil, server=evil, host=evil,
                                     detail="bad detail\x1b")]))
    (row,) = frame.agents
    for name in ("agent", "locator", "session", "repo", "branch", "pending_tool",
                 "pending_call", "pending_summary", "permission_request", "transcript",
                 "server", "host"):
        value = getattr(row, name)
        assert "\x1b" not in value and "\x07" not in value, name
        assert len(value) <= inbound.BODY, name
    assert len(row.agent) <= inbound.NAME and row.detail is None


def test_a_snapshot_keeps_at_most_max_rows_and_one_row_a_pane():
    rows = [_row(pane=f"%{i}") for i in range(inbound.MAX_ROWS + 500)] + [_row(pane="%0")]
    frame, problems = _read(_snapshot(rows))
    assert len(frame.agents) == inbound.MAX_ROWS
    assert any(f"kept the first {inbound.MAX_ROWS}" in p for p in problems)
    frame, problems = _read(_snapshot([_row(pane="%4"), _row(pane="%4")]))
    assert len(frame.agents) == 1 and "repeated" in problems[0]


def test_numbers_outside_their_range_read_as_absent():
    frame, _ = _read(_snapshot([_row(since_ms=-5, episode_ms=1 << 60, context=500,
                                     cost_usd=1e300, tokens=-1,
                                     quota={"pct": 400, "window": "5h", "resets_at_ms": 1})]))
    (row,) = frame.agents
    assert row.since_ms == 0 and row.episode_ms == 0 and row.context is None
    assert row.cost_usd is None and row.tokens is None and row.quota is None


def test_an_edge_card_or_receipt_naming_a_non_pane_is_refused_whole():
    binder = {"expect_episode_ms": 0}
    for doc in (
        {"schema": 1, "id": "3", "t": "edge", "at_ms": 1, "pane": "%1;x", "agent": "a",
         "from": "idle", "to": "blocked", "detail": None, "locator": "s", "repo": None,
         "branch": None},
        {"schema": 1, "id": "3", "t": "card", "card": "permission", "pane": "%1#(x)",
         "agent": "claude", "lane": "screen", "options": [], "extraction": "exact",
         "pending_call": None, "binder": binder},
        {"schema": 1, "id": "3", "t": "receipt", "slot": "s", "pane": "%1 x",
         "action": "approve", "outcome": "sent", "reason": None, "exit_code": 0,
         "cached": False, "at_ms": 1},
    ):
        try:
            _read(doc)
        except inbound.Refused as exc:
            assert "not a pane id" in str(exc)
        else:
            raise AssertionError(f"{doc['t']} with a bad pane was taken")


def test_hello_error_and_card_text_is_cleaned():
    frame, _ = _read({"schema": 1, "id": "1", "t": "hello", "host": "box\x1b]0;t\x07",
                      "tma_version": "9\x9b", "reconcile_interval_ms": -4,
                      "scopes": ["read", "act:answer\x1b"]})
    assert frame.host == "box]0;t" and frame.tma_version == "9"
    assert frame.reconcile_interval_ms == 0 and frame.scopes == ("read", "act:answer")
    frame, _ = _read({"schema": 1, "id": "1", "t": "error", "code": "x\x07",
                      "message": "\x1b[2Jgone"})
    assert frame.code == "x" and frame.message == "[2Jgone"
    deep: dict = {}
    cur = deep
    for _ in range(50):
        cur["k\x1b"] = {}
        cur = cur["k\x1b"]
    frame, _ = _read({"schema": 1, "id": "3", "t": "card", "card": "permission",
                      "pane": "%1", "agent": "claude", "lane": "hook",
                      "options": [{"kind": "allow\x1b", "name": "Yes\x07"}] * 100,
                      "extraction": "exact",
                      "pending_call": {"tool": "Bash", "input": deep, "call_id": "c"},
                      "binder": {"expect_episode_ms": 5}})
    assert len(frame.options) == inbound.MAX_OPTIONS
    assert frame.options[0].kind == "allow" and frame.options[0].name == "Yes"
    assert "\x1b" not in json.dumps(frame.pending_call.input)
    depth, cur = 0, frame.pending_call.input
    while cur:
        (cur,) = cur.values()
        depth += 1
    assert depth <= inbound.JSON_DEPTH


def test_no_unicode_category_cc_survives_any_frame_string():
    evil = "".join(chr(c) for c in range(0, 0xA0)) + "\u202e\u2066"
    frame, _ = _read(_snapshot([_row(agent=evil, locator=evil)]))
    (row,) = frame.agents
    for value in (row.agent, row.locator):
        assert not any(unicodedata.category(c) == "Cc" for c in value)

"""OpenCode 1.18's SQLite store read as events, paged by the store itself
(tests/fixtures/transcripts/opencode-1.18.33: the real CLI's database after each
scenario, as SQL loaded into a fresh database here)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.helpers import recorded_transcripts as tx
from tests.helpers.recorded_transcripts import PROMPT_TEXT
from tma.core.transcript import event, opencode
from tma.runtime.transcript import opencode_db

SCENARIOS = sorted(p.stem for p in tx.OPENCODE.glob("*.sql"))


class Budget:
    def __init__(self, read_bytes: int = opencode_db.READ_BYTES,
                 frame_bytes: int = opencode_db.FRAME_BYTES) -> None:
        self.read_bytes = read_bytes
        self.frame_bytes = frame_bytes


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    """Each scenario's database, loaded once; opened through the held stores."""
    root = tmp_path_factory.mktemp("opencode")
    out = {name: opencode_db.store(str(tx.load_sql(tx.OPENCODE / f"{name}.sql",
                                                   root / f"{name}.db")))
           for name in SCENARIOS}
    yield out
    opencode_db.close_all()


def main_session(db):
    return next(s["id"] for s in db.sessions() if s["parent_id"] is None)


def everything(db, session_id):
    """All of a session's events, oldest first, read as one page."""
    evs, older = db.page(session_id, last=opencode_db.LAST_MAX)
    assert older is None
    return list(reversed(evs))


def flow(events):
    return [e.kind for _, e in events if e.kind not in ("bookkeeping", "usage")]


def test_the_scenarios_are_there():
    assert {"plain", "tool-approved", "tool-approved-pending", "tool-denied", "question",
            "question-pending", "thinking", "error", "attachment", "agent-mention",
            "subagent", "compaction"} <= set(SCENARIOS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_recorded_row_is_known(dbs, name):
    db = dbs[name]
    for s in db.sessions():
        evs = everything(db, s["id"])
        assert evs[0][1].kind == "session_meta"
        assert [e.data for _, e in evs if e.kind == "unknown"] == []
        for _, e in evs:
            assert list(e.data) == list(event.KINDS[e.kind])


def test_a_drifted_database_is_counted_unknown(tmp_path):
    db = opencode_db.OpenCodeDB(str(tx.load_sql(tx.OPENCODE / "drifted" / "plain.sql",
                                                tmp_path / "drifted.db")))
    try:
        evs = everything(db, main_session(db))
        assert [e.data["type_name"] for _, e in evs if e.kind == "unknown"]
    finally:
        db.close()


def test_a_plain_reply(dbs):
    db = dbs["plain"]
    evs = everything(db, main_session(db))
    meta = evs[0][1]
    assert meta.data["agent"] == "opencode" and meta.data["version"] == "1.18.33"
    assert meta.data["model"] == "mock/mock-model"
    assert meta.data["cwd"].endswith("/work-opencode")
    assert flow(evs) == ["session_meta", "user_message", "assistant_text", "turn_boundary"]
    assert [e.preview for _, e in evs if e.kind in ("user_message", "assistant_text")] == \
        ["Say hello please", PROMPT_TEXT]
    assert evs[-1][1].data == {"boundary": "end", "reason": "stop"}
    assert db.session(main_session(db)) == meta.replace(body=None)


def test_a_call_waiting_for_approval_reads_pending_and_its_cursor_outlives_the_wait(dbs):
    waiting, done = dbs["tool-approved-pending"], dbs["tool-approved"]
    sid = main_session(waiting)
    assert main_session(done) == sid
    evs = everything(waiting, sid)
    assert flow(evs) == ["session_meta", "user_message", "tool_call", "tool_result"]
    cursor, pending = evs[-1]
    assert pending.data["status"] == "pending" and pending.data["bytes"] == 0
    # the same row, later: the call ran; the cursor still names its result
    _, result = done.event(cursor)
    assert result.kind == "tool_result" and result.data["status"] == "ok"
    assert result.data["call_id"] == pending.data["call_id"]
    assert result.body == ("text", "(no output)")
    assert flow(everything(done, sid)) == ["session_meta", "user_message", "tool_call",
                                          "tool_result", "assistant_text", "turn_boundary"]


def test_a_denied_call_is_an_error_result(dbs):
    db = dbs["tool-denied"]
    evs = everything(db, main_session(db))
    assert flow(evs) == ["session_meta", "user_message", "tool_call", "tool_result"]
    result = next(e for _, e in evs if e.kind == "tool_result")
    assert result.data["status"] == "error" and "rejected permission" in result.preview


def test_a_question_waits_as_a_pending_call_and_is_answered_by_its_result(dbs):
    waiting = everything(dbs["question-pending"], main_session(dbs["question-pending"]))
    call = next(e for _, e in waiting if e.kind == "tool_call")
    assert call.data["name"] == "question"
    assert waiting[-1][1].data["status"] == "pending"
    done = everything(dbs["question"], main_session(dbs["question"]))
    result = next(e for _, e in done if e.kind == "tool_result")
    assert result.data["status"] == "ok" and '"Red"' in result.preview


def test_thinking_comes_before_the_answer(dbs):
    evs = everything(dbs["thinking"], main_session(dbs["thinking"]))
    assert flow(evs) == ["session_meta", "user_message", "thinking", "assistant_text",
                         "turn_boundary"]
    assert next(e for _, e in evs if e.kind == "thinking").preview == "the user wants a greeting"


def test_a_failed_request_ends_the_turn_with_its_error(dbs):
    evs = everything(dbs["error"], main_session(dbs["error"]))
    assert flow(evs) == ["session_meta", "user_message", "turn_boundary"]
    end = evs[-1][1]
    assert end.data == {"boundary": "end", "reason": "APIError"}
    assert end.preview == "mockllm: scripted HTTP 400"


def test_an_attached_file_and_what_opencode_read_for_it(dbs):
    evs = everything(dbs["attachment"], main_session(dbs["attachment"]))
    assert flow(evs) == ["session_meta", "user_message", "attachment", "assistant_text",
                         "turn_boundary"]
    attached = next(e for _, e in evs if e.kind == "attachment")
    assert attached.data == {"attachment": "README.md", "bytes": None}
    synthetic = [e.preview for _, e in evs if e.kind == "bookkeeping"
                 and e.data["type_name"] == "text.synthetic"]
    assert synthetic and any("README.md" in (p or "") for p in synthetic)


def test_an_agent_mention_is_bookkeeping(dbs):
    evs = everything(dbs["agent-mention"], main_session(dbs["agent-mention"]))
    assert ("agent", "@explore") in [(e.data.get("type_name"), e.preview) for _, e in evs]


def test_a_subagent_is_a_child_session_named_by_its_call(dbs):
    db = dbs["subagent"]
    sessions = db.sessions()
    parent = main_session(db)
    child = next(s for s in sessions if s["parent_id"] == parent)
    evs = everything(db, parent)
    call = next(e for _, e in evs if e.kind == "tool_call")
    assert call.data["name"] == "task"
    i = next(i for i, (_, e) in enumerate(evs) if e.kind == "subagent_ref")
    assert evs[i][1].data == {"child_id": child["id"], "external_file": True}
    assert evs[i - 1][1].kind == "tool_result"  # call, result, then the child
    child_evs = everything(db, child["id"])
    assert [e.preview for _, e in child_evs if e.kind == "assistant_text"] == [
        "Subagent reply: nothing to do."]


def test_a_compaction_and_the_summary_after_it(dbs):
    evs = everything(dbs["compaction"], main_session(dbs["compaction"]))
    kinds = flow(evs)
    assert kinds.count("compaction") == 1
    at = kinds.index("compaction")
    assert kinds[at + 1:] == ["assistant_text", "turn_boundary"]
    assert next(e for _, e in evs if e.kind == "compaction").data == {"compaction": "manual"}


# ---------------------------------------------------------------- paging


@pytest.mark.parametrize("name", ["compaction", "subagent", "attachment"])
def test_pages_walk_back_to_the_first_event_without_a_gap_or_a_repeat(dbs, name):
    db = dbs[name]
    sid = main_session(db)
    whole = db.page(sid, last=1000)[0]
    for last in (1, 2, 3, 7):
        seen, before = [], None
        while True:
            evs, older = db.page(sid, before=before, last=last)
            assert 1 <= len(evs) <= last
            assert before is None or evs[0][0] != before  # `before` is exclusive
            seen += evs
            if older is None:
                break
            assert older == evs[-1][0] and len(seen) <= len(whole)
            before = older
        assert seen == whole


def test_a_page_leaves_the_bodies_out_and_event_brings_one(dbs):
    db = dbs["tool-approved"]
    evs, _ = db.page(main_session(db))
    assert all(e.body is None for _, e in evs)
    call_cursor = next(c for c, e in evs if e.kind == "tool_call")
    cursor, call = db.event(call_cursor)
    assert cursor == call_cursor
    assert call.body == ("json", '{"command":"echo hi > mockllm-hi.txt"}')


def test_the_budget_cuts_a_page_but_never_to_nothing(dbs):
    db = dbs["compaction"]
    sid = main_session(db)
    whole = db.page(sid, last=1000)[0]
    tiny, older = db.page(sid, budget=Budget(frame_bytes=1))
    assert len(tiny) == 1 and older == tiny[0][0]
    few, older = db.page(sid, budget=Budget(read_bytes=1))
    assert 1 <= len(few) < len(whole) and older is not None
    # the host's defaults bound what a device asks for
    assert db.page(sid, budget=Budget(read_bytes=1 << 40, frame_bytes=1 << 40))[0] == \
        db.page(sid)[0]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["compaction", "subagent", "question", "attachment"]),
       last=st.integers(1, 12), frame=st.integers(1, 4000), read=st.integers(1, 4000))
def test_any_page_size_and_budget_reads_the_same_events(dbs, name, last, frame, read):
    db = dbs[name]
    sid = main_session(db)
    whole = db.page(sid, last=1000)[0]
    seen, before = [], None
    while True:
        evs, older = db.page(sid, before=before, last=last, budget=Budget(read, frame))
        seen += evs
        if older is None or len(seen) > len(whole):
            break
        before = older
    assert seen == whole


def test_cursors_name_rows_and_a_cursor_that_names_nothing_is_invalid(dbs, tmp_path):
    db = dbs["plain"]
    sid = main_session(db)
    evs, _ = db.page(sid)
    for bad in ("t1.1234.beef.1000.100.0", "o1.x.y", f"o1.{sid}.prt_nope.0",
                f"o1.{sid}.{sid}.9", "o1.a b.c.0"):
        with pytest.raises(opencode_db.CursorInvalid) as caught:
            db.event(bad)
        assert caught.value.code == "cursor-invalid"
    other = main_session(dbs["thinking"])
    with pytest.raises(opencode_db.CursorInvalid):
        db.page(other, before=evs[0][0])  # another session's cursor
    with pytest.raises(opencode_db.NotFound) as missing:
        db.page("ses_nope")
    assert missing.value.code == "not-found"
    with pytest.raises(opencode_db.NotFound):
        opencode_db.OpenCodeDB(str(tmp_path / "absent.db"))


def test_a_cursor_into_rows_opencode_replaced_is_invalid(tmp_path):
    """OpenCode's revert deletes a session's later messages and their parts: a cursor
    naming one of them no longer addresses anything."""
    path = tx.load_sql(tx.OPENCODE / "tool-approved.sql", tmp_path / "revert.db")
    db = opencode_db.OpenCodeDB(str(path))
    try:
        sid = main_session(db)
        evs, _ = db.page(sid)
        newest = evs[0][0]
        _, row, _ = opencode_db.parse_cursor(newest)
        writer = sqlite3.connect(path)
        with writer:
            (mid,) = writer.execute("SELECT message_id FROM part WHERE id = ?", (row,)).fetchone()
            writer.execute("DELETE FROM part WHERE message_id = ?", (mid,))
            writer.execute("DELETE FROM message WHERE id = ?", (mid,))
        writer.close()
        with pytest.raises(opencode_db.CursorInvalid):
            db.event(newest)
        with pytest.raises(opencode_db.CursorInvalid):
            db.page(sid, before=newest)
        assert db.page(sid)[0] == evs[len(evs) - len(db.page(sid)[0]):]
    finally:
        db.close()


def test_one_read_only_connection_is_held_per_database(dbs, tmp_path):
    db = dbs["plain"]
    path = db.path
    assert opencode_db.store(path) is db
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db._conn.execute("DELETE FROM part")
    assert opencode_db.default_path({"HOME": "/h"}) == "/h/.local/share/opencode/opencode.db"
    assert opencode_db.default_path({"HOME": "/h", "XDG_DATA_HOME": "/d"}) == \
        "/d/opencode/opencode.db"


def test_the_row_mapping_is_a_function_of_the_one_row():
    """The pure half: a part row's events depend on the row and its message's role."""
    part = {"table": "part", "id": "prt_1", "time_created": 1796590071127, "role": "user",
            "data": {"type": "text", "text": "Say hello please"}}
    (prompt,) = opencode.events(part)
    assert prompt.kind == "user_message" and prompt.ts == "2026-12-06T20:47:51.127Z"
    (answer,) = opencode.events(dict(part, role="assistant"))
    assert answer.kind == "assistant_text"
    assert opencode.events(dict(part, data=None))[0].kind == "unknown"
    assert opencode.events({"table": "todo"})[0].data == {"type_name": "todo"}
    running = {"table": "part", "id": "prt_2", "time_created": 0, "role": "assistant",
               "data": {"type": "tool", "tool": "task", "callID": "c",
                        "state": {"status": "running", "input": {"prompt": "p"},
                                  "metadata": {"sessionId": "ses_child"}}}}
    assert [e.kind for e in opencode.events(running)] == ["tool_call", "tool_result",
                                                         "subagent_ref"]

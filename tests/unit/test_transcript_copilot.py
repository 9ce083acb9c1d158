"""GitHub Copilot CLI 1.0.102's events.jsonl read as events: each recorded scenario says
what happened in it (tests/fixtures/transcripts/copilot-1.0.102, recorded from the real
CLI against the lab's fake model)."""

from __future__ import annotations

import glob

import pytest

from tests.helpers import recorded_transcripts as tx
from tests.helpers.recorded_transcripts import AFTER_TOOL, PROMPT_TEXT, flow
from tma.core.transcript import copilot


def read(name: str):
    return [e for rec in tx.records(tx.COPILOT / name) for e in copilot.events(rec)]


def test_a_plain_reply():
    evs = read("plain.jsonl")
    assert flow(evs) == ["session_meta", "session_meta", "user_message", "assistant_text"]
    assert [e.preview for e in evs if e.kind in ("user_message", "assistant_text")] == \
        ["Say hello please", PROMPT_TEXT]
    usage = next(e for e in evs if e.kind == "usage")
    assert usage.data == {"input": 100, "output": 20, "total": 120, "context_window": None,
                          "cost_usd": None}
    # the system prompt, the model steps and the exit's accounting are bookkeeping
    assert {e.data["type_name"] for e in evs if e.kind == "bookkeeping"} == {
        "system.message", "assistant.turn_start", "assistant.turn_end", "session.shutdown"}


def test_the_header_and_the_model_change_say_who_the_session_is():
    recs = tx.records(tx.COPILOT / "plain.jsonl")
    header, change = copilot.session(recs[0]), copilot.events(recs[1])[0]
    where = tx.paths(tx.COPILOT)["plain.jsonl"]
    assert header is not None and header.data == {
        "agent": "copilot", "session_id": recs[0]["data"]["sessionId"], "cwd": where["cwd"],
        "version": "1.0.102", "model": "mock-model"}
    assert header.data["session_id"] in where["path"]
    assert change.kind == "session_meta" and change.data["model"] == "mock-model"
    assert change.data["session_id"] is None
    assert [copilot.session(r) for r in recs[1:]] == [None] * (len(recs) - 1)


def test_an_approved_call_its_permission_and_its_result():
    evs = read("tool-approved.jsonl")
    assert flow(evs)[2:] == ["user_message", "tool_call", "permission_request", "tool_result",
                             "assistant_text"]
    call = next(e for e in evs if e.kind == "tool_call")
    asked = next(e for e in evs if e.kind == "permission_request")
    result = next(e for e in evs if e.kind == "tool_result")
    assert call.data["name"] == "bash" and call.data["arg_keys"] == ["command", "description"]
    assert call.preview == "echo hi > mockllm-hi.txt"
    assert call.body == ("json", '{"command":"echo hi > mockllm-hi.txt","description":"Print hi"}')
    assert asked.data == {"tool": "shell", "call_id": call.data["call_id"]}
    assert result.data["call_id"] == call.data["call_id"]
    assert (result.data["status"], result.preview) == \
        ("ok", "<shellId: 0 completed with exit code 0>")
    assert [e.body for e in evs if e.kind == "assistant_text"] == [("text", AFTER_TOOL)]


def test_a_denied_call_is_answered_by_the_denial_and_the_turn_ends_interrupted():
    """Esc at the dialog: no tool.execution_complete is written; the permission's answer is
    the call's only outcome, then the abort ends the turn."""
    evs = read("tool-denied.jsonl")
    assert flow(evs)[2:] == ["user_message", "tool_call", "permission_request", "tool_result",
                             "turn_boundary"]
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert result.data["call_id"] == call.data["call_id"]
    assert (result.data["status"], result.body) == ("error", ("text", "cancelled: Session aborted"))
    assert evs[-2].kind == "turn_boundary"  # the shutdown's bookkeeping is last
    assert evs[-2].data == {"boundary": "end", "reason": "interrupted"}
    assert not [e for e in evs if e.kind == "assistant_text"]


def test_a_failed_model_call_ends_the_turn_with_its_error():
    evs = read("error.jsonl")
    assert flow(evs)[2:] == ["user_message", "turn_boundary"]
    end = next(e for e in evs if e.kind == "turn_boundary")
    assert end.data == {"boundary": "end", "reason": "error"}
    assert end.preview == "400 mockllm: scripted HTTP 400"
    assert not [e for e in evs if e.kind == "usage"]  # nothing was used


def test_an_interrupted_reply_ends_its_turn_interrupted():
    """Esc Esc while the slow reply streams: no assistant.message, an abort."""
    evs = read("interrupted.jsonl")
    assert flow(evs)[2:] == ["user_message", "turn_boundary"]
    end = next(e for e in evs if e.kind == "turn_boundary")
    assert (end.data, end.preview) == ({"boundary": "end", "reason": "interrupted"}, "user_abort")


def test_a_call_retried_then_answered_leaves_no_trace_of_its_failed_tries():
    """Two 429s, retried by the CLI, then the reply: nothing in the file says a try failed
    (so a failure record is the turn's own end, not a try's)."""
    evs = read("retried.jsonl")
    assert flow(evs) == ["session_meta", "session_meta", "user_message", "assistant_text"]
    assert next(e for e in evs if e.kind == "assistant_text").body == ("text", PROMPT_TEXT)


def test_a_long_reply_is_one_text_whole_in_its_body():
    evs = read("long.jsonl")
    text = next(e for e in evs if e.kind == "assistant_text")
    assert text.body is not None
    lines = text.body[1].splitlines()
    assert len(lines) == 40 and lines[-1].startswith("Line 40 of a long scripted reply")
    assert text.data["bytes"] == len(text.body[1].encode()) > 2000
    assert text.preview is not None and text.preview.endswith("…")


def test_a_compaction_carries_its_summary_and_its_own_model_call_is_bookkeeping():
    evs = read("compaction.jsonl")
    assert flow(evs)[2:] == ["user_message", "assistant_text", "user_message", "tool_call",
                             "permission_request", "tool_result", "assistant_text",
                             "compaction"]
    done = next(e for e in evs if e.kind == "compaction")
    assert done.data == {"compaction": "summary"} and done.body == ("text", PROMPT_TEXT)
    names = [e.data["type_name"] for e in evs if e.kind == "bookkeeping"]
    assert "session.compaction_start" in names and "model.messages_snapshot" in names


def test_a_drifted_file_is_counted_unknown():
    recs = tx.records(tx.COPILOT / "drifted" / "plain.jsonl")
    unknown = [e.data["type_name"] for r in recs for e in copilot.events(r) if e.kind == "unknown"]
    assert unknown == ["session.usage", "assistant.reply"]


def test_a_denial_with_feedback_is_answered_once_by_the_calls_own_result():
    """"No, and tell Copilot…" with a text: the permission's answer is bookkeeping, the
    failed tool.execution_complete the CLI hands the model is the call's one result, and
    the turn goes on to the model's answer."""
    evs = read("denied-feedback.jsonl")
    assert flow(evs)[2:] == ["user_message", "tool_call", "permission_request", "tool_result",
                             "assistant_text"]
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert result.data["call_id"] == call.data["call_id"]
    assert (result.data["status"], result.preview) == (
        "error", "The user rejected this tool call. User feedback: not now")
    answered = [e for e in evs if e.kind == "bookkeeping"
                and e.data["type_name"] == "permission.completed"]
    assert [e.preview for e in answered] == ["denied-interactively-by-user"]


@pytest.mark.parametrize("name", sorted(tx.paths(tx.COPILOT)))
def test_candidates_find_each_recorded_session_where_copilot_put_it(name, tmp_path):
    where = tx.paths(tx.COPILOT)[name]
    home = tmp_path / "home"
    real = home / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.COPILOT / name).read_bytes())
    session_id = tx.records(real)[0]["data"]["sessionId"]
    patterns = copilot.candidates(session_id, where["cwd"], {"HOME": str(home)})
    assert [p for pat in patterns for p in glob.glob(pat)] == [str(real)]
    moved = tmp_path / "elsewhere"
    assert copilot.candidates(session_id, where["cwd"],
                              {"HOME": str(home), "COPILOT_HOME": str(moved)}) == \
        [f"{moved}/session-state/{session_id}/events.jsonl"]


def test_a_pane_reads_its_session_through_the_registry(tmp_path):
    """The pane names its session (Copilot's hooks carry `sessionId`); the registry's store
    finds the file under the user's HOME, and the surfaces read it."""
    from tma.runtime.transcript import locate as L, read

    where = tx.paths(tx.COPILOT)["tool-approved.jsonl"]
    real = tmp_path / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.COPILOT / "tool-approved.jsonl").read_bytes())
    sid = real.parent.name
    env = {"HOME": str(tmp_path)}
    t = L.Target("%3", "copilot", sid, where["cwd"])
    got = L.locate(t, env, fresh=True)
    assert (got.path, got.how) == (str(real), L.SESSION)
    assert read.last_answer(t, env, 1) == [AFTER_TOOL]
    w = read.window(t, env, last=50)
    assert w.unknown == 0 and w.session is not None and w.session.session_id == sid
    kinds = [e.kind for e in w.events]
    assert kinds.index("assistant_text") < kinds.index("tool_result") < kinds.index("tool_call")

"""Qwen Code 0.24.4's chat recording read as events: each recorded scenario says what
happened in it (tests/fixtures/transcripts/qwen-0.24.4, recorded from the real CLI against
the lab's fake model)."""

from __future__ import annotations

import glob

import pytest

from tests.helpers import recorded_transcripts as tx
from tests.helpers.recorded_transcripts import AFTER_TOOL, PROMPT_TEXT, flow
from tma.core.transcript import qwen


def read(name: str):
    return [e for rec in tx.records(tx.QWEN / name) for e in qwen.events(rec)]


def test_a_plain_reply_and_its_usage():
    evs = read("plain.jsonl")
    assert flow(evs) == ["user_message", "assistant_text"]
    assert [e.preview for e in evs if e.kind in ("user_message", "assistant_text")] == \
        ["Say hello please", PROMPT_TEXT]
    usage = next(e for e in evs if e.kind == "usage")
    assert usage.data == {"input": 100, "output": 20, "total": 120, "context_window": None,
                          "cost_usd": None}
    assert {e.data["type_name"] for e in evs if e.kind == "bookkeeping"} == {
        "system.attribution_snapshot", "system.file_history_snapshot", "system.ui_telemetry"}


def test_every_record_says_whose_session_it_is():
    where = tx.paths(tx.QWEN)["plain.jsonl"]
    sid = where["path"].rsplit("/", 1)[-1].removesuffix(".jsonl")
    metas = [qwen.session(r) for r in tx.records(tx.QWEN / "plain.jsonl")]
    assert all(m is not None for m in metas)
    assert {(m.data["agent"], m.data["session_id"], m.data["cwd"], m.data["version"])
            for m in metas if m is not None} == {("qwen", sid, where["cwd"], "0.24.4")}
    assert {m.data["model"] for m in metas if m is not None} == {None, "mock-model"}


def test_an_approved_call_and_its_result():
    evs = read("tool-approved.jsonl")
    assert flow(evs) == ["user_message", "tool_call", "tool_result", "assistant_text"]
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert call.data["name"] == "run_shell_command"
    assert call.data["arg_keys"] == ["command", "description"]
    assert call.preview == "echo hi > mockllm-hi.txt"
    assert result.data["call_id"] == call.data["call_id"] is not None
    assert result.data["status"] == "ok"
    assert result.body is not None and result.body[1].startswith(
        "Command: echo hi > mockllm-hi.txt\n")
    assert "Exit Code: 0" in result.body[1]
    assert [e.body for e in evs if e.kind == "assistant_text"] == [("text", AFTER_TOOL)]


def test_a_denied_call_is_answered_cancelled():
    evs = read("tool-denied.jsonl")
    assert flow(evs) == ["user_message", "tool_call", "tool_result"]
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert result.data["call_id"] == call.data["call_id"]
    assert (result.data["status"], result.preview) == \
        ("error", "[Operation Cancelled] Reason: User did not allow tool call")


def test_a_failed_model_call_ends_the_turn_with_its_error():
    evs = read("error.jsonl")
    assert flow(evs) == ["user_message", "turn_boundary"]
    end = next(e for e in evs if e.kind == "turn_boundary")
    assert end.data == {"boundary": "end", "reason": "error"}
    assert end.preview == "400 mockllm: scripted HTTP 400"


def test_a_call_retried_then_answered_leaves_no_trace_of_its_failed_tries():
    """Two 429s, retried by the CLI, then the reply: nothing in the file says a try failed
    (so a failure record is the turn's own end, not a try's)."""
    evs = read("retried.jsonl")
    assert flow(evs) == ["user_message", "assistant_text"]
    assert next(e for e in evs if e.kind == "assistant_text").body == ("text", PROMPT_TEXT)


def test_a_long_reply_is_one_text_whole_in_its_body():
    evs = read("long.jsonl")
    text = next(e for e in evs if e.kind == "assistant_text")
    assert text.body is not None
    lines = text.body[1].splitlines()
    assert len(lines) == 40 and lines[-1].startswith("Line 40 of a long scripted reply")
    assert text.data["bytes"] == len(text.body[1].encode()) > 2000
    assert [e.kind for e in evs if e.kind == "usage"] == ["usage"]  # the reply finished


def test_an_interrupted_reply_is_kept_as_far_as_it_came():
    """Esc while the slow reply streams: the reply so far, without usage; Qwen writes
    nothing that marks the interruption."""
    evs = read("interrupted.jsonl")
    assert flow(evs) == ["user_message", "assistant_text"]
    text = next(e for e in evs if e.kind == "assistant_text")
    assert text.preview is not None and text.preview.startswith("Working slowly")
    assert not [e for e in evs if e.kind == "usage"]


def test_a_compression_is_the_compaction_with_its_summary():
    evs = read("compaction.jsonl")
    assert flow(evs) == ["user_message", "assistant_text", "user_message", "tool_call",
                         "tool_result", "assistant_text", "compaction"]
    done = next(e for e in evs if e.kind == "compaction")
    assert done.data == {"compaction": "summary"}
    assert done.body is not None and done.body[1].startswith(PROMPT_TEXT + "\n\n")
    slash = [e.preview for e in evs if e.kind == "bookkeeping"
             and e.data["type_name"] == "system.slash_command"]
    assert slash == ["/compress", "/compress"]


def test_a_drifted_file_is_counted_unknown():
    recs = tx.records(tx.QWEN / "drifted" / "plain.jsonl")
    unknown = [e.data["type_name"] for r in recs for e in qwen.events(r) if e.kind == "unknown"]
    assert unknown == ["system.file_snapshot", "model"]


def test_record_kinds_named_from_the_source_map_without_a_recording():
    turn = qwen.events({"type": "system", "subtype": "turn_result", "systemPayload": {
        "promptId": "p", "state": "error", "endedAt": 1, "error": {"message": "boom"}}})
    assert [(e.kind, e.data, e.preview) for e in turn] == [
        ("turn_boundary", {"boundary": "end", "reason": "error"}, "boom")]
    model = qwen.events({"type": "system", "subtype": "session_model",
                         "systemPayload": {"modelId": "qwen3-coder", "authType": "openai"}})
    assert [(e.kind, e.data["model"]) for e in model] == [("session_meta", "qwen3-coder")]
    mid = qwen.events({"type": "user", "subtype": "mid_turn_user_message",
                       "message": {"role": "user", "parts": [{"text": "expanded"}]},
                       "systemPayload": {"displayText": "as typed"}})
    assert [(e.kind, e.preview) for e in mid] == [("user_message", "as typed")]
    thought = qwen.events({"type": "assistant", "message": {"role": "model", "parts": [
        {"text": "hmm", "thought": True}, {"text": "answer"}]}, "contextWindowSize": 131072,
        "usageMetadata": {"promptTokenCount": 5}})
    assert [e.kind for e in thought] == ["thinking", "assistant_text", "usage"]
    assert thought[2].data["context_window"] == 131072


@pytest.mark.parametrize("name", sorted(tx.paths(tx.QWEN)))
def test_candidates_find_each_recorded_session_where_qwen_put_it(name, tmp_path):
    where = tx.paths(tx.QWEN)[name]
    home = tmp_path / "home"
    real = home / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.QWEN / name).read_bytes())
    session_id = tx.records(real)[0]["sessionId"]
    patterns = qwen.candidates(session_id, where["cwd"], {"HOME": str(home)})
    assert glob.glob(patterns[0]) == [str(real)]
    assert glob.glob(patterns[-1]) == [str(real)]  # the scan of every project finds it too
    moved = tmp_path / "qh"
    assert qwen.candidates(session_id, where["cwd"], {"HOME": str(home),
                                                      "QWEN_HOME": str(moved)})[0] \
        == f"{moved}/projects/{qwen.slug(where['cwd'])}/chats/{session_id}.jsonl"
    runtime = tmp_path / "rt"
    assert qwen.candidates(session_id, where["cwd"], {"QWEN_HOME": str(moved),
                                                      "QWEN_RUNTIME_DIR": str(runtime)})[0] \
        .startswith(f"{runtime}/projects/")


def test_the_project_directory_name_is_qwens():
    assert qwen.slug("/tmp/tma-txcq/work-qwen") == "-tmp-tma-txcq-work-qwen"
    assert qwen.slug("/home/u/my.proj_2") == "-home-u-my-proj-2"


def test_a_pane_reads_its_session_through_the_registry(tmp_path):
    """Qwen's hooks name the file (`transcript_path`); without it, the session id and the
    pane's directory find it under the user's HOME."""
    from tma.runtime.transcript import locate as L, read

    where = tx.paths(tx.QWEN)["tool-approved.jsonl"]
    real = tmp_path / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.QWEN / "tool-approved.jsonl").read_bytes())
    sid = real.name.removesuffix(".jsonl")
    env = {"HOME": str(tmp_path)}
    by_session = L.Target("%5", "qwen", sid, where["cwd"])
    got = L.locate(by_session, env, fresh=True)
    assert (got.path, got.how) == (str(real), L.SESSION)
    by_hook = L.Target("%5", "qwen", sid, where["cwd"], str(real))
    assert L.locate(by_hook, env).how == L.HOOK
    assert read.last_answer(by_hook, env, 1) == [AFTER_TOOL]
    w = read.window(by_hook, env, last=50)
    assert w.unknown == 0 and w.session is not None
    assert (w.session.agent, w.session.session_id, w.session.cwd) == ("qwen", sid, where["cwd"])

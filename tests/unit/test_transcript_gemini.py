"""Gemini CLI 0.61's session JSONL read as events: each recorded scenario says what
happened in it (tests/fixtures/transcripts/gemini-0.61.0, recorded from the real CLI)."""

from __future__ import annotations

import glob
import os

import pytest

from tests.helpers import recorded_transcripts as tx
from tests.helpers.recorded_transcripts import AFTER_TOOL, PROMPT_TEXT
from tma.core.transcript import gemini


def read(name: str):
    return [e for rec in tx.records(tx.GEMINI / name) for e in gemini.events(rec)]


def shown(events, *, skip=("bookkeeping", "usage")):
    """(kind, preview) of the events a reader shows, in order."""
    return [(e.kind, e.preview) for e in events if e.kind not in skip]


def test_a_plain_reply():
    evs = read("plain.jsonl")
    assert evs[0].kind == "session_meta" and evs[0].data["agent"] == "gemini"
    assert shown(evs)[1:] == [("user_message", "Say hello please"),
                              ("assistant_text", PROMPT_TEXT)]
    usage = [e.data for e in evs if e.kind == "usage"]
    assert usage == [{"input": 100, "output": 20, "total": 120, "context_window": None,
                      "cost_usd": None}]


def test_the_session_meta_is_the_header_and_names_the_session():
    first = tx.records(tx.GEMINI / "plain.jsonl")[0]
    meta = gemini.session(first)
    assert meta is not None and meta.data["session_id"] == first["sessionId"]
    assert meta.ts == first["startTime"]
    assert [gemini.session(r) for r in tx.records(tx.GEMINI / "plain.jsonl")[1:]] == \
        [None] * (len(tx.records(tx.GEMINI / "plain.jsonl")) - 1)


def test_an_approved_tool_call_and_its_result():
    evs = read("tool-approved.jsonl")
    assert [k for k, _ in shown(evs)][1:] == ["user_message", "assistant_text", "tool_call",
                                              "tool_result", "assistant_text"]
    call, result = [e for e in evs if e.kind in ("tool_call", "tool_result")]
    assert call.data["name"] == "run_shell_command"
    assert call.data["arg_keys"] == ["command", "description"]
    assert call.preview == "echo hi > mockllm-hi.txt"
    assert call.body is not None and call.body[0] == "json"
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "ok"
    # the text before the call is given once: its rewrite with the calls added gives the calls
    assert [e.preview for e in evs if e.kind == "assistant_text"] == ["I will run a command.",
                                                                       AFTER_TOOL]
    # the results handed back to the model restate the call's result: bookkeeping
    assert "user.functionResponse" in [e.data.get("type_name") for e in evs]


def test_a_denied_tool_call_is_an_error_result_and_the_turn_stops():
    evs = read("tool-denied.jsonl")
    assert [k for k, _ in shown(evs)][1:] == ["user_message", "assistant_text", "tool_call",
                                              "tool_result"]
    result = next(e for e in evs if e.kind == "tool_result")
    assert result.data["status"] == "error"
    assert "User denied execution" in (result.preview or "")
    # what the CLI printed, and its history rebuilt without the cancelled turn
    names = [e.data.get("type_name") for e in evs if e.kind == "bookkeeping"]
    assert "info" in names and "user.session_context" in names
    assert [e.preview for e in evs if e.kind == "user_message"] == ["Please RUNTOOL now"]


def test_a_question_is_the_ask_user_call_and_the_answer_its_result():
    evs = read("question.jsonl")
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert call.data["name"] == "ask_user" and call.data["arg_keys"] == ["questions"]
    assert "Which colour should the button be" in call.body[1]
    assert result.data["status"] == "ok" and "Red" in (result.preview or "")


def test_thinking_comes_before_the_answer():
    evs = read("thinking.jsonl")
    assert [k for k, _ in shown(evs)][1:] == ["user_message", "thinking", "assistant_text"]
    thought = next(e for e in evs if e.kind == "thinking")
    assert thought.data["redacted"] is False
    assert thought.preview == "Thinking it over the user wants a greeting"


def test_a_failed_request_is_what_the_cli_printed():
    evs = read("error.jsonl")
    assert [k for k, _ in shown(evs)][1:] == ["user_message"]
    printed = [(e.data["type_name"], e.preview) for e in evs
               if e.kind == "bookkeeping" and e.data["type_name"] in ("error", "info")]
    assert printed[0][0] == "error" and "scripted HTTP 400" in printed[0][1]


def test_a_subagent_is_named_by_its_call_and_has_a_session_of_its_own():
    evs = read("subagent.jsonl")
    call = next(e for e in evs if e.kind == "tool_call")
    assert call.data["name"] == "invoke_agent"
    ref = next(e for e in evs if e.kind == "subagent_ref")
    child = tx.records(tx.GEMINI / "subagent-child.jsonl")
    assert ref.data == {"child_id": child[0]["sessionId"], "external_file": True}
    child_evs = [e for rec in child for e in gemini.events(rec)]
    meta = child_evs[0]
    assert meta.kind == "session_meta" and meta.data["cwd"] == tx.paths(tx.GEMINI)[
        "subagent-child.jsonl"]["cwd"]
    assert [e.data["name"] for e in child_evs if e.kind == "tool_call"] == ["complete_task"]


def test_a_compression_is_the_compaction_and_carries_its_summary():
    evs = read("compaction.jsonl")
    comps = [e for e in evs if e.kind == "compaction"]
    assert len(comps) == 1
    assert comps[0].data == {"compaction": "summary"}
    # the fake model's summary is its quick reply
    assert comps[0].body == ("text", PROMPT_TEXT)
    # the other two history rewrites (the first context) are not compactions
    assert [e.data["type_name"] for e in evs if e.kind == "bookkeeping"
            and "messages" in e.data["type_name"]] == ["$set.lastUpdated,messages"]


def test_the_older_single_document_form_is_refused_by_name():
    assert gemini.refusal("session-2025-09-01T10-00-abcdef12.json") == gemini.LEGACY_REFUSAL
    assert gemini.refusal("/x/chats/session-2026-12-06T20-38-5cb6d339.jsonl") is None
    assert "session-*.json" in gemini.LEGACY_REFUSAL


@pytest.mark.parametrize("name", sorted(tx.paths(tx.GEMINI)))
def test_candidates_find_each_recorded_session_where_the_cli_put_it(name, tmp_path):
    where = tx.paths(tx.GEMINI)[name]
    home = tmp_path / "home"
    real = home / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.GEMINI / name).read_bytes())
    session_id = tx.records(real)[0]["sessionId"]
    patterns = gemini.candidates(session_id, where["cwd"], {"HOME": str(home)})
    found = [p for p in patterns if glob.glob(p)]
    assert found, patterns
    assert glob.glob(found[0]) == [str(real)]
    if name.endswith("-child.jsonl"):  # a subagent's: under its parent's directory
        assert found[0].endswith(f"/*/{session_id}.jsonl")
    else:  # the slug of the working directory's name
        assert found[0] == patterns[0]
    assert gemini.candidates(session_id, where["cwd"], {"HOME": "/elsewhere",
                                                        "GEMINI_CLI_HOME": str(home)}) == patterns


def test_the_project_slug_is_the_clis():
    assert gemini.slug("work-gemini") == "work-gemini"
    assert gemini.slug("My Project.v2") == "my-project-v2"
    assert gemini.slug("--") == "project"
    assert os.path.basename(tx.paths(tx.GEMINI)["plain.jsonl"]["cwd"]) == \
        tx.paths(tx.GEMINI)["plain.jsonl"]["path"].split("/")[2]

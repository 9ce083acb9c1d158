"""pi 0.73's session JSONL read as events: each recorded scenario says what happened in it
(tests/fixtures/transcripts/pi-0.73.1, recorded from the real CLI)."""

from __future__ import annotations

import glob

import pytest

from tests.helpers import recorded_transcripts as tx
from tests.helpers.recorded_transcripts import PROMPT_TEXT, flow
from tma.core.transcript import pi


def read(name: str):
    return [e for rec in tx.records(tx.PI / name) for e in pi.events(rec)]


def test_a_plain_reply_ends_its_turn():
    evs = read("plain.jsonl")
    assert flow(evs) == ["session_meta", "session_meta", "user_message", "assistant_text",
                         "turn_boundary"]
    assert [e.preview for e in evs if e.kind in ("user_message", "assistant_text")] == \
        ["Say hello please", PROMPT_TEXT]
    end = evs[-1]
    assert end.kind == "turn_boundary" and end.data == {"boundary": "end", "reason": "stop"}
    usage = next(e for e in evs if e.kind == "usage")
    assert usage.data == {"input": 100, "output": 20, "total": 120, "context_window": None,
                          "cost_usd": 0.0}


def test_the_header_and_the_model_change_say_who_the_session_is():
    recs = tx.records(tx.PI / "plain.jsonl")
    header, change = pi.session(recs[0]), pi.session(recs[1])
    assert header is not None and header.data["session_id"] == recs[0]["id"]
    assert header.data["cwd"] == tx.paths(tx.PI)["plain.jsonl"]["cwd"]
    assert change is not None and change.data["model"] == "mock/mock-model"
    assert change.data["session_id"] is None
    assert [pi.session(r) for r in recs[2:]] == [None] * (len(recs) - 2)


@pytest.mark.parametrize("name,status,said", [("tool-approved.jsonl", "ok", "(no output)"),
                                              ("tool-denied.jsonl", "error", "Denied in agentlab")])
def test_a_tool_result_comes_under_its_own_role(name, status, said):
    evs = read(name)
    assert flow(evs)[2:] == ["user_message", "tool_call", "tool_result", "assistant_text",
                             "turn_boundary"]
    call = next(e for e in evs if e.kind == "tool_call")
    result = next(e for e in evs if e.kind == "tool_result")
    assert call.data["name"] == "bash" and call.data["arg_keys"] == ["command"]
    assert call.preview == "echo hi > mockllm-hi.txt"
    assert result.data["call_id"] == call.data["call_id"]
    assert (result.data["status"], result.preview) == (status, said)


def test_thinking_comes_before_the_answer():
    evs = read("thinking.jsonl")
    assert flow(evs)[2:] == ["user_message", "thinking", "assistant_text", "turn_boundary"]
    thought = next(e for e in evs if e.kind == "thinking")
    assert thought.preview == "the user wants a greeting"
    assert thought.data["redacted"] is False


def test_every_failed_attempt_ends_its_turn_with_the_error():
    evs = read("error.jsonl")
    ends = [e for e in evs if e.kind == "turn_boundary"]
    assert len(ends) >= 2  # pi retries before it gives up
    assert {(e.data["reason"], e.preview) for e in ends} == {
        ("error", "500 mockllm: scripted HTTP 500")}
    assert not [e for e in evs if e.kind == "usage"]  # nothing was used


def test_a_named_session_a_bang_command_and_an_aborted_turn():
    evs = read("extras.jsonl")
    assert [(e.data["type_name"], e.preview) for e in evs if e.kind == "bookkeeping"
            and e.data["type_name"] == "session_info"] == [("session_info", "lab session")]
    call, result = [e for e in evs if e.kind in ("tool_call", "tool_result")]
    assert (call.data["name"], call.preview) == ("bash", "echo bang")
    assert (result.data["status"], result.preview) == ("ok", "bang")
    assert call.data["call_id"] == result.data["call_id"] is not None
    end = [e for e in evs if e.kind == "turn_boundary"][-1]
    assert end.data == {"boundary": "end", "reason": "aborted"}
    assert end.preview == "Operation aborted"


def test_a_compaction_carries_its_summary():
    evs = read("compaction.jsonl")
    assert evs[-1].kind == "compaction"
    assert evs[-1].data == {"compaction": "summary"}
    assert evs[-1].body == ("text", PROMPT_TEXT)
    assert flow(evs).count("turn_boundary") == 2


@pytest.mark.parametrize("name", sorted(tx.paths(tx.PI)))
def test_candidates_find_each_recorded_session_where_pi_put_it(name, tmp_path):
    where = tx.paths(tx.PI)[name]
    home = tmp_path / "home"
    real = home / where["path"]
    real.parent.mkdir(parents=True)
    real.write_bytes((tx.PI / name).read_bytes())
    session_id = tx.records(real)[0]["id"]
    patterns = pi.candidates(session_id, where["cwd"], {"HOME": str(home)})
    assert glob.glob(patterns[0]) == [str(real)]
    moved = tmp_path / "agent"
    assert pi.candidates(session_id, where["cwd"], {"HOME": str(home),
                                                    "PI_CODING_AGENT_DIR": str(moved)})[0] \
        == str(moved / "sessions" / pi.slug(where["cwd"]) / f"*_{session_id}.jsonl")


def test_the_session_directory_name_is_pis():
    assert pi.slug("/tmp/lab/work-pi") == "--tmp-lab-work-pi--"
    assert pi.slug("C:\\src\\x") == "--C--src-x--"

"""tma.core.transcript.codex over Codex's own rollouts, recorded from 0.171.0
(tests/fixtures/transcripts): every record maps to a known kind, a drifted event is
counted, each scenario reads as what happened, the turns Codex writes twice give each fact
once, and `events` is a pure function of one record."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers import transcripts as tx
from tma.core.proto import EVENT_KINDS
from tma.core.transcript import codex
from tma.core.transcript.event import KINDS, Event

KEYS = tx.keys("codex")
FILES = tx.files("codex")
RECORDS = [r for p in FILES for r in tx.records(p)]


def read(key: str, name: str) -> list[Event]:
    (path,) = tx.scenario(key, name)
    return tx.read(codex.events, path)


def test_the_pinned_version_is_recorded():
    assert KEYS == ["codex-0.171.0"]
    assert {p.parent.name for p in (tx.ROOT / KEYS[0]).glob("*/*.jsonl")} == {
        "plain", "tool-approved", "tool-denied", "question", "compact", "subagent", "thinking"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(tx.ROOT)))
def test_every_recorded_record_maps_to_a_known_kind(path):
    evs = tx.read(codex.events, path)
    assert evs
    assert Counter(e.kind for e in evs)["unknown"] == 0, [e.data for e in tx.of(evs, "unknown")]
    for e in evs:
        assert list(e.data) == list(EVENT_KINDS[e.kind])


def test_a_renamed_event_is_counted_unknown():
    path = tx.DRIFTED / "codex-0.171.0-plain.jsonl"
    renamed = [r for r in tx.records(path) if r["payload"].get("type") == "token_usage"]
    evs = tx.read(codex.events, path)
    unknown = tx.of(evs, "unknown")
    assert renamed and len(unknown) == len(renamed)
    assert {e.data["type_name"] for e in unknown} == {"event_msg/token_usage"}
    assert not tx.of(evs, "usage")  # the usage was in the renamed events


@pytest.mark.parametrize("key", KEYS)
def test_the_header_is_the_session(key):
    for path in sorted((tx.ROOT / key).rglob("*.jsonl")):
        header = tx.records(path)[0]
        meta = codex.session(header)
        assert meta is not None and codex.events(header) == [meta]
        assert meta.data["agent"] == "codex" and meta.data["version"] == "0.171.0"
        assert meta.data["cwd"] == tx.manifest(key)["cwd"]
        assert path.stem.endswith(meta.data["session_id"])  # the id in the file's name
        assert meta.ts == header["timestamp"]
        # no other record says who the session is
        assert [codex.session(r) for r in tx.records(path)[1:]] == [None] * (
            len(tx.records(path)) - 1)


@pytest.mark.parametrize("key", KEYS)
def test_a_plain_reply(key):
    evs = read(key, "plain")
    assert [e.preview for e in tx.of(evs, "user_message")] == ["Please say hello"]
    assert [tx.text(e) for e in tx.of(evs, "assistant_text")] == [tx.QUICK]
    bounds = [e.data for e in tx.of(evs, "turn_boundary")]
    assert bounds == [{"boundary": "start", "reason": None},
                      {"boundary": "end", "reason": "completed"}]
    (usage,) = tx.of(evs, "usage")
    assert usage.data == {"input": 100, "output": 20, "total": 120, "context_window": 258400,
                          "cost_usd": None}
    assert all(e.ts for e in evs)


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_call_approved(key):
    evs = read(key, "tool-approved")
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "exec_command"
    assert call.data["arg_keys"] == ["cmd", "sandbox_permissions", "justification"]
    assert call.preview == tx.COMMAND and json.loads(tx.text(call))["cmd"] == tx.COMMAND
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "ok"
    assert "Process exited with code 0" in tx.text(result)
    assert [tx.text(e) for e in tx.of(evs, "assistant_text")] == [tx.AFTER_TOOL]
    assert evs.index(call) < evs.index(result) < evs.index(tx.of(evs, "assistant_text")[0])


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_call_denied(key):
    evs = read(key, "tool-denied")
    (call,) = tx.of(evs, "tool_call")
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "error"
    assert "aborted by user" in tx.text(result)
    assert tx.of(evs, "turn_boundary")[-1].data == {"boundary": "end", "reason": "interrupted"}
    assert not tx.of(evs, "assistant_text")
    # the notice Codex puts in the model's context is context, once
    (notice,) = [e for e in tx.of(evs, "attachment")
                 if e.data["attachment"] == "generic.turn_aborted"]
    assert "interrupted the previous turn" in tx.text(notice)


@pytest.mark.parametrize("key", KEYS)
def test_a_question(key):
    evs = read(key, "question")
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "request_user_input" and call.data["arg_keys"] == ["questions"]
    asked = json.loads(tx.text(call))["questions"][0]
    assert asked["question"] == "Which colour should the button be?"
    (answer,) = tx.of(evs, "tool_result")
    assert answer.data["call_id"] == call.data["call_id"] and answer.data["status"] == "ok"
    assert json.loads(tx.text(answer)) == {"answers": {"colour": {"answers": ["Red"]}}}


@pytest.mark.parametrize("key", KEYS)
def test_a_compaction(key):
    evs = read(key, "compact")
    (compaction,) = tx.of(evs, "compaction")
    assert "summary produced by the other language model" in tx.text(compaction)
    assert tx.text(compaction).endswith(tx.QUICK)  # the fake model's summary
    prompts = [e.preview for e in tx.of(evs, "user_message")]
    assert prompts == ["Please say hello (1)", "Please say hello (2)", "Please say hello (3)",
                       "RUNTOOL please write the file"]
    # the summary the model wrote for the compaction is not a reply to the user
    assert [tx.text(e) for e in tx.of(evs, "assistant_text")] == [tx.QUICK] * 3 + [tx.AFTER_TOOL]
    assert evs.index(tx.of(evs, "assistant_text")[-1]) < evs.index(compaction)


@pytest.mark.parametrize("key", KEYS)
def test_a_subagent(key):
    parent, child = tx.scenario(key, "subagent")
    evs = tx.read(codex.events, parent)
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "spawn_agent" and call.preview == "Please say hello"
    (ref,) = tx.of(evs, "subagent_ref")
    assert ref.data["external_file"] is True
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "ok"
    assert json.loads(tx.text(result))["agent_id"] == ref.data["child_id"]
    # the child is a rollout of its own: its header names it, its turn is the child's
    kid = tx.read(codex.events, child)
    assert kid[0].kind == "session_meta" and kid[0].data["session_id"] == ref.data["child_id"]
    assert child.stem.endswith(ref.data["child_id"])
    assert [e.preview for e in tx.of(kid, "user_message")] == ["Please say hello"]
    assert [tx.text(e) for e in tx.of(kid, "assistant_text")] == [tx.QUICK]


@pytest.mark.parametrize("key", KEYS)
def test_thinking(key):
    evs = read(key, "thinking")
    (thought,) = tx.of(evs, "thinking")
    assert thought.data == {"bytes": len(tx.THINK), "redacted": False}
    assert tx.text(thought) == tx.THINK
    (reply,) = tx.of(evs, "assistant_text")
    assert evs.index(thought) < evs.index(reply)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(tx.ROOT)))
def test_each_doubled_fact_comes_once(path):
    """Codex writes a turn to both streams: each fact's events match ONE stream's records,
    and the other stream's copy is bookkeeping."""
    recs = tx.records(path)
    evs = tx.read(codex.events, path)

    def items(kind):
        return [r["payload"]["item"] for r in recs if r["type"] == "event_msg"
                and r["payload"]["type"] == "item_completed"
                and r["payload"]["item"]["type"] == kind]

    def responses(kind, role=None):
        return [r["payload"] for r in recs if r["type"] == "response_item"
                and r["payload"]["type"] == kind and role in (None, r["payload"].get("role"))]

    said = [c["text"] for i in items("AgentMessage") for c in i["content"]]
    assert [tx.text(e) for e in tx.of(evs, "assistant_text")] == said
    typed = [c["text"] for i in items("UserMessage") for c in i["content"]]
    assert [tx.text(e) for e in tx.of(evs, "user_message")] == typed
    assert len(tx.of(evs, "thinking")) == len(items("Reasoning")) == len(responses("reasoning"))
    calls = [p["call_id"] for p in responses("function_call")]
    assert [e.data["call_id"] for e in tx.of(evs, "tool_call")] == calls
    assert [e.data["call_id"] for e in tx.of(evs, "tool_result")] == [
        p["call_id"] for p in responses("function_call_output")]
    counts = [r for r in recs if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
              and (r["payload"].get("info") or {}).get("last_token_usage")]
    assert len(tx.of(evs, "usage")) == len(counts)
    # the doubles are there, and are bookkeeping
    doubles = [r for r in recs if r["type"] == "token_usage_record"
               or (r["type"] == "response_item" and r["payload"].get("role") == "assistant")]
    assert doubles and all(codex.events(r)[0].kind == "bookkeeping" for r in doubles)
    if said:
        assert len(responses("message", "assistant")) >= len(said)


def test_an_approval_request_is_a_permission_request():
    """Codex 0.171.0 does not write its approval requests to the rollout (the fixtures'
    README): this record is built by hand in the shape of its `exec_approval_request`
    event, around the recorded call it would have asked about."""
    (path,) = tx.scenario(KEYS[0], "tool-approved")
    call = next(r for r in tx.records(path) if r["payload"].get("type") == "function_call")
    asked = {"timestamp": call["timestamp"], "type": "event_msg",
             "payload": {"type": "exec_approval_request", "call_id": call["payload"]["call_id"],
                         "turn_id": "t", "command": ["/bin/bash", "-lc", tx.COMMAND],
                         "cwd": tx.manifest(KEYS[0])["cwd"], "parsed_cmd": []}}
    (e,) = codex.events(asked)
    assert e.kind == "permission_request" and e.ts == call["timestamp"]
    assert e.data == {"tool": "exec_command", "call_id": call["payload"]["call_id"]}


# --- where the file is --------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_candidates_match_the_recorded_paths_only(key):
    m = tx.manifest(key)
    assert len(m["files"]) == 8
    for rel, written in m["files"].items():
        sid = codex.session(tx.records(tx.ROOT / key / rel)[0]).data["session_id"]
        for env in (m["env"], {"HOME": m["home"]}):  # CODEX_HOME, or its default
            (pattern,) = codex.candidates(sid, m["cwd"], env)
            assert PurePosixPath(written).match(pattern)
            others = [w for w in m["files"].values() if w != written]
            assert not any(PurePosixPath(w).match(pattern) for w in others)
    assert codex.candidates("x", m["cwd"], {}) == []
    assert codex.candidates("*", m["cwd"], {"HOME": m["home"]}) == []


# --- purity --------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=20)
PAYLOAD_FIELDS = ("type", "item", "content", "role", "output", "arguments", "info", "message",
                  "internal_chat_message_metadata_passthrough", "receiver_thread_ids", "id")


@st.composite
def drifted_records(draw):
    """A recorded record with its type, or one field of its payload (or of the payload's
    item), replaced by any JSON."""
    r = copy.deepcopy(draw(st.sampled_from(RECORDS)))
    field = draw(st.sampled_from(("type", "payload") + PAYLOAD_FIELDS))
    if field in ("type", "payload"):
        r[field] = draw(JSON)
    elif field in ("content", "receiver_thread_ids") and isinstance(r["payload"].get("item"), dict):
        r["payload"]["item"][field] = draw(JSON)
    else:
        r["payload"][field] = draw(JSON)
    return r


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RECORDS), st.lists(st.sampled_from(RECORDS), max_size=5))
def test_events_is_a_pure_function_of_one_record(record, others):
    before = copy.deepcopy(record)
    first = codex.events(record)
    for other in others:  # reading other records in between changes nothing
        codex.events(other)
    assert codex.events(record) == first
    assert codex.events(copy.deepcopy(record)) == first
    assert record == before  # nor does reading change the record


@settings(max_examples=300, deadline=None)
@given(st.one_of(drifted_records(),
                 st.dictionaries(st.sampled_from(("type", "payload", "timestamp")), JSON)))
def test_any_record_gives_known_kinds_never_an_error(record):
    for e in codex.events(record):
        assert e.kind in KINDS and list(e.data) == list(KINDS[e.kind])
        assert e.preview is None or (len(e.preview) <= 80 and "\n" not in e.preview)
    meta = codex.session(record)
    assert meta is None or meta.kind == "session_meta"

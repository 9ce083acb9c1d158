"""tma.core.transcript.claude over Claude Code's own transcripts, recorded from 2.1.197 and
2.1.332 (tests/fixtures/transcripts): every record maps to a known kind, a drifted record
type is counted, each scenario reads as what happened, and `events` is a pure function of
one record."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import PurePosixPath

import pytest
from hypothesis import example, given, settings, strategies as st

from tests.helpers import transcripts as tx
from tma.core.proto import EVENT_KINDS
from tma.core.transcript import claude
from tma.core.transcript.event import KINDS, Event

KEYS = tx.keys("claude")
FILES = tx.files("claude")
RECORDS = [r for p in FILES for r in tx.records(p)]


def read(key: str, name: str) -> list[Event]:
    (path,) = tx.scenario(key, name)
    return tx.read(claude.events, path)


def test_both_pinned_versions_are_recorded():
    assert KEYS == ["claude-2.1.197", "claude-2.1.332"]
    for key in KEYS:
        assert {p.parent.name for p in (tx.ROOT / key).glob("*/*.jsonl")} == {
            "plain", "tool-approved", "tool-denied", "question", "compact", "subagent",
            "thinking"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(tx.ROOT)))
def test_every_recorded_record_maps_to_a_known_kind(path):
    evs = tx.read(claude.events, path)
    assert evs
    assert Counter(e.kind for e in evs)["unknown"] == 0, [e.data for e in tx.of(evs, "unknown")]
    for e in evs:
        assert list(e.data) == list(EVENT_KINDS[e.kind])


def test_a_renamed_record_type_is_counted_unknown():
    path = tx.DRIFTED / "claude-2.1.332-plain.jsonl"
    renamed = [r for r in tx.records(path) if r.get("type") == "assistant-turn"]
    evs = tx.read(claude.events, path)
    unknown = tx.of(evs, "unknown")
    assert renamed and len(unknown) == len(renamed)
    assert {e.data["type_name"] for e in unknown} == {"assistant-turn"}
    assert not tx.of(evs, "assistant_text")  # the reply was in the renamed records


@pytest.mark.parametrize("key", KEYS)
def test_a_plain_reply(key):
    evs = read(key, "plain")
    (prompt,) = tx.of(evs, "user_message")
    assert prompt.preview == "Please say hello" and prompt.data["attachments"] == 0
    (reply,) = tx.of(evs, "assistant_text")
    assert tx.text(reply) == tx.QUICK and reply.data["bytes"] == len(tx.QUICK)
    assert evs.index(prompt) < evs.index(reply)
    (end,) = tx.of(evs, "turn_boundary")
    assert end.data == {"boundary": "end", "reason": "completed"}
    assert evs.index(reply) < evs.index(end)
    assert tx.of(evs, "usage")[0].data == {"input": 100, "output": 20, "total": 120,
                                          "context_window": None, "cost_usd": None}
    assert all(e.ts for e in evs if e.kind != "bookkeeping")


@pytest.mark.parametrize("key", KEYS)
def test_the_session_is_named_by_its_records(key):
    (path,) = tx.scenario(key, "plain")
    metas = [m for m in map(claude.session, tx.records(path)) if m is not None]
    assert metas
    want = {"agent": "claude", "session_id": path.stem, "cwd": tx.manifest(key)["cwd"],
            "version": key.split("-", 1)[1]}
    for m in metas:
        assert {k: m.data[k] for k in want} == want
    models = {m.data["model"] for m in metas} - {None}
    assert len(models) == 1 and next(iter(models)).startswith("claude-")
    # the sidecars name the session only: no session_meta from them
    assert claude.session(next(r for r in tx.records(path) if r["type"] == "mode")) is None


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_call_approved(key):
    evs = read(key, "tool-approved")
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "Bash" and call.data["arg_keys"] == ["command", "description"]
    assert call.preview == tx.COMMAND and json.loads(tx.text(call))["command"] == tx.COMMAND
    assert call.body[0] == "json" and call.data["bytes"] == len(tx.text(call))
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "ok"
    assert evs.index(call) < evs.index(result)
    assert tx.text(tx.of(evs, "assistant_text")[-1]) == tx.AFTER_TOOL


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_call_denied(key):
    evs = read(key, "tool-denied")
    (call,) = tx.of(evs, "tool_call")
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "error"
    assert "rejected" in tx.text(result)
    (end,) = tx.of(evs, "turn_boundary")
    assert end.data == {"boundary": "end", "reason": "interrupted"}
    assert evs.index(result) < evs.index(end)
    assert tx.AFTER_TOOL not in [tx.text(e) for e in tx.of(evs, "assistant_text")]


@pytest.mark.parametrize("key", KEYS)
def test_a_question(key):
    evs = read(key, "question")
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "AskUserQuestion" and call.data["arg_keys"] == ["questions"]
    asked = json.loads(tx.text(call))["questions"][0]
    assert asked["question"] == "Which colour should the button be?"
    (answer,) = tx.of(evs, "tool_result")
    assert answer.data["call_id"] == call.data["call_id"] and answer.data["status"] == "ok"
    assert '"Which colour should the button be?"="Red"' in tx.text(answer)


@pytest.mark.parametrize("key", KEYS)
def test_a_compaction(key):
    evs = read(key, "compact")
    (compaction,) = tx.of(evs, "compaction")
    assert compaction.data == {"compaction": "manual"}
    prompts = [e.preview for e in tx.of(evs, "user_message")]
    assert prompts == ["Please say hello (1)", "Please say hello (2)", "Please say hello (3)",
                       "RUNTOOL please write the file", "/compact"]
    (summary,) = [e for e in tx.of(evs, "attachment") if e.data["attachment"] == "compact_summary"]
    assert evs.index(compaction) < evs.index(summary)
    assert "continued from a previous conversation" in tx.text(summary)
    # the local command's output is context, not the user's words, and previews as text
    (stdout,) = [e for e in tx.of(evs, "attachment")
                 if e.data["attachment"] == "local-command-stdout"]
    assert "\x1b" not in stdout.preview and "Compacted" in stdout.preview


@pytest.mark.parametrize("key", KEYS)
def test_a_subagent(key):
    (path,) = tx.scenario(key, "subagent")
    evs = tx.read(claude.events, path)
    (call,) = tx.of(evs, "tool_call")
    assert call.data["name"] == "Agent" and call.preview == "Say hello"
    (result,) = tx.of(evs, "tool_result")
    assert result.data["call_id"] == call.data["call_id"] and result.data["status"] == "ok"
    (ref,) = tx.of(evs, "subagent_ref")
    assert ref.data["external_file"] is True
    assert evs.index(result) < evs.index(ref)
    # the child id names the subagent's own file, which reads as the child's conversation
    child = path.parent / path.stem / "subagents" / f"agent-{ref.data['child_id']}.jsonl"
    assert [p.name for p in (path.parent / path.stem / "subagents").glob("*.jsonl")] == [child.name]
    kids = tx.read(claude.events, child)
    assert [e.preview for e in tx.of(kids, "user_message")] == ["Please say hello"]
    assert [tx.text(e) for e in tx.of(kids, "assistant_text")] == [tx.QUICK]


@pytest.mark.parametrize("key", KEYS)
def test_thinking(key):
    evs = read(key, "thinking")
    (thought,) = tx.of(evs, "thinking")
    assert thought.data == {"bytes": len(tx.THINK), "redacted": False}
    assert tx.text(thought) == tx.THINK
    (reply,) = tx.of(evs, "assistant_text")
    assert evs.index(thought) < evs.index(reply) and tx.text(reply) == tx.QUICK


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(tx.ROOT)))
def test_one_usage_per_model_message(path):
    """Each block's record repeats its message's usage: one usage event per message."""
    messages = {r["message"]["id"] for r in tx.records(path) if r["type"] == "assistant"}
    usage = tx.of(tx.read(claude.events, path), "usage")
    assert messages and len(usage) == len(messages)


def test_sidecars_and_context_are_not_conversation():
    kinds = Counter()
    for r in RECORDS:
        if r["type"] in claude.BOOKKEEPING:
            (e,) = claude.events(r)
            assert e.kind == "bookkeeping" and e.data["type_name"] == r["type"]
            kinds[r["type"]] += 1
        elif r["type"] == "attachment":
            (e,) = claude.events(r)
            assert e.kind == "attachment" and e.data["attachment"] == r["attachment"]["type"]
            assert json.loads(tx.text(e)) == r["attachment"]
    # every bookkeeping type named is one the recordings have
    assert set(kinds) == claude.BOOKKEEPING


# --- where the file is --------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_candidates_name_the_recorded_paths(key):
    m = tx.manifest(key)
    sessions = {rel: path for rel, path in m["files"].items() if "/subagents/" not in rel}
    assert len(sessions) == 7
    for rel, written in sessions.items():
        sid = PurePosixPath(rel).stem
        assert claude.candidates(sid, m["cwd"], {"HOME": m["home"]}) == [written]
        # the config directory moved: the same project directory under it
        moved = claude.candidates(sid, m["cwd"], {"HOME": "/nowhere",
                                                  "CLAUDE_CONFIG_DIR": m["home"] + "/.claude"})
        assert moved == [written]
    assert claude.candidates("x", m["cwd"], {}) == []
    assert claude.candidates("../x", m["cwd"], {"HOME": m["home"]}) == []


@given(st.text(max_size=300))
@example("/work/a_b c.d/𝄞")  # (a character outside the BMP is two UTF-16 units)
@example("/" + "d" * 250)
def test_a_slug_is_the_cwd_one_dash_per_utf16_unit_of_anything_not_alphanumeric(cwd):
    slug = claude.slug(cwd)
    units = len(cwd.encode("utf-16-le")) // 2
    if units <= claude.SLUG_MAX:
        assert len(slug) == units and "*" not in slug
        assert all(c == "-" or (c.isascii() and c.isalnum()) for c in slug)
    else:  # cut, and a hash Claude Code computes stands after it: a glob
        assert len(slug) == claude.SLUG_MAX + 2 and slug.endswith("-*")
        path = claude.candidates("s", cwd, {"HOME": "/h"})[0]
        assert PurePosixPath(f"/h/.claude/projects/{slug[:-1]}1k2j3/s.jsonl").match(path)


# --- purity --------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=20)
FIELDS = ("type", "subtype", "message", "content", "attachment", "toolUseResult", "isMeta",
          "isCompactSummary", "timestamp", "sessionId", "cwd", "version")


@st.composite
def drifted_records(draw):
    """A recorded record with one field (or one of its message's) replaced by any JSON."""
    r = copy.deepcopy(draw(st.sampled_from(RECORDS)))
    field = draw(st.sampled_from(FIELDS))
    target = r["message"] if field == "content" and isinstance(r.get("message"), dict) else r
    target[field] = draw(JSON)
    return r


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RECORDS), st.lists(st.sampled_from(RECORDS), max_size=5))
def test_events_is_a_pure_function_of_one_record(record, others):
    before = copy.deepcopy(record)
    first = claude.events(record)
    for other in others:  # reading other records in between changes nothing
        claude.events(other)
    assert claude.events(record) == first
    assert claude.events(copy.deepcopy(record)) == first
    assert record == before  # nor does reading change the record


@settings(max_examples=300, deadline=None)
@given(st.one_of(drifted_records(), st.dictionaries(st.sampled_from(FIELDS), JSON)))
def test_any_record_gives_known_kinds_never_an_error(record):
    for e in claude.events(record):
        assert e.kind in KINDS and list(e.data) == list(KINDS[e.kind])
        assert e.preview is None or (len(e.preview) <= 80 and "\n" not in e.preview)
    meta = claude.session(record)
    assert meta is None or meta.kind == "session_meta"

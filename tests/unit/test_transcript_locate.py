"""Which transcript is a pane's (tma.runtime.transcript.locate) and the one registry of
store modules (tma.runtime.transcript.stores), on real files in a private HOME: the
hook's path first, then the session id and the pane's directory, then a scan by session
id, never a guess by directory alone; and the surfaces' reads over it (read.py)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from pathlib import Path

import pytest

from tests.helpers import synthetic_store as S
from tma.core import proto
from tma.runtime.transcript import locate as L, read, stores
from tma.runtime.transcript.stores import CursorInvalid, NoTranscript

SID = "0f3c2a9e-1111-4222-8333-444455556666"
CWD = "/work/my.proj"


@pytest.fixture
def plain(monkeypatch):
    """The synthetic store without `candidates`: locate's own rule for the agent looks."""
    mod = types.ModuleType("tests_tx_plain_store")
    mod.NAME, mod.events, mod.session = "plain", S.events, S.session
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod.__name__


def env_for(home: Path, **stores_: str) -> dict[str, str]:
    spec = ",".join(f"{a}={m}" for a, m in stores_.items())
    return {"HOME": str(home), stores.ENV: spec}


def put(path: Path, recs: list[dict], mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def talk(n: int = 3) -> list[dict]:
    out: list[dict] = [{"type": "meta", "session": SID, "cwd": CWD, "version": "1", "model": "m"}]
    for i in range(n):
        out += [{"type": "user", "text": f"question {i}"},
                {"type": "assistant", "text": f"answer {i}"}]
    return out


def test_the_registry_names_every_store_and_a_missing_one_is_no_reader(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert set(stores.REGISTRY) == {"claude", "codex", "gemini", "pi", "opencode", "copilot",
                                    "qwen"}
    assert stores.store_for("cursor", env).why.startswith("Cursor CLI's transcripts")
    assert "no transcript reader for nosuch" in stores.store_for("nosuch", env).why
    env[stores.ENV] = "claude=tests_tx_no_such_module"
    found = stores.store_for("claude", env)
    assert found.store is None and "no transcript reader for claude yet" in found.why
    env[stores.ENV] = "claude=tests.helpers.synthetic_store, x = json"
    assert stores.store_for("claude", env).store is S
    assert "not a transcript store" in stores.store_for("x", env).why


def test_the_registry_names_modules_of_the_transcript_packages_only():
    # the registry imports by name, which import-linter cannot follow: a store module
    # stays where the layers allow it (pure records in core, a store that pages itself in
    # the transcript room)
    for agent, module in stores.REGISTRY.items():
        assert module.startswith(("tma.core.transcript.", "tma.runtime.transcript.")), agent
        if module.startswith("tma.core.transcript."):
            assert module.count(".") == 3, module


def test_a_store_that_fails_to_load_is_named_not_raised(tmp_path, monkeypatch):
    broken = tmp_path / "tests_tx_broken_store.py"
    broken.write_text("import tests_tx_nowhere_at_all\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = stores.store_for("claude", {stores.ENV: "claude=tests_tx_broken_store"})
    assert found.store is None and "does not load" in found.why
    assert "tests_tx_nowhere_at_all" in found.why


def test_the_hooks_path_comes_first(tmp_path):
    hooked = put(tmp_path / "elsewhere" / "t.jsonl", talk(1))
    put(tmp_path / ".synthetic" / CWD.replace("/", "-") / f"{SID}.jsonl", talk(2))
    env = env_for(tmp_path, claude="tests.helpers.synthetic_store")
    t = L.Target("%1", "claude", SID, CWD, str(hooked))
    assert L.locate(t, env) == L.Located(S, str(hooked), L.HOOK)
    # the hook's file went away: the session's own is found instead
    hooked.unlink()
    w = read.window(t, env)
    assert [e.preview for e in w.events][:2] == ["answer 1", "question 1"]


def test_the_stores_candidates_then_the_scan(tmp_path, plain):
    env = env_for(tmp_path, claude="tests.helpers.synthetic_store")
    near = put(tmp_path / ".synthetic" / CWD.replace("/", "-") / f"{SID}.jsonl", talk())
    t = L.Target("%1", "claude", SID, CWD)
    assert L.locate(t, env, fresh=True) == L.Located(S, str(near), L.SESSION)
    # the claude rule (no candidates of the store's): the project dir by the cwd's slug
    env = env_for(tmp_path, claude=plain)
    claude = put(tmp_path / ".claude" / "projects" / "-work-my-proj" / f"{SID}.jsonl", talk())
    got = L.locate(t, env, fresh=True)
    assert (got.path, got.how) == (str(claude), L.SESSION)
    # moved to another project dir (a pane whose cwd changed): the scan finds it
    other = tmp_path / ".claude" / "projects" / "-elsewhere" / f"{SID}.jsonl"
    other.parent.mkdir(parents=True)
    claude.rename(other)
    got = L.locate(t, env, fresh=True)
    assert (got.path, got.how) == (str(other), L.SCAN)


def test_never_a_guess_by_directory_alone(tmp_path, plain):
    env = env_for(tmp_path, claude=plain)
    put(tmp_path / ".claude" / "projects" / "-work-my-proj" / "another-session.jsonl", talk())
    got = L.locate(L.Target("%1", "claude", "", CWD), env)
    assert got.path is None and "no session" in got.why
    got = L.locate(L.Target("%1", "claude", SID, CWD), env)
    assert got.path is None and f"no claude transcript for session {SID}" in got.why
    with pytest.raises(NoTranscript, match="no claude transcript"):
        read.window(L.Target("%1", "claude", SID, CWD), env)
    # a session id is a name, never a path
    got = L.locate(L.Target("%1", "claude", "../../etc/passwd", CWD), env)
    assert got.path is None


def test_codex_takes_the_newest_rollout_of_the_session(tmp_path, plain):
    env = env_for(tmp_path, codex=plain)
    day = tmp_path / ".codex" / "sessions"
    put(day / "2026" / "11" / "30" / f"rollout-2026-11-30T10-00-00-{SID}.jsonl", talk(), 1000)
    newest = put(day / "2026" / "12" / "01" / f"rollout-2026-12-01T09-00-00-{SID}.jsonl",
                 talk(), 2000)
    put(day / "2026" / "12" / "02" / "rollout-2026-12-02T09-00-00-other.jsonl", talk(), 3000)
    got = L.locate(L.Target("%1", "codex", SID, CWD), env)
    assert got.path == str(newest)
    env["CODEX_HOME"] = str(tmp_path / "nowhere")
    assert L.locate(L.Target("%1", "codex", SID, CWD), env, fresh=True).path is None


def test_gemini_is_confirmed_by_the_sessions_own_first_record(tmp_path, plain):
    env = env_for(tmp_path, gemini=plain)
    chats = tmp_path / ".gemini" / "tmp" / hashlib.sha256(CWD.encode()).hexdigest() / "chats"
    name = f"session-2026-12-01T09-00-{SID[:8]}.jsonl"
    # same short id, another session: not it
    put(chats / name, [{"type": "meta", "session": SID[:8] + "-not-it"}])
    assert L.locate(L.Target("%1", "gemini", SID, CWD), env).path is None
    mine = put(chats / f"session-2026-12-02T09-00-{SID[:8]}.jsonl", talk())
    assert L.locate(L.Target("%1", "gemini", SID, CWD), env, fresh=True).path == str(mine)


def test_pi_by_the_directorys_slug(tmp_path, plain):
    env = env_for(tmp_path, pi=plain)
    slug = "--work-my.proj--"
    mine = put(tmp_path / ".pi" / "agent" / "sessions" / slug / f"2026-12-01_{SID}.jsonl",
               talk())
    got = L.locate(L.Target("%1", "pi", SID, CWD), env)
    assert (got.path, got.how) == (str(mine), L.SESSION)


def test_a_file_that_is_not_the_users_is_never_taken(tmp_path, plain, monkeypatch):
    env = env_for(tmp_path, claude=plain)
    put(tmp_path / ".claude" / "projects" / "-work-my-proj" / f"{SID}.jsonl", talk())
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    assert L.locate(L.Target("%1", "claude", SID, CWD), env, fresh=True).path is None


def test_a_window_event_and_last_answer_through_the_located_file(tmp_path):
    env = env_for(tmp_path, claude="tests.helpers.synthetic_store")
    put(tmp_path / ".synthetic" / CWD.replace("/", "-") / f"{SID}.jsonl", talk(3))
    t = L.Target("%4", "claude", SID, CWD)
    w = read.window(t, env, last=3, rid="9")
    assert (w.id, w.pane, w.agent) == ("9", "%4", "claude")
    assert w.session == proto.SessionMeta("synthetic", SID, CWD, "1", "m")
    assert [e.kind for e in w.events] == ["assistant_text", "user_message", "assistant_text"]
    assert all(e.body is None for e in w.events) and w.older == w.events[-1].cursor
    assert proto.parse_line(proto.dumps(w), proto.RESPONSE) == w
    ev = read.event(t, env, w.events[0].cursor, rid="9")
    assert ev.header.body == proto.EventBody("text", "answer 2")
    with_bodies = read.window(t, env, last=3, bodies=True)
    assert [e.body.text for e in with_bodies.events if e.body] == [
        "answer 2", "question 2", "answer 1"]
    assert read.last_answer(t, env, 1) == ["answer 2"]
    assert read.last_answer(t, env, 2) == ["answer 1", "answer 2"]
    assert read.last_answer(t, env, 9) == ["answer 0", "answer 1", "answer 2"]
    with pytest.raises(CursorInvalid):
        read.event(t, env, "t1.1.2.3.4.0")


def _paged_module():
    """A store that pages itself (stores.PagedStore), over a list in memory: what an
    SQLite store plugs in as."""
    from tma.core.transcript import event as E

    rows = [E.make("user_message", bytes=2, attachments=0, preview=f"q{i}", body=("text", f"q{i}"))
            if i % 2 == 0 else E.make("assistant_text", bytes=2, preview=f"a{i}",
                                      body=("text", f"a{i}"))
            for i in range(9)] + [E.unknown("hologram")]
    mod = types.ModuleType("tests_tx_paged_store")

    def locate(session_id, cwd, env):
        return f"mem:{session_id}" if session_id == SID else None

    def page(source, before, limits):
        end = len(rows) if before is None else int(before.removeprefix("o1."))
        if before is not None and not (before.startswith("o1.") and 0 <= end <= len(rows)):
            raise CursorInvalid("not mine")
        idx = list(range(end - 1, -1, -1))[:limits.last]
        older = f"o1.{idx[-1]}" if idx and idx[-1] > 0 else None
        return stores.Page(tuple(stores.Entry(f"o1.{i}", rows[i]) for i in idx), older)

    def event(source, cursor, limits):
        if not cursor.startswith("o1."):
            raise CursorInvalid("not mine")
        i = int(cursor.removeprefix("o1."))
        return stores.Entry(cursor, rows[i])

    mod.NAME, mod.locate, mod.page, mod.event = "paged", locate, page, event
    return mod


def test_a_store_that_pages_itself_plugs_in(tmp_path, monkeypatch):
    mod = _paged_module()
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    env = env_for(tmp_path, opencode=mod.__name__)
    t = L.Target("%2", "opencode", SID, CWD, "/ignored/hook/path.jsonl")
    assert L.locate(t, env) == L.Located(mod, f"mem:{SID}", L.SESSION)
    w = read.window(t, env, last=4)
    assert [e.cursor for e in w.events] == ["o1.9", "o1.8", "o1.7", "o1.6"]
    assert (w.unknown, w.older, w.agent) == (1, "o1.6", "opencode")
    rest = read.window(t, env, before=w.older)
    assert [e.cursor for e in rest.events] == [f"o1.{i}" for i in range(5, -1, -1)]
    assert rest.older is None
    assert read.event(t, env, "o1.3").header.body == proto.EventBody("text", "a3")
    assert read.last_answer(t, env, 2) == ["a5", "a7"]
    with pytest.raises(CursorInvalid):
        read.event(t, env, "t1.1.2.3.4.0")
    with pytest.raises(NoTranscript, match="no transcript for session"):
        read.window(L.Target("%2", "opencode", "ses_other", CWD), env)


def test_a_lone_surrogate_in_a_record_reads_as_a_replacement_character(tmp_path):
    """A writer that cut a string inside an emoji leaves `"\\ud83d"` (Node's
    JSON.stringify writes it): the reader, its sizes and its callers' output must not
    fail on it (it used to raise UnicodeEncodeError out of read.window)."""
    path = tmp_path / "t.jsonl"
    lines = [json.dumps(talk(0)[0]), '{"type": "user", "text": "cut \\ud83d here"}',
             '{"type": "assistant", "text": "whole \\ud83d\\ude00 pair"}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = env_for(tmp_path, claude="tests.helpers.synthetic_store")
    w = read.window(L.Target("%1", "claude", SID, CWD, str(path)), env)
    shown = [e.preview for e in w.events]
    assert "cut \ufffd here" in shown and "whole \U0001f600 pair" in shown
    for text in shown:
        (text or "").encode("utf-8")  # every string can be written out

"""OpenCode's SQLite store plugged into the transcript framework through the one registry:
the session a pane names is located in the database, paged newest first, and an event's
body fetched by its cursor, as for a file store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers.recorded_transcripts import load_sql
from tma.core.transcript import window
from tma.runtime.transcript import opencode_db, stores

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "opencode-1.18.33"


@pytest.fixture
def env(tmp_path):
    data = tmp_path / "data"
    (data / "opencode").mkdir(parents=True)
    load_sql(FIXTURES / "plain.sql", data / "opencode" / "opencode.db")
    yield {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    opencode_db.close_all()


def _session(env) -> str:
    db = sqlite3.connect(Path(env["XDG_DATA_HOME"]) / "opencode" / "opencode.db")
    try:
        return db.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
    finally:
        db.close()


def test_the_registry_names_a_store_that_pages_itself(env):
    found = stores.store_for("opencode", env)
    assert found.store is opencode_db and stores.is_paged(found.store)


def test_a_session_is_located_paged_and_its_events_fetched(env):
    sid = _session(env)
    assert opencode_db.locate("ses_nope", "/", env) is None
    source = opencode_db.locate(sid, "/anywhere", env)
    assert source is not None
    limits = window.clamp(last=3)
    page = opencode_db.page(source, None, limits)
    assert 0 < len(page.entries) <= 3
    assert page.session is not None and page.session.kind == "session_meta"
    everything = []
    before = None
    while True:
        p = opencode_db.page(source, before, window.clamp(last=2))
        everything += [e.cursor for e in p.entries]
        if p.older is None:
            break
        before = p.older
    assert len(everything) == len(set(everything))  # every event once
    answer = next(e for e in opencode_db.page(source, None, window.clamp()).entries
                  if e.event.kind == "assistant_text")
    full = opencode_db.event(source, answer.cursor, limits)
    assert full.event.body is not None and full.event.body[1]
    with pytest.raises(stores.CursorInvalid):
        opencode_db.event(source, "o1.ses_other.x.0", limits)


def _approved_store(tmp_path) -> dict[str, str]:
    """An XDG data dir holding the recorded tool-approved session; the env that finds it."""
    data = tmp_path / "data"
    (data / "opencode").mkdir(parents=True)
    load_sql(FIXTURES / "tool-approved.sql", data / "opencode" / "opencode.db")
    return {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}


def test_a_local_window_with_bodies_carries_each_message_and_calls_body(tmp_path):
    """`tma transcript --json` (read.window, bodies): OpenCode's pages leave bodies out,
    the local document still carries every message's, call's and result's body."""
    from tma.runtime.transcript import locate, read

    env = _approved_store(tmp_path)
    try:
        t = locate.Target("%1", "opencode", _session(env), "/anywhere")
        w = read.window(t, env, bodies=True)
        kinds = {e.kind: e for e in w.events}
        assert {"user_message", "assistant_text", "tool_call", "tool_result"} <= set(kinds)
        for kind in ("user_message", "assistant_text", "tool_call", "tool_result"):
            assert kinds[kind].body is not None and kinds[kind].body.text, kind
        assert kinds["tool_call"].body.kind == "json"
        # the wire's window never carries them
        assert all(e.body is None for e in read.window(t, env).events)
    finally:
        opencode_db.close_all()


def test_a_page_with_bodies_is_the_page_with_each_body_fetched_alone(tmp_path, monkeypatch):
    """The window with bodies reads OpenCode's page once with its bodies (each body
    fetched alone re-listed the whole session per event: 22 s for 120 events of a
    20,000-message session); what it carries is what the per-event fetch gives."""
    from tma.runtime.transcript import locate, read

    env = _approved_store(tmp_path)
    try:
        t = locate.Target("%1", "opencode", _session(env), "/anywhere")
        fetched = []
        real = opencode_db.event
        monkeypatch.setattr(opencode_db, "event", lambda *a: fetched.append(a) or real(*a))
        once = read.window(t, env, bodies=True)
        assert fetched == []  # no body fetched alone
        monkeypatch.setattr(opencode_db, "PAGES_BODIES", False)
        alone = read.window(t, env, bodies=True)
        assert fetched  # the old way: one fetch per event with a body
        assert [(e.cursor, e.body) for e in once.events] == \
            [(e.cursor, e.body) for e in alone.events]
    finally:
        opencode_db.close_all()


def test_big_rows_are_not_pulled_a_whole_batch_at_a_time(tmp_path, monkeypatch):
    """Parts of 3 MB each (a tool's output) and a read budget of 1 MiB: the page reads
    the few rows the budget pays for, not 32 rows (~96 MB) before it looks at their size."""
    env = _approved_store(tmp_path)
    sid = _session(env)
    db = sqlite3.connect(Path(env["XDG_DATA_HOME"]) / "opencode" / "opencode.db")
    cols = [r[1] for r in db.execute("PRAGMA table_info(part)")]
    row = db.execute("SELECT * FROM part WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                     (sid,)).fetchone()
    big = '{"type":"text","text":"' + "x" * (3 << 20) + '"}'
    for k in range(40):
        doc = dict(zip(cols, row, strict=True), id=f"prt_zzbig{k:03d}", data=big)
        db.execute(f"INSERT INTO part ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                   [doc[c] for c in cols])
    db.commit()
    db.close()
    fetched: list[int] = []
    real = opencode_db.OpenCodeDB._records
    monkeypatch.setattr(opencode_db.OpenCodeDB, "_records",
                        lambda self, s, batch, roles: fetched.append(len(batch))
                        or real(self, s, batch, roles))
    try:
        page = opencode_db.page(opencode_db.locate(sid, "/anywhere", env), None, window.clamp())
        assert page.entries and page.older is not None
        assert sum(fetched) <= 4, fetched
    finally:
        opencode_db.close_all()

"""A JSONL transcript paged backwards (tma.runtime.transcript.page) on real files, through
the tests' own synthetic store: any split into chunks reads the same events, paging
with `older` visits every event once, a cursor into a truncated or replaced file is
`cursor-invalid` and never another event, and the budgets hold."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.helpers import synthetic_store as S
from tma.core.transcript.window import CHUNK, MAX_RECORD, Limits, parse_cursor
from tma.runtime.transcript import page
from tma.runtime.transcript.stores import CursorInvalid, NoTranscript, TooLarge

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
records = st.one_of(
    st.builds(lambda t: {"type": "user", "text": t}, text),
    st.builds(lambda t, n: {"type": "assistant", "text": t,
                            "calls": [{"name": "Bash", "id": f"c{i}", "input": {"k": i}}
                                      for i in range(n)]},
              text, st.integers(0, 3)),
    st.builds(lambda t, ok: {"type": "result", "id": "c0", "ok": ok, "output": t}, text,
              st.booleans()),
    st.just({"type": "noise"}),
    st.just({"type": "mystery"}),
    st.just({"type": "assistant", "text": ""}),  # a record with no events at all
)
files = st.lists(records, max_size=25)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def fresh(tmp_path: Path) -> Path:
    """A file of its own for each example: a page is kept per path and file state, and
    two examples written within one clock tick at the same size would look alike."""
    return tmp_path / f"{uuid.uuid4().hex}.jsonl"


def write(path: Path, recs: list[dict], tail: str = "") -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs) + tail,
                    encoding="utf-8")


def forward(recs: list[dict]) -> list:
    """Every event, newest first, as a reader going forwards sees them."""
    out = []
    for r in recs:
        out.extend(S.events(r))
    return out[::-1]


def walk(path: Path, *, last: int = 200, chunk: int = CHUNK, read: int = 1 << 20) -> list:
    entries, before = [], None
    for _ in range(10_000):
        pg = page.read_page(str(path), S, before=before,
                            limits=Limits(read_bytes=read, last=last), chunk=chunk)
        entries.extend(pg.entries)
        if pg.older is None:
            return entries
        before = pg.older
    raise AssertionError("paging did not end")


@SETTINGS
@given(files, st.integers(1, 300), st.text(alphabet='{"type: x', max_size=12))
def test_any_split_into_chunks_reads_the_same_events(tmp_path, recs, chunk, tail):
    path = fresh(tmp_path)
    write(path, recs, tail.replace("\n", ""))  # an unfinished last line is left out
    got = walk(path, chunk=chunk)
    assert [e.event for e in got] == forward(recs)
    assert [e.event for e in walk(path)] == forward(recs)


@SETTINGS
@given(files, st.integers(1, 7), st.integers(1, 90))
def test_paging_with_older_visits_every_event_once(tmp_path, recs, last, chunk):
    path = fresh(tmp_path)
    write(path, recs)
    got = walk(path, last=last, chunk=chunk)
    cursors = [e.cursor for e in got]
    assert len(set(cursors)) == len(cursors)  # each once
    assert [e.event for e in got] == forward(recs)  # and every one, in order
    for e in got[:5]:  # a cursor names its own event
        assert page.read_event(str(path), S, e.cursor) == e


@SETTINGS
@given(files.filter(bool), st.data())
def test_a_truncated_or_replaced_file_gives_cursor_invalid_never_a_wrong_event(
        tmp_path, recs, data):
    path = fresh(tmp_path)
    write(path, recs)
    before = walk(path)
    size = path.stat().st_size
    if data.draw(st.booleans(), label="replace"):
        other = fresh(tmp_path)
        write(other, data.draw(files, label="new records"))
        os.replace(other, path)  # same name, another file
    else:
        cut = data.draw(st.integers(0, size), label="truncate to")
        with open(path, "r+b") as fh:
            fh.truncate(cut)
    for e in before:
        try:
            got = page.read_event(str(path), S, e.cursor)
        except CursorInvalid:
            continue
        assert got == e  # only what the cursor named, never another event
    for e in before[:3]:
        try:
            pg = page.read_page(str(path), S, before=e.cursor, limits=Limits())
        except CursorInvalid:
            continue
        start = before.index(e) + 1
        assert [x.event for x in pg.entries] == [x.event for x in before[start:start + len(
            pg.entries)]]


def test_cursors_are_hex_and_name_their_record(tmp_path):
    path = tmp_path / "t.jsonl"
    recs = [{"type": "user", "text": "hi"},
            {"type": "assistant", "text": "yes", "calls": [{"name": "Bash", "id": "c1",
                                                            "input": {"command": "ls"}}]}]
    write(path, recs)
    pg = page.read_page(str(path), S, before=None, limits=Limits())
    st_ = path.stat()
    second = len(json.dumps(recs[0]).encode()) + 1
    assert [e.cursor for e in pg.entries] == [
        f"t1.{st_.st_dev:x}.{st_.st_ino:x}.{st_.st_size:x}.{second:x}.1",
        f"t1.{st_.st_dev:x}.{st_.st_ino:x}.{st_.st_size:x}.{second:x}.0",
        f"t1.{st_.st_dev:x}.{st_.st_ino:x}.{st_.st_size:x}.0.0"]
    assert [e.event.kind for e in pg.entries] == ["tool_call", "assistant_text", "user_message"]
    assert pg.older is None  # the page reached the start
    for bad in ("", "t1", "t2.1.2.3.4.5", "t1.1.2.3.4", "t1.01.2.3.4.5", "t1.g.2.3.4.5",
                "t1.1.2.3.4.5.6", "T1.1.2.3.4.5"):
        assert parse_cursor(bad) is None
        with pytest.raises(CursorInvalid):
            page.read_event(str(path), S, bad)
    # a cursor whose offset is not a record's start (a rewrite): never read as one
    c = parse_cursor(pg.entries[0].cursor)
    assert c is not None
    with pytest.raises(CursorInvalid):
        page.read_event(str(path), S, c.replace(offset=c.offset + 1).text())


def test_the_cursor_stays_valid_while_the_file_grows(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, [{"type": "user", "text": f"q{i}"} for i in range(5)])
    first = page.read_page(str(path), S, before=None, limits=Limits(last=2))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "text": "later"}) + "\n" + '{"type": "us')
    older = page.read_page(str(path), S, before=first.older, limits=Limits(last=10))
    assert [e.event.preview for e in older.entries] == ["q2", "q1", "q0"]
    assert page.read_event(str(path), S, first.entries[0].cursor).event.preview == "q4"
    newest = page.read_page(str(path), S, before=None, limits=Limits(last=1))
    assert newest.entries[0].event.preview == "later"  # the unfinished line left out


def test_a_quiet_file_costs_one_stat(tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    write(path, [{"type": "user", "text": "hi"}])
    limits = Limits(last=3)
    first = page.read_page(str(path), S, before=None, limits=limits)
    calls = []
    real_stat = os.stat
    monkeypatch.setattr(page.os, "stat", lambda p, *a, **k: calls.append(p) or real_stat(p))

    def no_open(*_a, **_k):
        raise AssertionError("a quiet file was opened again")

    monkeypatch.setattr(page.os, "open", no_open)
    assert page.read_page(str(path), S, before=None, limits=limits) is first
    assert calls == [str(path)]
    monkeypatch.undo()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "text": "more"}) + "\n")
    assert page.read_page(str(path), S, before=None, limits=limits).entries[0].event.preview \
        == "more"


def test_the_read_budget_ends_a_page_once_it_holds_an_event(tmp_path):
    path = tmp_path / "t.jsonl"
    big = "x" * 40_000
    write(path, [{"type": "user", "text": f"{i} {big}"} for i in range(40)])
    pg = page.read_page(str(path), S, before=None, limits=Limits(read_bytes=CHUNK, last=200))
    assert pg.budget_truncated and 0 < len(pg.entries) < 40
    assert pg.read <= CHUNK + page.HEAD_BYTES + CHUNK  # the head, the budget, one more chunk
    # a record longer than the budget is still read whole when the page holds nothing yet
    huge, pad = "y" * (3 * CHUNK), "p" * (2 * CHUNK)
    write(path, [{"type": "user", "text": "a"}, {"type": "user", "text": pad},
                 {"type": "user", "text": huge}])
    pg = page.read_page(str(path), S, before=None, limits=Limits(read_bytes=CHUNK, last=200))
    assert [e.event.data["bytes"] for e in pg.entries] == [len(huge)]
    assert pg.budget_truncated and pg.older is not None
    rest = page.read_page(str(path), S, before=pg.older, limits=Limits(read_bytes=CHUNK))
    # the chunk that finishes the padding holds all of "a" too: read already, so taken
    assert [e.event.data["bytes"] for e in rest.entries] == [len(pad), 1]
    assert rest.older is None


def test_a_record_over_8_mib_is_not_parsed(tmp_path):
    path = tmp_path / "t.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "text": "before"}) + "\n")
        fh.write(json.dumps({"type": "user", "text": "z" * (MAX_RECORD + 10)}) + "\n")
        fh.write(json.dumps({"type": "user", "text": "after"}) + "\n")
    got = walk(path)
    assert [(e.event.kind, e.event.data.get("type_name"), e.event.preview) for e in got] == [
        ("user_message", None, "after"), ("unknown", page.OVERSIZED, None),
        ("user_message", None, "before")]
    with pytest.raises(TooLarge):
        page.read_event(str(path), S, got[1].cursor)


def test_a_line_that_is_not_a_record_is_one_unknown_event(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'[1, 2]\nnot json\n\xff\xfe\n\n{"type": "user", "text": "ok"}\n')
    got = walk(path)
    assert [(e.event.kind, e.event.data.get("type_name")) for e in got] == [
        ("user_message", None), ("unknown", "unparsable"), ("unknown", "unparsable"),
        ("unknown", "not-an-object")]


def test_the_session_comes_from_the_page_else_the_files_head(tmp_path):
    path = tmp_path / "t.jsonl"
    meta = {"type": "meta", "session": "s1", "cwd": "/w", "version": "1", "model": "m"}
    write(path, [meta] + [{"type": "user", "text": f"q{i}"} for i in range(30)])
    pg = page.read_page(str(path), S, before=None, limits=Limits(last=2))
    assert pg.session is not None and pg.session.data["session_id"] == "s1"  # the head's
    # the same file (inode) rewritten in place: its head is read again, not remembered
    ino = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write("".join(json.dumps(r) + "\n" for r in [dict(meta, session="s2")] + [
            {"type": "user", "text": f"r{i}"} for i in range(40)]))
    assert path.stat().st_ino == ino
    pg = page.read_page(str(path), S, before=None, limits=Limits(last=2))
    assert pg.session is not None and pg.session.data["session_id"] == "s2"
    # on the page itself: the newest record that names a session wins
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(dict(meta, session="s3")) + "\n")
    pg = page.read_page(str(path), S, before=None, limits=Limits(last=2))
    assert pg.session is not None and pg.session.data["session_id"] == "s3"


def test_only_a_regular_file_the_user_owns_is_read(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NoTranscript, match="not a regular file"):
        page.read_page(str(fifo), S, before=None, limits=Limits())
    path = tmp_path / "t.jsonl"
    write(path, [{"type": "user", "text": "hi"}])
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    assert page.read_page(str(link), S, before=None, limits=Limits()).entries  # one's own
    uid = os.getuid()
    monkeypatch.setattr(page.os, "getuid", lambda: uid + 1)
    with pytest.raises(NoTranscript, match="owned by uid"):
        page.read_page(str(link), S, before=None, limits=Limits(last=5))

"""OpenCode's transcript, read from its SQLite database: a store that pages itself.

OpenCode writes no file per session: every session is rows of one database
(`$XDG_DATA_HOME/opencode/opencode.db`, WAL), tables `session`, `message` and `part`, a
tool call one `part` row mutated pending -> running -> completed | error while the agent
works. A byte offset means nothing there, so this store does its own paging and its
cursors name rows. It speaks the same events as the JSONL stores
(tma.core.transcript.opencode maps each row, purely) and offers the framework this
protocol (`SelfPagingStore`):

    page(session_id, before=None, last=200, budget=None) -> (events, older)
        events: [(cursor, Event)], newest first, at most `last` (clamped to 1..1000),
                bodies left out (an `event` request fetches one); `before` (a cursor
                from this store) is exclusive: the page starts just older than it.
        older:  the cursor to pass back as `before` for the next page, or None when the
                page reached the session's first event. A page that stopped short of
                `last` with `older` set was cut by the budget.
        budget: `read_bytes` (row text read, 1 MiB) and `frame_bytes` (the events'
                estimated wire size, 32 KiB); each clamped to the host's default, and a
                page always holds at least one event.
    event(cursor) -> (cursor, Event)   the event with its body
    session(session_id) -> Event | None   the session's session_meta (window.session)

Both raise `CursorInvalid` (code `cursor-invalid`) for a cursor this store did not make,
one of another session, or one whose row is gone (the session's rows were replaced:
OpenCode's revert deletes them), and `NotFound` (code `not-found`) for a session or
database that is not there.

Cursor: `o1.<session id>.<row id>.<n>`: the row (the session row, a message or a part)
and the event's place among that row's events. A session's rows are ordered as OpenCode
orders them (ids ascend with time): the session row, then each message (by id) followed
by its parts (by id). A part mutated in place keeps its place and its cursors (its
events have a fixed order), so paging while the agent works stays consistent.

Reading while OpenCode writes: one read-only connection (`mode=ro`) is held per database
for as long as the process lives (`store(path)`), with a busy timeout (BUSY_MS): the
reference implementation measured "database is locked" 42 times in 400 committed appends
against a reader that reconnected for every read, and none against a held connection
(tests/integration/test_opencode_db_concurrent.py pages this store while a process
appends and mutates rows). Every page is read inside one read transaction, so it is one
snapshot of the database: no event is torn between a row's two states, and no row is
seen twice.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import urllib.parse

from tma.core import proto
from tma.core.transcript import fields, opencode
from tma.core.transcript.event import Event, unknown
from tma.runtime.transcript import stores

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Protocol

    class Budget(Protocol):
        @property
        def read_bytes(self) -> int: ...

        @property
        def frame_bytes(self) -> int: ...

    class SelfPagingStore(Protocol):
        """A store that pages itself (the framework wires its `window` and `event`
        requests to one of these instead of reading a file)."""

        def page(self, session_id: str, before: str | None = None, last: int = 200,
                 budget: Budget | None = None) -> tuple[list[tuple[str, Event]], str | None]:
            ...

        def event(self, cursor: str) -> tuple[str, Event]:
            ...

NAME = opencode.NAME
CURSOR_PREFIX = "o1"
BUSY_MS = 250
READ_BYTES = 1 << 20
FRAME_BYTES = 32 << 10
LAST = 200
LAST_MAX = 1000
#: A row whose text is longer than this is not parsed (an `unknown` event stands for it).
RECORD_MAX = 8 << 20
#: Rows fetched per query while a page walks back.
_BATCH = 32
#: What one event costs on the wire besides its data and preview (keys, cursor, ts).
_EVENT_OVERHEAD = 120

_ID = re.compile(r"[A-Za-z0-9_-]+\Z")


class StoreError(Exception):
    code = proto.INTERNAL


class CursorInvalid(StoreError):
    code = proto.CURSOR_INVALID


class NotFound(StoreError):
    code = proto.NOT_FOUND


def default_path(env: Mapping[str, str]) -> str:
    """Where OpenCode keeps its database for this environment."""
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or "~", ".local", "share")
    return os.path.join(data, "opencode", "opencode.db")


_STORES: dict[str, OpenCodeDB] = {}
_STORES_LOCK = threading.Lock()


def store(path: str) -> OpenCodeDB:
    """The one held store of the database at `path` (opened on first use)."""
    key = os.path.realpath(path)
    with _STORES_LOCK:
        held = _STORES.get(key)
        if held is None or held.closed:
            held = _STORES[key] = OpenCodeDB(key)
        return held


def close_all() -> None:
    with _STORES_LOCK:
        for held in _STORES.values():
            held.close()
        _STORES.clear()


def cursor_of(session_id: str, row_id: str, n: int) -> str:
    return f"{CURSOR_PREFIX}.{session_id}.{row_id}.{n}"


def parse_cursor(cursor: str) -> tuple[str, str, int]:
    """(session id, row id, n) of a cursor this store made; CursorInvalid else."""
    parts = cursor.split(".")
    if len(parts) != 4 or parts[0] != CURSOR_PREFIX or not parts[3].isdigit() \
            or not _ID.match(parts[1]) or not _ID.match(parts[2]):
        raise CursorInvalid(f"not an OpenCode transcript cursor: {cursor[:80]!r}")
    return parts[1], parts[2], int(parts[3])


class OpenCodeDB:
    """One OpenCode database, read through one held read-only connection."""

    def __init__(self, path: str, *, busy_ms: int = BUSY_MS) -> None:
        self.path = path
        self.closed = False
        self._lock = threading.Lock()
        if not os.path.exists(path):
            raise NotFound(f"no OpenCode database at {path}")
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        try:
            self._conn = sqlite3.connect(uri, uri=True, timeout=busy_ms / 1000,
                                         isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as e:
            raise NotFound(f"cannot open the OpenCode database at {path}: {e}") from e
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._conn.close()

    # ------------------------------------------------------------------ the protocol
    def page(self, session_id: str, before: str | None = None, last: int = LAST,
             budget: Budget | None = None, bodies: bool = False,
             ) -> tuple[list[tuple[str, Event]], str | None]:
        last = max(1, min(int(last), LAST_MAX))
        read_max = min(budget.read_bytes, READ_BYTES) if budget is not None else READ_BYTES
        frame_max = min(budget.frame_bytes, FRAME_BYTES) if budget is not None else FRAME_BYTES
        limit: tuple[str, int] | None = None
        if before is not None:
            owner, row, n = parse_cursor(before)
            if owner != session_id:
                raise CursorInvalid("that cursor belongs to another session")
            limit = (row, n)
        with self._snapshot():
            keys, roles = self._rows(session_id)
            start = len(keys) - 1
            if limit is not None:
                at = {rid: i for i, (_, rid) in enumerate(keys)}.get(limit[0])
                if at is None:
                    raise CursorInvalid("the row that cursor names is gone (the session was "
                                        "rewritten)")
                start = at
            out: list[tuple[str, Event]] = []
            read = frame = 0
            i = start
            n = 2  # the first batch is small: one row may be megabytes (a tool's output)
            while i >= 0:
                batch = keys[max(0, i - n + 1): i + 1]
                records = self._records(session_id, batch, roles)
                # the next batch: as many rows as the read budget left holds at this
                # batch's largest, so a page of big rows is not pulled 32 at a time
                big = max((_weight(r) for r in records.values()), default=0)
                n = max(1, min(_BATCH, (read_max - read - sum(
                    _weight(r) for r in records.values())) // max(big, 4096)))
                for _, rid in reversed(batch):
                    record = records.get(rid)
                    if record is None:  # not in a snapshot read in one transaction; kept safe
                        i -= 1
                        continue
                    evs = _events(record)
                    read += _weight(record)
                    top = len(evs)
                    if limit is not None and rid == limit[0]:
                        top = min(top, limit[1])
                    for k in range(top - 1, -1, -1):
                        event = evs[k]
                        cost = _wire_size(event)
                        if out and (len(out) >= last or frame + cost > frame_max
                                    or read > read_max):
                            return out, out[-1][0]
                        frame += cost
                        out.append((cursor_of(session_id, rid, k),
                                    event if bodies else _bodiless(event)))
                    i -= 1
            return out, None

    def event(self, cursor: str) -> tuple[str, Event]:
        session_id, rid, n = parse_cursor(cursor)
        with self._snapshot():
            keys, roles = self._rows(session_id)
            row = next(((t, r) for t, r in keys if r == rid), None)
            if row is None:
                raise CursorInvalid("the row that cursor names is gone (the session was "
                                    "rewritten)")
            record = self._records(session_id, [row], roles).get(rid)
            evs = _events(record) if record is not None else []
            if n >= len(evs):
                raise CursorInvalid("that cursor names no event of its row")
            return cursor, evs[n]

    def session(self, session_id: str) -> Event | None:
        with self._snapshot():
            record = self._session_row(session_id)
            return opencode.session(record) if record is not None else None

    def sessions(self, directory: str | None = None) -> list[dict[str, object]]:
        """The database's sessions, most recently updated first (id, parent_id,
        directory, title, version, time_updated), those of `directory` only if given."""
        query = ("SELECT id, parent_id, directory, title, version, time_updated FROM session"
                 + (" WHERE directory = ?" if directory is not None else "")
                 + " ORDER BY time_updated DESC, id DESC")
        with self._snapshot():
            rows = self._conn.execute(query, (directory,) if directory is not None else ())
            names = ("id", "parent_id", "directory", "title", "version", "time_updated")
            return [dict(zip(names, r, strict=True)) for r in rows]

    # ------------------------------------------------------------------ reading
    def _snapshot(self) -> _Snapshot:
        return _Snapshot(self)

    def _session_row(self, session_id: str) -> dict[str, object] | None:
        cur = self._conn.execute("SELECT * FROM session WHERE id = ?", (session_id,))
        row = cur.fetchone()
        if row is None:
            return None
        record: dict[str, object] = {d[0]: v for d, v in zip(cur.description, row, strict=True)}
        record["table"] = "session"
        return record

    def _rows(self, session_id: str) -> tuple[list[tuple[str, str]], dict[str, str | None]]:
        """The session's rows in order, as (table, id), and its messages' roles."""
        if self._conn.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone() \
                is None:
            raise NotFound(f"no OpenCode session {session_id}")
        roles: dict[str, str | None] = {}
        for mid, role in self._roles(session_id):
            roles[mid] = role
        ordered: list[tuple[str, int, str, str]] = [(mid, 0, "", mid) for mid in roles]
        ordered += [(mid, 1, pid, pid) for pid, mid in self._conn.execute(
            "SELECT id, message_id FROM part WHERE session_id = ?", (session_id,))]
        ordered.sort()
        keys = [("session", session_id)]
        keys += [("message" if kind == 0 else "part", rid) for _, kind, _, rid in ordered]
        return keys, roles

    def _roles(self, session_id: str) -> Iterator[tuple[str, str | None]]:
        try:
            yield from self._conn.execute(
                "SELECT id, json_extract(data, '$.role') FROM message WHERE session_id = ?",
                (session_id,)).fetchall()
        except sqlite3.OperationalError:  # no JSON1 in this SQLite: parse the rows
            for mid, data in self._conn.execute(
                    "SELECT id, data FROM message WHERE session_id = ?", (session_id,)).fetchall():
                parsed = _parse(data)
                role = parsed.get("role") if isinstance(parsed, dict) else None
                yield mid, role if isinstance(role, str) else None

    def _records(self, session_id: str, batch: list[tuple[str, str]],
                 roles: dict[str, str | None]) -> dict[str, dict[str, object]]:
        """The rows of `batch` as the records tma.core.transcript.opencode maps."""
        out: dict[str, dict[str, object]] = {}
        want = {table: [rid for t, rid in batch if t == table] for table in ("message", "part")}
        if any(t == "session" for t, _ in batch):
            record = self._session_row(session_id)
            if record is not None:
                out[session_id] = record
        if want["message"]:
            marks = ",".join("?" * len(want["message"]))
            for rid, created, data in self._conn.execute(
                    f"SELECT id, time_created, data FROM message WHERE session_id = ? "
                    f"AND id IN ({marks})", (session_id, *want["message"])):
                out[rid] = {"table": "message", "id": rid, "time_created": created,
                            "data": _parse(data), "_bytes": len(data or "")}
        if want["part"]:
            marks = ",".join("?" * len(want["part"]))
            for rid, mid, created, data in self._conn.execute(
                    f"SELECT id, message_id, time_created, data FROM part WHERE session_id = ? "
                    f"AND id IN ({marks})", (session_id, *want["part"])):
                out[rid] = {"table": "part", "id": rid, "time_created": created,
                            "role": roles.get(mid), "data": _parse(data),
                            "_bytes": len(data or "")}
        return out


class _Snapshot:
    """One read transaction under the store's lock: every read in it sees one state."""

    def __init__(self, db: OpenCodeDB) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db._lock.acquire()
        if self.db.closed:
            self.db._lock.release()
            raise StoreError("this OpenCode store was closed")
        try:
            self.db._conn.execute("BEGIN")
        except sqlite3.OperationalError as e:
            self.db._lock.release()
            raise StoreError(f"cannot read the OpenCode database: {e}") from e

    def __exit__(self, *exc: object) -> None:
        try:
            self.db._conn.execute("COMMIT")
        except sqlite3.OperationalError:
            pass
        finally:
            self.db._lock.release()


def _parse(data: object) -> object:
    if not isinstance(data, str) or len(data) > RECORD_MAX:
        return None
    try:
        return fields.loads(data)
    except ValueError:
        return None


def _events(record: dict[str, object]) -> list[Event]:
    """A record's events; a record the store module fails on (a value Python's json takes
    and nothing else does: Infinity, a number of 10,000 digits) is one `unknown` event,
    as the JSONL reader makes it, never the reader's death."""
    try:
        return opencode.events({k: v for k, v in record.items() if k != "_bytes"})
    except Exception:  # noqa: BLE001 - a store's bug is one unknown event
        return [unknown("part")]


def _weight(record: dict[str, object]) -> int:
    size = record.get("_bytes")
    return size if isinstance(size, int) else 256


def _wire_size(event: Event) -> int:
    return len(json.dumps(event.data, ensure_ascii=False)) + len(event.preview or "") \
        + _EVENT_OVERHEAD


def _bodiless(event: Event) -> Event:
    if event.body is None:
        return event
    return Event(event.kind, event.data, event.ts, event.preview, None)


# --- the framework's side (tma.runtime.transcript.stores.PagedStore) -------------------
# The module is the store the registry names: a `source` is the database's path and the
# session id, joined by a `#` (a session id never holds one, so the last `#` splits them).


def locate(session_id: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The pane's session in OpenCode's database (its session id names it: OpenCode keeps
    every session of every directory in one database), or None."""
    path = default_path(env)
    if not session_id or not _ID.match(session_id) or not os.path.isfile(path):
        return None
    try:
        found = store(path).session(session_id)
    except (StoreError, sqlite3.Error):
        return None
    return f"{path}#{session_id}" if found is not None else None


#: `page(..., bodies=True)` keeps each event's body (tma.runtime.transcript.read asks it so
#: for a local reader's document instead of fetching each body alone)
PAGES_BODIES = True


def page(source: str, before: str | None, limits, bodies: bool = False):  # -> stores.Page
    path, session_id = _source(source)
    budget = proto.Budget(limits.header_bytes, limits.read_bytes, limits.frame_bytes)
    try:
        db = store(path)
        entries, older = db.page(session_id, before, limits.last, budget, bodies)
        meta = db.session(session_id)
    except CursorInvalid as exc:
        raise stores.CursorInvalid(str(exc)) from None
    except (NotFound, sqlite3.Error) as exc:
        raise stores.NoTranscript(f"OpenCode's session {session_id}: {exc}") from None
    return stores.Page(tuple(stores.Entry(c, e) for c, e in entries), older,
                       budget_truncated=older is not None and len(entries) < limits.last,
                       session=meta)


def event(source: str, cursor: str, limits):  # -> stores.Entry
    path, session_id = _source(source)
    try:
        owner, _row, _n = parse_cursor(cursor)
        if owner != session_id:
            raise CursorInvalid("that cursor belongs to another session")
        found, ev = store(path).event(cursor)
    except CursorInvalid as exc:
        raise stores.CursorInvalid(str(exc)) from None
    except (NotFound, sqlite3.Error) as exc:
        raise stores.NoTranscript(f"OpenCode's session {session_id}: {exc}") from None
    return stores.Entry(found, ev)


def _source(source: str) -> tuple[str, str]:
    path, _sep, session_id = source.rpartition("#")
    return path, session_id

"""A JSONL transcript read backwards, a page at a time, under the budgets.

A page is read from its end (the file's, or the `before` cursor's record) towards the
start in CHUNK (64 KiB) reads. A record that straddles two chunks is carried over, never
read twice; the bytes after the file's last newline are a line the agent is still
writing and are left out. Each complete record is parsed once (json) and handed to the
store module's `events` (tma.core.transcript: pure, one record in, its events out); its
events are numbered in their order in the record (the cursor's part) and the page takes
them newest first.

The read budget (`Limits.read_bytes`) ends a page once it holds an event: a page with
none yet reads on to finish one record, so paging always moves. A record over
MAX_RECORD (8 MiB) is not kept or parsed: its start is looked for without holding its
bytes, and it stands in the page as one `unknown` event of type `oversized` (its `event`
request is refused).

The session a window names is the newest record on the page that says it
(`store.session`), else the file's head (its first 64 KiB; what it said is kept and
taken again while the file still starts with the same bytes).

A quiet file costs one `stat`: the last page read for each (file, cursor, limits) is
kept with the file's (device, inode, size, mtime) and answered again while they hold.
"""

from __future__ import annotations

import hashlib
import os
import stat

from tma.core.transcript import event as E, fields
from tma.core.transcript.event import Event
from tma.core.transcript.window import CHUNK, MAX_RECORD, Cursor, Limits, parse_cursor
from tma.runtime.transcript.stores import (
    CursorInvalid,
    Entry,
    NoTranscript,
    Page,
    TooLarge,
    TranscriptError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEAD_BYTES = 64 << 10
#: How many pages and heads are kept (a serve connection asks about a few panes).
CACHE_MAX = 64
OVERSIZED = "oversized"
_TAIL, _CURSOR = "tail", "cursor"

_pages: dict[tuple, tuple[tuple, Page]] = {}
_heads: dict[tuple, tuple[Event | None, int, bytes]] = {}


def usable(st: os.stat_result) -> str | None:
    """Why a file is not one tma reads (None: it is): a regular file the user owns."""
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not by this user"
    return None


def _name(store: Any) -> str:
    return getattr(store, "__name__", type(store).__name__)


def _remember(table: dict, key: tuple, value: Any) -> None:
    table.pop(key, None)
    table[key] = value
    while len(table) > CACHE_MAX:
        del table[next(iter(table))]


def read_page(path: str, store: Any, *, before: str | None, limits: Limits,
              chunk: int = CHUNK) -> Page:
    """The page of `path` before the cursor `before` (None: the newest), read backwards
    `chunk` bytes at a time. Raises NoTranscript (the file is gone or not the user's),
    CursorInvalid, TranscriptError."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise NoTranscript(f"{path}: {exc.strerror}") from None
    why = usable(st)
    if why is not None:
        raise NoTranscript(f"{path}: {why}")
    key = (path, _name(store), before, limits, chunk)
    state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _pages.get(key)
    if hit is not None and hit[0] == state:
        return hit[1]
    with _Open(path) as f:
        page = _Reader(f, store, limits, chunk).page(before)
        _remember(_pages, key, (f.state, page))
    return page


def read_event(path: str, store: Any, cursor: str) -> Entry:
    """One event by its cursor, with its body. Raises CursorInvalid, TooLarge,
    NoTranscript."""
    c = parse_cursor(cursor)
    if c is None:
        raise CursorInvalid(f"{cursor!r} is not a cursor this host issued")
    with _Open(path) as f:
        f.check(c)
        line, _n = f.forward(c.offset, c.size)
        events, _session = _parse(store, line)
        if c.part >= len(events):
            raise CursorInvalid("the record at this cursor no longer holds its event")
        return Entry(cursor, events[c.part])


class _Open:
    """One open transcript: its fd and (dev, ino, size) as read when opened."""

    def __init__(self, path: str) -> None:
        try:
            # O_NONBLOCK: a FIFO put where the file was opens without waiting (and is
            # refused below)
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as exc:
            raise NoTranscript(f"{path}: {exc.strerror}") from None
        st = os.fstat(self.fd)
        why = usable(st)
        if why is not None:
            os.close(self.fd)
            raise NoTranscript(f"{path}: {why}")
        self.dev, self.ino, self.size = st.st_dev, st.st_ino, st.st_size
        self.state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def __enter__(self) -> _Open:
        return self

    def __exit__(self, *_exc: object) -> None:
        os.close(self.fd)

    def cursor(self, offset: int, part: int) -> str:
        return Cursor(self.dev, self.ino, self.size, offset, part).text()

    def pread(self, n: int, at: int) -> bytes:
        data = os.pread(self.fd, n, at)
        if len(data) != n:
            raise TranscriptError("the file was truncated while it was read")
        return data

    def check(self, c: Cursor) -> None:
        """Does the cursor still name a record's start in this file? CursorInvalid if not."""
        if not c.addresses(self.dev, self.ino, self.size):
            raise CursorInvalid("this cursor no longer addresses the file (it was rewritten, "
                                "truncated or replaced)")
        if c.offset and self.pread(1, c.offset - 1) != b"\n":
            raise CursorInvalid("this cursor no longer names the start of a record (the "
                                "file was rewritten)")

    def forward(self, offset: int, limit: int) -> tuple[bytes, int]:
        """The record starting at `offset` (its newline before `limit`), and the bytes read
        for it. TooLarge past MAX_RECORD; CursorInvalid when no newline ends it in time."""
        parts: list[bytes] = []
        at, read = offset, 0
        while at < limit:
            n = min(CHUNK, limit - at)
            data = self.pread(n, at)
            read += n
            k = data.find(b"\n")
            if (at + (k if k >= 0 else n)) - offset > MAX_RECORD:
                raise TooLarge(f"the record at byte {offset} is over {MAX_RECORD >> 20} MiB: "
                               "tma does not read it")
            if k >= 0:
                parts.append(data[:k])
                return b"".join(parts), read
            parts.append(data)
            at += n
        raise CursorInvalid("this cursor no longer names a whole record (the file was "
                            "rewritten)")


def _parse(store: Any, line: bytes | None) -> tuple[list[Event], Event | None]:
    """One record's events and its session_meta (None when it says none); a line that is
    not a JSON object, or that the store fails on, is one `unknown` event."""
    if line is None:
        return [E.unknown(OVERSIZED)], None
    try:
        record = fields.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return [E.unknown("unparsable")], None
    if not isinstance(record, dict):
        return [E.unknown("not-an-object")], None
    try:
        return list(store.events(record)), store.session(record)
    except Exception:  # noqa: BLE001 - a store's bug is one unknown event, not a dead page
        kind = record.get("type")
        return [E.unknown(kind if isinstance(kind, str) else "record")], None


def _head(f: _Open, store: Any) -> tuple[Event | None, int]:
    """The session the file's first records name, and the bytes read for it. What was
    found is kept with the bytes it was found in, and taken again only while the file
    still starts with them (a file rewritten in place is read again)."""
    key = (f.dev, f.ino, _name(store))
    hit = _heads.get(key)
    if hit is not None:
        found, size, digest = hit
        if size <= f.size and _digest(f.pread(size, 0)) == digest:
            return found, size
    n = min(HEAD_BYTES, f.size)
    data = f.pread(n, 0) if n else b""
    at = 0
    while True:
        end = data.find(b"\n", at)
        if end < 0:
            break  # whole lines only
        line, at = data[at:end], end + 1
        if not line.strip():
            continue
        try:
            record = fields.loads(line)
            found = store.session(record) if isinstance(record, dict) else None
        except Exception:  # noqa: BLE001 - not this line's
            found = None
        if found is not None:
            _remember(_heads, key, (found, at, _digest(data[:at])))
            return found, n
    if n == HEAD_BYTES:  # the whole head said nothing, and growing will not change it
        _remember(_heads, key, (None, n, _digest(data)))
    return None, n


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class _Reader:
    """One page's scan (read_page)."""

    def __init__(self, f: _Open, store: Any, limits: Limits, chunk: int = CHUNK) -> None:
        self.f, self.store, self.limits, self.chunk = f, store, limits, chunk
        self.entries: list[Entry] = []
        self.session: Event | None = None
        self.read = 0
        self.full = False  # `last` reached
        self.resume: tuple[int, int] | None = None  # (offset, part) the next page ends at

    def page(self, before: str | None) -> Page:
        f = self.f
        head, self.read = _head(f, self.store)
        if before is None:
            end, tail = f.size, True
        else:
            c = parse_cursor(before)
            if c is None:
                raise CursorInvalid(f"{before!r} is not a cursor this host issued")
            f.check(c)
            end, tail = c.offset, False
            if c.part:
                line, n = f.forward(c.offset, c.size)
                self.read += n
                self._record(c.offset, line, below=c.part)
        truncated = False
        if not self.full:
            truncated = self._scan(end, tail)
        older = None if self.resume is None or self.resume == (0, 0) else (
            f.cursor(*self.resume))
        return Page(tuple(self.entries), older, truncated, self.session or head, self.read)

    def _record(self, start: int, line: bytes | None, below: int | None = None) -> None:
        """One whole record: its events, newest first, onto the page (those before part
        `below` only: the cursor's own record)."""
        events, session = _parse(self.store, line)
        if below is not None:
            if below > len(events):
                raise CursorInvalid("the record at this cursor no longer holds its event")
            events = events[:below]
        if self.session is None and session is not None:
            self.session = session
        last = self.limits.last
        part = len(events)
        while part > 0 and len(self.entries) < last:
            part -= 1
            self.entries.append(Entry(self.f.cursor(start, part), events[part]))
        self.resume = (start, part)
        if len(self.entries) >= last:
            self.full = True

    def _scan(self, end: int, tail: bool) -> bool:
        """Records before `end`, newest first, until the page is full, the budget is
        spent (True) or the file's start. `tail`: the bytes after the last newline are
        an unfinished line (left out)."""
        f, budget = self.f, self.limits.read_bytes
        pending: list[bytes] = []  # the record in progress, newest piece first
        held = 0  # its bytes so far
        oversized = False
        # where the first chunk's records end: just before the newline at end - 1 (a
        # cursor's record starts at end), or at the file's last newline (`tail`)
        first = _TAIL if tail else _CURSOR
        pos = end
        while pos > 0:
            if self.read >= budget and self.resume is not None:
                return True
            n = min(self.chunk, pos)
            pos -= n
            chunk = f.pread(n, pos)
            self.read += n
            j = n - 1 if first == _CURSOR else chunk.rfind(b"\n") if first == _TAIL else n
            if j < 0:
                continue  # all of it is the unfinished line
            first = ""
            while True:
                i = chunk.rfind(b"\n", 0, j)
                if i < 0:
                    break
                if oversized or held + j - i - 1 > MAX_RECORD:
                    line = None
                elif pending:
                    pending.append(chunk[i + 1:j])
                    line = b"".join(reversed(pending))
                else:
                    line = chunk[i + 1:j]
                pending, held, oversized = [], 0, False
                if line is None or line.strip():
                    self._record(pos + i + 1, line)
                    if self.full:
                        return False
                j = i
            if j > 0 and not oversized:
                pending.append(chunk[:j])
                held += j
                if held > MAX_RECORD:
                    pending, oversized = [], True
        if first == _TAIL:
            return False  # one unfinished line, nothing else
        line = None if oversized or held > MAX_RECORD else b"".join(reversed(pending))
        if line is None or line.strip():
            self._record(0, line)
        else:
            self.resume = (0, 0)
        return False

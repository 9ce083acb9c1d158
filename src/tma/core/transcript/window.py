"""A page of a transcript as the protocol carries it (pure): the limits, the cursor, the
header an event becomes, and which of a page's headers fit a frame.

Limits ("the device asks and the host clamps"): every field a caller names is
min(asked, the host's), and never below a floor that lets a page hold one event:

- `header_bytes` (256): every string a header carries (a preview, a tool's name, a
  session's cwd, each of a call's argument keys) is cut to this many UTF-8 bytes;
- `read_bytes` (1 MiB): what one call reads of the file (a page that needs more stops
  there, `budget_truncated`), save to finish the one record a page must hold to move on;
- `frame_bytes` (32 KiB): the encoded `window` frame, its newline included;
- `last` (200, 1..1000): events a page holds at most;
- a record over MAX_RECORD (8 MiB) is never parsed.

A cursor names one event: `t1.<dev>.<ino>.<size>.<offset>.<part>` in lowercase hex: the
file (device and inode), its size when the page was read, the byte offset where the
event's record starts and the event's place among its record's events. It addresses the
same bytes while the file only grows (same device and inode, size at least the cursor's,
the offset inside it); anything else is `cursor-invalid`. `older` is the cursor of a
page's oldest event, passed back as `before` (exclusive) for the page before it.
"""

from __future__ import annotations

import json

from tma.core import proto
from tma.core.record import Record
from tma.core.transcript.event import Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

HEADER_BYTES = 256
READ_BYTES = 1 << 20
FRAME_BYTES = 32 << 10
LAST = 200
LAST_MAX = 1000
MAX_RECORD = 8 << 20
#: A page is read backwards in chunks of this size.
CHUNK = 64 << 10
#: The floors a caller's budget is raised to: a header's strings keep a word, a call reads
#: at least a chunk, and a frame holds at least one event whatever its strings.
HEADER_FLOOR = 16
FRAME_FLOOR = 4 << 10
#: At most this many of a tool call's argument keys travel in its header.
ARG_KEYS_MAX = 32
#: An `event` answer's body is cut to this many UTF-8 bytes (a device reads lines up to
#: 8 MiB; a record's text may be as long).
BODY_BYTES = 1 << 20

PREFIX = "t1"
ELLIPSIS = "…"


class Limits(Record, frozen=True):
    """One call's clamped budget (`clamp`)."""

    header_bytes: int = HEADER_BYTES
    read_bytes: int = READ_BYTES
    frame_bytes: int = FRAME_BYTES
    last: int = LAST


def clamp(last: int | None = None, budget: proto.Budget | None = None) -> Limits:
    """The host's limits lowered to what the caller asked, never raised; a value below its
    floor is the floor (`last`: 1..LAST_MAX, LAST when not asked)."""
    n = LAST if last is None else min(max(last, 1), LAST_MAX)
    if budget is None:
        return Limits(last=n)
    return Limits(max(HEADER_FLOOR, min(budget.header_bytes, HEADER_BYTES)),
                  max(CHUNK, min(budget.read_bytes, READ_BYTES)),
                  max(FRAME_FLOOR, min(budget.frame_bytes, FRAME_BYTES)), n)


# --- cursors -----------------------------------------------------------------------------


class Cursor(Record, frozen=True):
    dev: int
    ino: int
    size: int
    offset: int
    part: int

    def text(self) -> str:
        return (f"{PREFIX}.{self.dev:x}.{self.ino:x}.{self.size:x}.{self.offset:x}."
                f"{self.part:x}")

    def addresses(self, dev: int, ino: int, size: int) -> bool:
        """Does it still name its bytes in the file (dev, ino) that is now `size` long?"""
        return (dev == self.dev and ino == self.ino and size >= self.size
                and self.offset < self.size)


_HEX = frozenset("0123456789abcdef")


def parse_cursor(text: str) -> Cursor | None:
    """A cursor this format names, or None (a cursor another store issued, or garbage)."""
    parts = text.split(".")
    if len(parts) != 6 or parts[0] != PREFIX:
        return None
    nums = []
    for p in parts[1:]:
        if not 0 < len(p) <= 16 or not _HEX.issuperset(p) or (len(p) > 1 and p[0] == "0"):
            return None
        nums.append(int(p, 16))
    return Cursor(*nums)


# --- headers -----------------------------------------------------------------------------


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes; a cut one ends in an ellipsis."""
    if len(text) <= limit // 4:
        return text  # even 4-byte characters fit
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    keep = raw[: max(0, limit - len(ELLIPSIS.encode()))]
    return keep.decode("utf-8", "ignore") + ELLIPSIS


def _value(v: object, limit: int) -> object:
    if isinstance(v, str):
        return cut(v, limit)
    if isinstance(v, (list, tuple)):
        return [_value(x, limit) for x in v[:ARG_KEYS_MAX]]
    if isinstance(v, float) and v != v:  # NaN is not JSON
        return None
    return v


def header(cursor: str, ev: Event, header_bytes: int = HEADER_BYTES, *,
           body: bool = False) -> proto.EventHeader:
    """The protocol's header of one event: its strings cut to `header_bytes`; with `body`,
    the event's whole text (cut at BODY_BYTES), as an `event` answer carries it."""
    data = {k: _value(v, header_bytes) for k, v in ev.data.items()}
    if ev.kind == "session_meta":  # the wire's session names are strings ("" unknown)
        data = {k: "" if v is None else v for k, v in data.items()}
    ts = None if ev.ts is None else cut(ev.ts, header_bytes)
    preview = None if ev.preview is None else cut(ev.preview, header_bytes)
    full = None
    if body and ev.body is not None:
        full = proto.EventBody(ev.body[0], cut(ev.body[1], BODY_BYTES))
    return proto.EventHeader(cursor, ev.kind, data, ts, preview, full)  # type: ignore[arg-type]


def session_meta(ev: Event | None, header_bytes: int = HEADER_BYTES) -> proto.SessionMeta | None:
    """A session_meta event as the window's `session` (a missing value is "")."""
    if ev is None or ev.kind != "session_meta":
        return None

    def s(key: str) -> str:
        v = ev.data.get(key)
        return cut(v, header_bytes) if isinstance(v, str) else ""

    return proto.SessionMeta(s("agent"), s("session_id"), s("cwd"), s("version"), s("model"))


def _header_size(h: proto.EventHeader, dumps: Callable[[object], str]) -> int:
    doc: dict[str, object] = {"cursor": h.cursor, "kind": h.kind}
    doc.update(h.data)
    doc["ts"], doc["preview"], doc["body"] = h.ts, h.preview, None
    return len(dumps(doc).encode("utf-8"))


class Fitted(Record, frozen=True):
    """A window's events: how many of the page's headers fit, and whether the frame's
    byte budget is what cut them."""

    count: int
    cut: bool


def fit(headers: Sequence[proto.EventHeader], frame_bytes: int,
        frame: Callable[[int], proto.Window]) -> Fitted:
    """How many of `headers` (newest first) a window holds within `frame_bytes` (its
    encoded line, newline included); always at least one. `frame(n)` builds the window
    with the first n (its `older` and `unknown` as they would be)."""

    def dumps(doc: object) -> str:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    if not headers:
        return Fitted(0, False)
    base = len(proto.encode(frame(0)))
    total, n = base, 0
    for h in headers:
        size = _header_size(h, dumps) + (1 if n else 0)  # the comma between two
        if total + size > frame_bytes and n:
            break
        total += size
        n += 1
    # `older` grows by a few hex digits once it names an event: make sure, once
    while n > 1 and len(proto.encode(frame(n))) > frame_bytes:
        n -= 1
    return Fitted(n, n < len(headers))


# --- the last answer -----------------------------------------------------------------------


class Turns(Record, frozen=True):
    """The assistant text of the newest `turns` turns that have any: `cursors` oldest
    first; `complete` once a user message older than the oldest of them was seen (or the
    transcript's start), so no older page can add to them."""

    cursors: tuple[str, ...]
    complete: bool


def last_turns(headers: Iterable[tuple[str, str]], turns: int, *, at_start: bool) -> Turns:
    """(cursor, kind) pairs, newest first, across as many pages as were read -> the
    assistant_text cursors of the newest `turns` turns with text. A turn is what follows
    a user message; a turn without assistant text (one still working) is not counted."""
    picked: list[str] = []
    done = 0
    current = 0  # assistant texts seen since the last user message (newer ones)
    for cursor, kind in headers:
        if kind == "assistant_text":
            picked.append(cursor)
            current += 1
        elif kind == "user_message" and current:
            done += 1
            current = 0
            if done >= turns:
                return Turns(tuple(reversed(picked)), True)
    return Turns(tuple(reversed(picked)), at_start)


# --- the pending call ----------------------------------------------------------------------


def unanswered(events: Iterable[tuple[str, dict[str, object]]]) -> int | None:
    """(kind, data) pairs, newest first -> the index of the one tool call no result
    answers yet in the running turn (None: none). A turn's end or a user message newer
    than every unanswered call means the turn moved on: nothing is pending. Two or more
    unanswered (parallel calls: one waits for its approval while another runs) name
    none: which one the dialog asks about is the screen's to say, not the newest's."""
    answered: set[object] = set()
    found: int | None = None
    for i, (kind, data) in enumerate(events):
        if kind == "tool_result":
            answered.add(data.get("call_id"))
        elif kind == "user_message" or (kind == "turn_boundary"
                                        and data.get("boundary") == "end"):
            break
        elif kind == "tool_call":
            call = data.get("call_id")
            if call is not None and call not in answered:
                if found is not None:
                    return None
                found = i
    return found

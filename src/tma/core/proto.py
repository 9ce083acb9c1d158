"""The remote wire protocol (schema 1): its frames as typed records, read and written.

A device talks to `tma serve` over a pipe (ssh's stdin and stdout): NDJSON, one JSON
object per line each way. Every frame carries the envelope `schema`, `id`, `t` flat
beside its own keys. This module is the pure half of that: `LineSplitter` cuts a byte
stream into lines under the host's input limits, `parse_line` turns one line into a
typed frame or raises `ProtoError` (whose `code` is what the host answers), and `dumps`
writes a frame in its compact one-line form.

Key order on the wire is pinned, so the records declare their fields in wire order and
`dumps` writes them in that order. Two rules decide what an empty value becomes: a
request's optional field is left out (`OMIT`), and a key a host row always carries stays
an explicit `null`. Unknown keys are ignored when read (so a newer peer's additions
pass) and therefore dropped when written. Open vocabularies (detail, outcome, reason,
option kind, error code, lane, extraction) keep a token this build does not know; the
pane state set is closed and a state outside it is a bad request.

Pure: no I/O and no clock. `tma card` and `tma ls --json` (a blocked pane's card) load
it as well as the serve process and its clients, so importing it costs next to nothing:
the records are slotted `Record`s (tma.core.record; `dataclasses` costs ~8 ms of `inspect`
and `re`, and each slotted dataclass is built twice), the type names exist for the type
checker only, and `json` is imported by the first line read or written.
"""

from __future__ import annotations

from tma.core.event_kinds import KINDS
from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Final, Literal, TypeAlias

SCHEMA: Final = 1

#: The longest request line the host reads, newline excluded.
MAX_LINE_BYTES: Final = 64 * 1024
#: The longest dispatch text the host fires (checked when dispatching, not when parsing).
MAX_DISPATCH_TEXT_BYTES: Final = 4 * 1024
#: The id a refusal carries when no request has been read yet.
NO_REQUEST_ID: Final = "0"

REQUEST: Final = "request"  # device -> host
RESPONSE: Final = "response"  # host -> device

# error codes (an open vocabulary: an unknown code is kept as it arrived)
UNSUPPORTED_SCHEMA: Final = "unsupported-schema"
BAD_REQUEST: Final = "bad-request"
NOT_FOUND: Final = "not-found"
CURSOR_INVALID: Final = "cursor-invalid"
SCOPE_DENIED: Final = "scope-denied"
TOO_MANY_CONNECTIONS: Final = "too-many-connections"
UNSUPPORTED: Final = "unsupported"
INTERNAL: Final = "internal"
ERROR_CODES: Final = (UNSUPPORTED_SCHEMA, BAD_REQUEST, NOT_FOUND, CURSOR_INVALID, SCOPE_DENIED,
                      TOO_MANY_CONNECTIONS, UNSUPPORTED, INTERNAL)

#: The pane states a row or an edge may name: closed, unlike every other vocabulary.
STATES: Final = frozenset({"idle", "working", "blocked", "unknown"})
#: A selector may also ask for `done` panes.
SELECTOR_STATES: Final = STATES | {"done"}
#: An edge's open end (a pane appearing or going away) is the empty string.
EDGE_STATES: Final = STATES | {""}

#: Requests this release parses but answers with `unsupported` (none: `window` and `event`
#: are served since the transcript readers; a pane whose store tma cannot read is still
#: answered `unsupported`, saying why).
UNSUPPORTED_REQUESTS: Final[frozenset[str]] = frozenset()

if TYPE_CHECKING:
    Direction: TypeAlias = Literal["request", "response"]
    JsonValue: TypeAlias = (None | bool | int | float | str | list["JsonValue"]
                            | dict[str, "JsonValue"])
    JsonObject: TypeAlias = dict[str, JsonValue]


class ProtoError(Exception):
    """A line the host will not take: `code` is the error frame's code, `id` the request's
    id when the line got far enough to name one."""

    def __init__(self, code: str, message: str, id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id

    def frame(self) -> Error:
        """The error frame that answers it (`id` "0" when the line named none)."""
        return Error(self.id if self.id is not None else NO_REQUEST_ID, self.code, self.message)


# --- records -----------------------------------------------------------------------------
# Field order is wire order. A trailing underscore (`from_`) stands for a Python keyword.
# `OMIT` names the optional fields left out when None; every other None is written as null.


class Selector(Record, frozen=True):
    session: str | None = None
    repo: str | None = None
    branch: str | None = None
    agent: str | None = None
    state: tuple[str, ...] | None = None
    OMIT: ClassVar[frozenset[str]] = frozenset({"session", "repo", "branch", "agent", "state"})


class Budget(Record, frozen=True):
    header_bytes: int
    read_bytes: int
    frame_bytes: int
    OMIT: ClassVar[frozenset[str]] = frozenset()


class Binder(Record, frozen=True):
    """What a dispatch expects of the pane; `expect_episode_ms` 0 expects nothing."""

    expect_episode_ms: int
    expect_permission_request: str | None = None
    OMIT: ClassVar[frozenset[str]] = frozenset({"expect_permission_request"})


class Quota(Record, frozen=True):
    pct: int
    window: str
    resets_at_ms: int | None
    OMIT: ClassVar[frozenset[str]] = frozenset()


class FleetRow(Record, frozen=True):
    """One pane, as `tma ls --json` shows it less `title`. `stale`: true on a fleet host's
    row that `tma web` still shows while its host is offline (what was last heard), a
    later, optional addition: a reader that predates it ignores it, a host that predates
    it sends none, and `tma serve` never sets it (its rows are its own, live)."""

    pane: str
    agent: str
    state: str
    detail: str | None
    since: int  # epoch seconds
    since_ms: int
    episode_ms: int
    locator: str
    attention: bool
    done: bool
    session: str | None
    transcript: str | None
    permission_request: str | None
    stamped_at_ms: int | None
    context: int | None
    context_at_ms: int | None
    muted: bool
    tokens: int | None
    quota: Quota | None
    cost_usd: float | None
    repo: str | None
    branch: str | None
    worktree: bool | None
    pending_tool: str | None
    pending_call: str | None
    pending_summary: str | None
    server: str
    host: str
    stale: bool | None = None
    OMIT: ClassVar[frozenset[str]] = frozenset({"stale"})


class ReceiptRow(Record, frozen=True):
    """A dispatch's outcome, as the ledger keeps it (no envelope). `message`: the host's
    sentence for a person (why a refusal refused: "%1 is working, not at a permission
    prompt"), a later, optional addition: a reader that predates it ignores it, and a
    host that predates it sends none (clients branch on `outcome` and `reason` only)."""

    slot: str
    pane: str
    action: str
    outcome: str
    reason: str | None
    exit_code: int
    cached: bool
    device: str | None
    at_ms: int
    message: str | None = None
    OMIT: ClassVar[frozenset[str]] = frozenset({"device", "message"})


class CardOption(Record, frozen=True):
    kind: str
    name: str
    option_id: str | None = None  # none: the app shows the option but offers no key for it
    OMIT: ClassVar[frozenset[str]] = frozenset({"option_id"})


class PendingCall(Record, frozen=True):
    tool: str
    input: JsonObject
    call_id: str
    OMIT: ClassVar[frozenset[str]] = frozenset()


class QuestionOption(Record, frozen=True):
    label: str
    description: str
    OMIT: ClassVar[frozenset[str]] = frozenset()


class Question(Record, frozen=True):
    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multiple: bool
    custom: bool
    OMIT: ClassVar[frozenset[str]] = frozenset()


class SessionMeta(Record, frozen=True):
    agent: str
    session_id: str
    cwd: str
    version: str
    model: str
    OMIT: ClassVar[frozenset[str]] = frozenset()


class EventBody(Record, frozen=True):
    kind: str  # text | json
    text: str
    OMIT: ClassVar[frozenset[str]] = frozenset()


#: The keys each transcript event kind carries between `kind` and `ts`, in wire order.
EVENT_KINDS: Final = KINDS


class EventHeader(Record, frozen=True):
    """One transcript event. Its kind's own keys are kept as data, in wire order
    (EVENT_KINDS; a kind this build does not know keeps what it carries, as it came):
    tma.core.transcript builds them, so this record only carries them."""

    cursor: str
    kind: str
    data: JsonObject
    ts: str | None
    preview: str | None
    body: EventBody | None
    OMIT: ClassVar[frozenset[str]] = frozenset()


# --- frames ------------------------------------------------------------------------------


class Frame(Record, frozen=True):
    """The envelope's `id`; `T` is the frame type, `DIRECTION` which way it travels."""

    id: str
    T: ClassVar[str] = ""
    DIRECTION: ClassVar[Direction] = "request"
    OMIT: ClassVar[frozenset[str]] = frozenset()


class HelloRequest(Frame, frozen=True):
    app: str
    app_version: str
    device: str  # logged only: the forced command's --device is the identity
    T: ClassVar[str] = "hello"


class SnapshotRequest(Frame, frozen=True):
    selector: Selector | None = None
    T: ClassVar[str] = "snapshot"
    OMIT: ClassVar[frozenset[str]] = frozenset({"selector"})


class Subscribe(Frame, frozen=True):
    events: bool
    selector: Selector | None = None
    T: ClassVar[str] = "subscribe"
    OMIT: ClassVar[frozenset[str]] = frozenset({"selector"})


class CardRequest(Frame, frozen=True):
    pane: str
    T: ClassVar[str] = "card"


class WindowRequest(Frame, frozen=True):
    pane: str
    last: int | None = None
    before: str | None = None
    budget: Budget | None = None
    T: ClassVar[str] = "window"
    OMIT: ClassVar[frozenset[str]] = frozenset({"last", "before", "budget"})


class EventRequest(Frame, frozen=True):
    pane: str
    cursor: str
    T: ClassVar[str] = "event"


class Dispatch(Frame, frozen=True):
    slot: str  # the caller's idempotency key
    host: str
    pane: str
    action: str
    binder: Binder
    text: str | None = None
    answers: tuple[tuple[str, ...], ...] | None = None
    device: str | None = None
    T: ClassVar[str] = "dispatch"
    OMIT: ClassVar[frozenset[str]] = frozenset({"text", "answers", "device"})


class ReceiptsRequest(Frame, frozen=True):
    slot: str | None = None
    since_ms: int | None = None
    T: ClassVar[str] = "receipts"
    OMIT: ClassVar[frozenset[str]] = frozenset({"slot", "since_ms"})


class HelloResponse(Frame, frozen=True):
    host: str
    tma_version: str
    reconcile_interval_ms: int
    scopes: tuple[str, ...]
    T: ClassVar[str] = "hello"
    DIRECTION: ClassVar[Direction] = "response"


class Snapshot(Frame, frozen=True):
    agents: tuple[FleetRow, ...]
    T: ClassVar[str] = "snapshot"
    DIRECTION: ClassVar[Direction] = "response"


class Ack(Frame, frozen=True):
    T: ClassVar[str] = "ack"
    DIRECTION: ClassVar[Direction] = "response"


class Edge(Frame, frozen=True):
    at_ms: int
    pane: str
    agent: str
    from_: str  # "" when the pane just appeared
    to: str  # "" when the pane went away
    detail: str | None
    locator: str
    repo: str | None
    branch: str | None
    #: the row's host, for a stream of many hosts' rows (`tma web`); left out by a
    #: host that streams its own (`tma serve`). A later, optional addition.
    host: str | None = None
    T: ClassVar[str] = "edge"
    DIRECTION: ClassVar[Direction] = "response"
    OMIT: ClassVar[frozenset[str]] = frozenset({"host"})


class PermissionCard(Frame, frozen=True):
    pane: str
    agent: str
    lane: str  # hook | api | screen
    options: tuple[CardOption, ...]
    extraction: str  # exact | wrapped | failed: only exact lets the app draw the controls
    pending_call: PendingCall | None
    binder: Binder
    T: ClassVar[str] = "card"
    CARD: ClassVar[str] = "permission"
    DIRECTION: ClassVar[Direction] = "response"


class QuestionCard(Frame, frozen=True):
    pane: str
    agent: str
    request_id: str
    questions: tuple[Question, ...]
    binder: Binder
    T: ClassVar[str] = "card"
    CARD: ClassVar[str] = "question"
    DIRECTION: ClassVar[Direction] = "response"


class InformationalCard(Frame, frozen=True):
    """Any other blocked detail: something to read, never a control to press."""

    detail: str
    headline: str
    T: ClassVar[str] = "card"
    CARD: ClassVar[str] = "informational"
    DIRECTION: ClassVar[Direction] = "response"


class NoCard(Frame, frozen=True):
    """The pane is not blocked."""

    T: ClassVar[str] = "card"
    CARD: ClassVar[str] = "none"
    DIRECTION: ClassVar[Direction] = "response"


class Window(Frame, frozen=True):
    pane: str
    agent: str
    session: SessionMeta | None
    older: str | None
    budget_truncated: bool
    unknown: int
    events: tuple[EventHeader, ...]  # newest first, bodies null
    T: ClassVar[str] = "window"
    DIRECTION: ClassVar[Direction] = "response"


class Event(Frame, frozen=True):
    header: EventHeader  # written inline, beside the envelope
    T: ClassVar[str] = "event"
    DIRECTION: ClassVar[Direction] = "response"


class Receipt(Frame, frozen=True):
    receipt: ReceiptRow  # written inline, beside the envelope
    T: ClassVar[str] = "receipt"
    DIRECTION: ClassVar[Direction] = "response"


class Receipts(Frame, frozen=True):
    receipts: tuple[ReceiptRow, ...]
    T: ClassVar[str] = "receipts"
    DIRECTION: ClassVar[Direction] = "response"


class Error(Frame, frozen=True):
    code: str  # clients branch on this
    message: str  # for a human
    T: ClassVar[str] = "error"
    DIRECTION: ClassVar[Direction] = "response"


if TYPE_CHECKING:
    Request: TypeAlias = (HelloRequest | SnapshotRequest | Subscribe | CardRequest
                          | WindowRequest | EventRequest | Dispatch | ReceiptsRequest)
    Card: TypeAlias = PermissionCard | QuestionCard | InformationalCard | NoCard
    Response: TypeAlias = (HelloResponse | Snapshot | Ack | Edge | Card | Window | Event
                           | Receipt | Receipts | Error)

_INLINE: Final = frozenset({"header", "receipt"})  # Event's and Receipt's body fields


def unsupported(request: Request) -> Error:
    """The answer to a request this release parses but does not serve."""
    return Error(request.id, UNSUPPORTED, f"this host does not serve {request.T!r} yet")


# --- writing -----------------------------------------------------------------------------


def _value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_value(v) for v in value]
    if hasattr(value, "OMIT"):
        return _object(value)
    return value


def _object(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(record, EventHeader):
        out["cursor"] = record.cursor
        out["kind"] = record.kind
        out.update(record.data)
        out["ts"], out["preview"] = record.ts, record.preview
        out["body"] = _value(record.body)
        return out
    omit = record.OMIT
    for name, _default in record._fields:
        value = getattr(record, name)
        if name in _INLINE and isinstance(record, Frame):
            out.update(_object(value))
        elif value is not None or name not in omit:
            out[name.rstrip("_")] = _value(value)
    return out


def to_wire(frame: Frame) -> dict[str, Any]:
    """The frame as a JSON object, envelope first, keys in wire order."""
    out: dict[str, Any] = {"schema": SCHEMA, "id": frame.id, "t": frame.T}
    card = getattr(frame, "CARD", None)
    if card is not None:
        out["card"] = card
    body = _object(frame)
    del body["id"]
    out.update(body)
    return out


def dumps(frame: Frame) -> str:
    """The compact one-line wire form, without its newline. Non-ASCII text is written as
    UTF-8, not escaped; NaN and infinities are refused (ValueError)."""
    import json  # ~1.5 ms: only once a frame is written

    return json.dumps(to_wire(frame), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode(frame: Frame) -> bytes:
    """One wire line: the frame, its newline, in UTF-8."""
    return (dumps(frame) + "\n").encode("utf-8")


# --- framing -----------------------------------------------------------------------------


class LineSplitter:
    """Cuts a byte stream into lines under the host's cap. `feed` returns the complete
    lines (newline removed) and, for each over-long one, a `ProtoError` to answer; the
    rest of an over-long line is skipped up to its newline. Whatever is pending when the
    stream ends is a fragment and is dropped (`pending` says what it was)."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self.pending = b""
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | ProtoError]:
        out: list[bytes | ProtoError] = []
        data = self.pending + chunk
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            elif end - start > self.limit:
                out.append(_too_long(self.limit))
            else:
                out.append(data[start:end])
            start = end + 1
        rest = data[start:]
        if not self._skipping and len(rest) > self.limit:
            out.append(_too_long(self.limit))
            self._skipping = True
        self.pending = b"" if self._skipping else rest
        return out


def _too_long(limit: int = MAX_LINE_BYTES) -> ProtoError:
    return ProtoError(BAD_REQUEST, f"line longer than {limit} bytes")


# --- reading -----------------------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: bytes | str, direction: Direction, *,
               limit: int = MAX_LINE_BYTES) -> Frame:
    """One line (its newline optional) -> its typed frame. `direction` says which side
    sent it: "request" (device to host) or "response" (host to device); `limit` is the
    longest line taken (a device reading a host's snapshot allows more). Raises
    `ProtoError`: `unsupported-schema` for a schema other than 1, `bad-request` for the
    rest (too long, not UTF-8, not JSON, not an object, unknown `t`, wrong shape)."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if len(raw) > limit:
        raise _too_long(limit)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtoError(BAD_REQUEST, "line is not UTF-8") from None
    import json  # ~1.5 ms: only once a line is read

    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ValueError as e:  # JSONDecodeError is one
        raise ProtoError(BAD_REQUEST, f"not a JSON line: {e}") from None
    if not isinstance(doc, dict):
        raise ProtoError(BAD_REQUEST, "a frame is a JSON object")
    id_ = doc.get("id")
    rid = id_ if isinstance(id_, str) else None
    schema = doc.get("schema")
    if type(schema) is not int:
        raise ProtoError(BAD_REQUEST, "the frame has no integer `schema`", rid)
    if schema != SCHEMA:  # checked before anything else about the frame's shape
        raise ProtoError(UNSUPPORTED_SCHEMA, f"this host speaks protocol schema {SCHEMA}; "
                         f"the frame is schema {schema}", rid)
    if rid is None:
        raise ProtoError(BAD_REQUEST, "the frame has no string `id`")
    t = doc.get("t")
    table = _REQUESTS if direction == REQUEST else _RESPONSES
    reader = table.get(t) if isinstance(t, str) else None
    if reader is None:
        raise ProtoError(BAD_REQUEST, f"unknown frame type {t!r}", rid)
    try:
        return reader(_Obj(doc, ""), rid)
    except _Shape as e:
        raise ProtoError(BAD_REQUEST, str(e), rid) from None


class _Shape(Exception):
    """A key is missing or of the wrong type (becomes a bad-request)."""


class _Obj:
    """A JSON object being read, with the path of keys that led to it (for messages)."""

    __slots__ = ("doc", "path")

    def __init__(self, doc: dict[str, Any], path: str) -> None:
        self.doc = doc
        self.path = path

    def _where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, optional: bool) -> Any:
        if key not in self.doc or self.doc[key] is None:
            if optional:
                return None
            raise _Shape(f"`{self._where(key)}` is required")
        return self.doc[key]

    def _bad(self, key: str, what: str) -> _Shape:
        return _Shape(f"`{self._where(key)}` must be {what}")

    def string(self, key: str) -> str:
        v = self._get(key, False)
        return self._check_str(key, v)

    def opt_string(self, key: str) -> str | None:
        v = self._get(key, True)
        return None if v is None else self._check_str(key, v)

    def _check_str(self, key: str, v: Any) -> str:
        if not isinstance(v, str):
            raise self._bad(key, "a string")
        _text(v, self._where(key))
        return v

    def integer(self, key: str) -> int:
        v = self._get(key, False)
        if type(v) is not int:
            raise self._bad(key, "an integer")
        return v

    def opt_integer(self, key: str) -> int | None:
        return None if self._get(key, True) is None else self.integer(key)

    def boolean(self, key: str) -> bool:
        v = self._get(key, False)
        if type(v) is not bool:
            raise self._bad(key, "true or false")
        return v

    def opt_boolean(self, key: str) -> bool | None:
        return None if self._get(key, True) is None else self.boolean(key)

    def opt_number(self, key: str) -> float | None:
        v = self._get(key, True)
        if v is None:
            return None
        if type(v) not in (int, float):
            raise self._bad(key, "a number")
        return float(v)

    def object(self, key: str) -> _Obj:
        v = self._get(key, False)
        if not isinstance(v, dict):
            raise self._bad(key, "an object")
        return _Obj(v, self._where(key))

    def opt_object(self, key: str) -> _Obj | None:
        return None if self._get(key, True) is None else self.object(key)

    def objects(self, key: str) -> list[_Obj]:
        v = self._get(key, False)
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise self._bad(key, "a list of objects")
        return [_Obj(x, f"{self._where(key)}[{i}]") for i, x in enumerate(v)]

    def strings(self, key: str) -> tuple[str, ...]:
        v = self._get(key, False)
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self._bad(key, "a list of strings")
        for x in v:
            _text(x, self._where(key))
        return tuple(v)

    def opt_strings(self, key: str) -> tuple[str, ...] | None:
        return None if self._get(key, True) is None else self.strings(key)

    def state(self, key: str, allowed: frozenset[str]) -> str:
        v = self.string(key)
        if v not in allowed:
            raise self._bad(key, "one of " + ", ".join(repr(s) for s in sorted(allowed)))
        return v


def _text(v: str, where: str) -> None:
    if not v.isascii():
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from a \u escape
            raise _Shape(f"`{where}` is not valid Unicode text") from None


def _selector(o: _Obj | None) -> Selector | None:
    if o is None:
        return None
    states = o.opt_strings("state")
    for s in states or ():
        if s not in SELECTOR_STATES:
            raise _Shape(f"`{o.path}.state` has an unknown state {s!r}")
    return Selector(o.opt_string("session"), o.opt_string("repo"), o.opt_string("branch"),
                    o.opt_string("agent"), states)


def _binder(o: _Obj) -> Binder:
    return Binder(o.integer("expect_episode_ms"), o.opt_string("expect_permission_request"))


def _quota(o: _Obj | None) -> Quota | None:
    if o is None:
        return None
    return Quota(o.integer("pct"), o.string("window"), o.opt_integer("resets_at_ms"))


def _fleet_row(o: _Obj) -> FleetRow:
    return FleetRow(
        o.string("pane"), o.string("agent"), o.state("state", STATES), o.opt_string("detail"),
        o.integer("since"), o.integer("since_ms"), o.integer("episode_ms"), o.string("locator"),
        o.boolean("attention"), o.boolean("done"), o.opt_string("session"), o.opt_string("transcript"),
        o.opt_string("permission_request"), o.opt_integer("stamped_at_ms"), o.opt_integer("context"),
        o.opt_integer("context_at_ms"), o.boolean("muted"), o.opt_integer("tokens"),
        _quota(o.opt_object("quota")), o.opt_number("cost_usd"), o.opt_string("repo"),
        o.opt_string("branch"), o.opt_boolean("worktree"), o.opt_string("pending_tool"),
        o.opt_string("pending_call"), o.opt_string("pending_summary"), o.string("server"),
        o.string("host"), o.opt_boolean("stale"))


def _receipt_row(o: _Obj) -> ReceiptRow:
    return ReceiptRow(o.string("slot"), o.string("pane"), o.string("action"), o.string("outcome"),
                      o.opt_string("reason"), o.integer("exit_code"), o.boolean("cached"),
                      o.opt_string("device"), o.integer("at_ms"), o.opt_string("message"))


def _event_header(o: _Obj) -> EventHeader:
    kind = o.string("kind")
    known = EVENT_KINDS.get(kind)
    if known is not None:
        missing = [k for k in known if k not in o.doc]
        if missing:
            raise _Shape(f"a {kind} event needs {', '.join(missing)}")
        data = {k: o.doc[k] for k in known}
    else:  # a kind this build does not know: keep what it carries, in arrival order
        data = {k: v for k, v in o.doc.items()
                if k not in ("schema", "id", "t", "cursor", "kind", "ts", "preview", "body")}
    body = o.opt_object("body")
    return EventHeader(o.string("cursor"), kind, data, o.opt_string("ts"), o.opt_string("preview"),
                       None if body is None else EventBody(body.string("kind"), body.string("text")))


def _card(o: _Obj, rid: str) -> Frame:
    card = o.string("card")
    if card == "permission":
        options = tuple(CardOption(x.string("kind"), x.string("name"), x.opt_string("option_id"))
                        for x in o.objects("options"))
        call = o.opt_object("pending_call")
        pending = None if call is None else PendingCall(call.string("tool"), call.object("input").doc,
                                                        call.string("call_id"))
        return PermissionCard(rid, o.string("pane"), o.string("agent"), o.string("lane"), options,
                              o.string("extraction"), pending, _binder(o.object("binder")))
    if card == "question":
        questions = tuple(
            Question(q.string("question"), q.string("header"),
                     tuple(QuestionOption(x.string("label"), x.string("description"))
                           for x in q.objects("options")),
                     q.boolean("multiple"), q.boolean("custom"))
            for q in o.objects("questions"))
        return QuestionCard(rid, o.string("pane"), o.string("agent"), o.string("request_id"), questions,
                            _binder(o.object("binder")))
    if card == "informational":
        return InformationalCard(rid, o.string("detail"), o.string("headline"))
    if card == "none":
        return NoCard(rid)
    raise _Shape(f"unknown card variant {card!r}")


def _answers(o: _Obj) -> tuple[tuple[str, ...], ...] | None:
    v = o.doc.get("answers")
    if v is None:
        return None
    if not isinstance(v, list) or not all(
            isinstance(a, list) and all(isinstance(s, str) for s in a) for a in v):
        raise _Shape("`answers` must be a list of lists of strings")
    for a in v:
        for s in a:
            _text(s, "answers")
    return tuple(tuple(a) for a in v)


def _receipts_request(o: _Obj, rid: str) -> ReceiptsRequest:
    frame = ReceiptsRequest(rid, o.opt_string("slot"), o.opt_integer("since_ms"))
    if frame.slot is None and frame.since_ms is None:
        raise _Shape("a receipts request names a `slot`, a `since_ms` or both")
    return frame


def _window_request(o: _Obj, rid: str) -> WindowRequest:
    b = o.opt_object("budget")
    budget = None if b is None else Budget(b.integer("header_bytes"), b.integer("read_bytes"),
                                           b.integer("frame_bytes"))
    return WindowRequest(rid, o.string("pane"), o.opt_integer("last"), o.opt_string("before"), budget)


def _window(o: _Obj, rid: str) -> Window:
    s = o.opt_object("session")
    session = None if s is None else SessionMeta(s.string("agent"), s.string("session_id"),
                                                 s.string("cwd"), s.string("version"), s.string("model"))
    return Window(rid, o.string("pane"), o.string("agent"), session, o.opt_string("older"),
                  o.boolean("budget_truncated"), o.integer("unknown"),
                  tuple(_event_header(e) for e in o.objects("events")))


if TYPE_CHECKING:
    _Reader: TypeAlias = Callable[[_Obj, str], Frame]

_REQUESTS: Final[dict[str, _Reader]] = {
    "hello": lambda o, rid: HelloRequest(rid, o.string("app"), o.string("app_version"),
                                         o.string("device")),
    "snapshot": lambda o, rid: SnapshotRequest(rid, _selector(o.opt_object("selector"))),
    "subscribe": lambda o, rid: Subscribe(rid, o.boolean("events"),
                                          _selector(o.opt_object("selector"))),
    "card": lambda o, rid: CardRequest(rid, o.string("pane")),
    "window": _window_request,
    "event": lambda o, rid: EventRequest(rid, o.string("pane"), o.string("cursor")),
    "dispatch": lambda o, rid: Dispatch(rid, o.string("slot"), o.string("host"), o.string("pane"),
                                        o.string("action"), _binder(o.object("binder")),
                                        o.opt_string("text"), _answers(o), o.opt_string("device")),
    "receipts": _receipts_request,
}

_RESPONSES: Final[dict[str, _Reader]] = {
    "hello": lambda o, rid: HelloResponse(rid, o.string("host"), o.string("tma_version"),
                                          o.integer("reconcile_interval_ms"), o.strings("scopes")),
    "snapshot": lambda o, rid: Snapshot(rid, tuple(_fleet_row(r) for r in o.objects("agents"))),
    "ack": lambda o, rid: Ack(rid),
    "edge": lambda o, rid: Edge(rid, o.integer("at_ms"), o.string("pane"), o.string("agent"),
                                o.state("from", EDGE_STATES), o.state("to", EDGE_STATES),
                                o.opt_string("detail"), o.string("locator"), o.opt_string("repo"),
                                o.opt_string("branch"), o.opt_string("host")),
    "card": _card,
    "window": _window,
    "event": lambda o, rid: Event(rid, _event_header(o)),
    "receipt": lambda o, rid: Receipt(rid, _receipt_row(o)),
    "receipts": lambda o, rid: Receipts(rid, tuple(_receipt_row(r) for r in o.objects("receipts"))),
    "error": lambda o, rid: Error(rid, o.string("code"), o.string("message")),
}

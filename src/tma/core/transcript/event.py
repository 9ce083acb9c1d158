"""One transcript event, before it gets its cursor: what a store module returns.

A store module (tma.core.transcript.<store>) exposes:

    NAME: str                                   # the agent, as the manifests name it
    def events(record: dict) -> list[Event]     # one parsed record -> its events, in order
    def session(record: dict) -> Event | None   # a session_meta event, when this record
                                                # says who/where the session is

`events` is pure and sees one record only (no state across records): a record whose
type the module does not know is one `unknown` event naming the type (never an
error), a record that only restates bookkeeping is one `bookkeeping` event, and a
store that writes one fact twice (Codex) takes it from one of the two record kinds
only. A record that yields several events (an assistant message with text and tool
calls) yields them in their order in the record: the reader numbers them (the
cursor's part).
"""

from __future__ import annotations

#: The keys each kind carries, in wire order: a store module fills exactly these.
from tma.core.event_kinds import KINDS as KINDS
from tma.core.record import Record


class Event(Record):
    """`data`: the kind's keys (KINDS) with their values; `ts` the record's time as the
    store writes it (ISO 8601) or None; `preview` the first words of the text, or None;
    `body`: ("text" | "json", the whole text) — what an `event` request returns."""

    kind: str
    data: dict[str, object]
    ts: str | None = None
    preview: str | None = None
    body: tuple[str, str] | None = None


def make(kind: str, *, ts: str | None = None, preview: str | None = None,
         body: tuple[str, str] | None = None, **keys: object) -> Event:
    """An event of a known kind, its keys in wire order; ValueError for a key the kind
    does not carry or one it lacks (a store module's bug, caught by its tests)."""
    want = KINDS.get(kind)
    if want is None:
        raise ValueError(f"unknown event kind {kind!r}")
    if set(keys) != set(want):
        raise ValueError(f"a {kind} event carries {', '.join(want)}; got {', '.join(keys)}")
    return Event(kind, {k: keys[k] for k in want}, ts, preview, body)


def unknown(type_name: str, ts: str | None = None) -> Event:
    return make("unknown", type_name=type_name, ts=ts)

"""What the surfaces ask of a pane's transcript: a window of event headers, one event
with its body, the last answer. A pane's Target in (tma.runtime.transcript.locate), the
protocol's frames out, so `tma transcript`, `tma last`, doctor and `tma serve` read the
same pages.

Errors (tma.runtime.transcript.stores): NoTranscript (nothing to show, and why),
CursorInvalid, TooLarge; a file that went away is looked for again once before a read
gives up.
"""

from __future__ import annotations

from tma.core import proto
from tma.core.errors import NoPane
from tma.core.transcript.window import (
    Limits,
    clamp,
    fit,
    header,
    last_turns,
    session_meta,
    unanswered,
)
from tma.runtime.transcript import locate as L, page, stores
from tma.runtime.transcript.stores import Entry, NoTranscript, Page

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    T = TypeVar("T")

#: `last_answer` reads at most this many pages looking for its turns.
LAST_PAGES = 20


def target(session: Any, pane_id: str) -> L.Target:
    """The Target of a live pane after one poll cycle (the agent is the cycle's verdict):
    NoPane when the pane does not exist, NoTranscript when it runs no agent."""
    result = session.cycle()
    if all(p.pane_id != pane_id for p in result.snapshot.panes):
        raise NoPane(pane_id)
    row = next((r for r in result.rows if r.pane.pane_id == pane_id), None)
    if row is None:
        raise NoTranscript(f"{pane_id} runs no agent tma knows")
    return L.target_of(row)


def _read(t: L.Target, env: Mapping[str, str], fn: Callable[[L.Located], T]) -> T:
    """`fn` on the pane's transcript; a file that went away (or a hook's path that does
    not read) is looked for once more, from scratch."""
    loc = L.locate(t, env)
    if loc.path is None:
        raise NoTranscript(loc.why)
    try:
        return fn(loc)
    except NoTranscript:
        if stores.is_paged(loc.store):
            raise
        L.forget(t, env)
        again = L.locate(t, env, skip_hook=loc.how == L.HOOK, fresh=True)
        if again.path is None or again.path == loc.path:
            raise
        return fn(again)


def _page(loc: L.Located, before: str | None, limits: Limits, bodies: bool = False) -> Page:
    assert loc.path is not None
    if stores.is_paged(loc.store):
        if bodies and getattr(loc.store, "PAGES_BODIES", False):
            # one read of the page with its bodies: fetching each body alone re-lists
            # the whole session per event (22 s for a window of a 20,000-message one)
            return loc.store.page(loc.path, before, limits, bodies=True)
        return loc.store.page(loc.path, before, limits)
    return page.read_page(loc.path, loc.store, before=before, limits=limits)


def path_of(t: L.Target, env: Mapping[str, str]) -> L.Located:
    """Where the pane's transcript is (doctor names it), or why none."""
    return L.locate(t, env)


def window(t: L.Target, env: Mapping[str, str], *, last: int | None = None,
           before: str | None = None, budget: proto.Budget | None = None,
           rid: str = proto.NO_REQUEST_ID, bodies: bool = False) -> proto.Window:
    """The page of the pane's transcript before `before` (None: the newest) as the
    protocol's window: at most `last` headers, newest first, within the budget (the
    caller's, clamped to the host's). `bodies`: each header carries its event's body too
    (a local reader's document; the wire's window never does)."""
    limits = clamp(last, budget)

    def one(loc: L.Located) -> Page:
        pg = _page(loc, before, limits, bodies)
        return _with_bodies(loc, pg, limits) if bodies else pg

    pg = _read(t, env, one)
    return assemble(t, pg, limits, rid, bodies=bodies)


#: The kinds whose events have a body to fetch (a store that pages itself leaves them
#: out of a page).
BODY_KINDS = frozenset({"user_message", "assistant_text", "thinking", "tool_call",
                        "tool_result", "compaction", "attachment"})


def _with_bodies(loc: L.Located, pg: Page, limits: Limits) -> Page:
    """The page with each event's body, for a local reader's document: a JSONL store's
    page has them already; a store that pages itself (OpenCode's) leaves them out, so each
    is fetched as an `event` request would (one whose row went meanwhile stays without)."""
    if not stores.is_paged(loc.store) or all(
            e.event.body is not None or e.event.kind not in BODY_KINDS for e in pg.entries):
        return pg
    out = []
    for e in pg.entries:
        if e.event.body is None and e.event.kind in BODY_KINDS:
            try:
                e = loc.store.event(loc.path, e.cursor, limits)
            except stores.CursorInvalid:
                pass
        out.append(e)
    return pg.replace(entries=tuple(out))


def assemble(t: L.Target, pg: Page, limits: Limits, rid: str = proto.NO_REQUEST_ID, *,
             bodies: bool = False) -> proto.Window:
    """A page as a window frame that fits `limits.frame_bytes`."""
    entries = pg.entries
    heads = [header(e.cursor, e.event, limits.header_bytes) for e in entries]
    meta = session_meta(pg.session, limits.header_bytes)

    def frame(n: int) -> proto.Window:
        older = entries[n - 1].cursor if 0 < n < len(entries) else pg.older
        if n == 0 and entries:
            older = max((e.cursor for e in entries), key=len)  # the longest it may be
        unknown = sum(1 for h in heads[:n] if h.kind == "unknown")
        return proto.Window(rid, t.pane, t.agent, meta, older, pg.budget_truncated,
                            unknown, tuple(heads[:n]))

    fitted = fit(heads, limits.frame_bytes, frame)
    out = frame(fitted.count)
    if fitted.cut:
        out = out.replace(budget_truncated=True)
    if bodies:
        out = out.replace(events=tuple(header(e.cursor, e.event, limits.header_bytes, body=True)
                                       for e in entries[:fitted.count]))
    return out


def entry(t: L.Target, env: Mapping[str, str], cursor: str) -> Entry:
    """One event by its cursor, with its body."""

    def one(loc: L.Located) -> Entry:
        assert loc.path is not None
        if stores.is_paged(loc.store):
            return loc.store.event(loc.path, cursor, clamp())
        return page.read_event(loc.path, loc.store, cursor)

    return _read(t, env, one)


def event(t: L.Target, env: Mapping[str, str], cursor: str,
          rid: str = proto.NO_REQUEST_ID) -> proto.Event:
    """The protocol's `event` answer: one event with its body."""
    e = entry(t, env, cursor)
    return proto.Event(rid, header(e.cursor, e.event, body=True))


def last_answer(t: L.Target, env: Mapping[str, str], turns: int = 1) -> list[str]:
    """The assistant text of the newest `turns` turns that have any, oldest first (one
    string an event), reading back at most LAST_PAGES pages."""
    limits = clamp()
    seen: list[Entry] = []
    before: str | None = None
    for _ in range(LAST_PAGES):
        pg = _read(t, env, lambda loc, b=before: _page(loc, b, limits))  # type: ignore[misc]
        seen.extend(pg.entries)
        picked = last_turns(((e.cursor, e.event.kind) for e in seen), turns,
                            at_start=pg.older is None)
        if picked.complete or pg.older is None:
            break
        before = pg.older
    by_cursor = {e.cursor: e.event for e in seen}
    texts = []
    for cursor in picked.cursors:
        body = by_cursor[cursor].body
        if body is None:  # a store that gives no body in a page: ask for the event
            body = entry(t, env, cursor).event.body
        texts.append(body[1] if body is not None else "")
    return texts


def pending_call(t: L.Target, env: Mapping[str, str]) -> Entry | None:
    """The tool call the agent waits on, from the newest page of its transcript: the
    newest call no result answers yet in the running turn (tma.core.transcript.window's
    `unanswered`), with its body (its arguments); None when there is none. Only an agent
    that writes the call before it asks (Codex's rollout) can have one while a
    permission prompt is up."""
    pg = _read(t, env, lambda loc: _page(loc, None, clamp()))
    i = unanswered((e.event.kind, e.event.data) for e in pg.entries)
    if i is None:
        return None
    found = pg.entries[i]
    if found.event.body is None:  # a store that gives no body in a page
        found = entry(t, env, found.cursor)
    return found

"""The store modules, one registry: agent name -> the module that reads its transcript.

Two kinds plug in here:

- a **record store** (`RecordStore`), pure, in tma.core.transcript: the agent writes
  JSONL and the module turns one parsed record into its events
  (tma.core.transcript.event says the contract); tma.runtime.transcript.page reads the
  file, numbers the events and pages them. It may also say where a session's file is
  (`candidates`, optional: else tma.runtime.transcript.locate's rules for the agent);
- a **store that pages itself** (`PagedStore`): a store that is no file of lines
  (OpenCode's SQLite database). It finds the session's transcript itself (`locate`) and
  answers a page (`page`) and one event (`event`) with cursors of its own making, which
  the framework treats as opaque: it clamps the limits, fits the page to the frame,
  counts the unknown events and names `older`.

A module is imported the first time its agent's transcript is asked for; a module that
does not exist (yet) means "no reader for this agent in this tma", never an error.
TMA_TRANSCRIPT_STORES (`agent=module,...`) names other modules for some agents: a store
being written, a test's synthetic store.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from tma.core.record import Record
from tma.core.transcript.event import Event
from tma.core.transcript.window import Limits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

#: agent (as the manifests name it) -> its store module
REGISTRY: dict[str, str] = {
    "claude": "tma.core.transcript.claude",
    "codex": "tma.core.transcript.codex",
    "gemini": "tma.core.transcript.gemini",
    "pi": "tma.core.transcript.pi",
    "copilot": "tma.core.transcript.copilot",
    "qwen": "tma.core.transcript.qwen",
    "opencode": "tma.runtime.transcript.opencode_db",
}
#: agents whose transcripts tma does not read, and why
REFUSED: dict[str, str] = {
    "cursor": "Cursor CLI's transcripts carry no tool results and no timestamps: tma does "
              "not read them",
}
ENV = "TMA_TRANSCRIPT_STORES"


# --- what a read returns and raises ----------------------------------------------------------


class Entry(Record, frozen=True):
    """One event and the cursor that names it (its body filled when the store has one)."""

    cursor: str
    event: Event


class Page(Record, frozen=True):
    """Events newest first, at most the limits' `last`. `older`: the cursor to pass back
    as `before` for the page before this one (None: this page reached the transcript's
    start); it names the oldest entry, or, when the page ended on records that had no
    events, a place before them (any cursor of the store's making will do);
    `budget_truncated`: the read budget, not the count, ended the page; `session`: a
    session_meta event saying whose session this is (None: none seen); `read`: bytes read
    for it."""

    entries: tuple[Entry, ...]
    older: str | None
    budget_truncated: bool = False
    session: Event | None = None
    read: int = 0


class TranscriptError(Exception):
    """A read that cannot answer: its message is for a person."""


class CursorInvalid(TranscriptError):
    """The cursor no longer addresses its bytes (the file was replaced, truncated or
    rewritten), or it was never one of this store's: drop it and start at the end."""


class TooLarge(TranscriptError):
    """The record is over MAX_RECORD (8 MiB): tma does not parse it."""


class NoTranscript(TranscriptError):
    """Nothing to show: no reader for the agent, or no file found (the message says which)."""


# --- the two kinds of store -------------------------------------------------------------------


class RecordStore(Protocol):
    """A pure record store (tma.core.transcript.<store>). Optionally also
    `candidates(session_id, cwd, env) -> list[str]`: the paths a session's file may have
    (a `*` in a path's last part matches any run of characters), most likely first."""

    NAME: str

    def events(self, record: dict[str, Any]) -> list[Event]: ...

    def session(self, record: dict[str, Any]) -> Event | None: ...


class PagedStore(Protocol):
    """A store that pages itself. `locate` names the session's transcript in the store's
    own terms (a `source`, e.g. the database path and the session id; None: not there);
    `page` answers up to `limits.last` entries newest first, those before the cursor
    `before` (exclusive; None: from the newest), reading at most `limits.read_bytes`
    where that means anything; `event` answers one entry with its body. Both raise
    CursorInvalid for a cursor that is not (or no longer) one of theirs, and
    NoTranscript when the source is gone."""

    NAME: str

    def locate(self, session_id: str, cwd: str, env: Mapping[str, str]) -> str | None: ...

    def page(self, source: str, before: str | None, limits: Limits) -> Page: ...

    def event(self, source: str, cursor: str, limits: Limits) -> Entry: ...


def is_paged(store: object) -> bool:
    return callable(getattr(store, "page", None))


# --- the registry ----------------------------------------------------------------------------


def _overrides(env: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for item in (env.get(ENV) or "").split(","):
        agent, eq, module = item.partition("=")
        if eq and agent.strip() and module.strip():
            out[agent.strip()] = module.strip()
    return out


def module_name(agent: str, env: Mapping[str, str]) -> str | None:
    return _overrides(env).get(agent) or REGISTRY.get(agent)


class Found(Record, frozen=True):
    """A store (None: none) and, without one, why not."""

    store: Any
    why: str = ""


def store_for(agent: str, env: Mapping[str, str]) -> Found:
    """The agent's store module, imported on first use; without one, why not (no reader
    is registered, this tma has none yet, or it failed to load: its error named)."""
    name = module_name(agent, env)
    if name is None:
        return Found(None, REFUSED.get(agent) or f"tma has no transcript reader for {agent}")
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            return Found(None, f"this tma has no transcript reader for {agent} yet ({name})")
        return Found(None, f"the {agent} transcript reader ({name}) does not load: {exc}")
    except Exception as exc:  # noqa: BLE001 - a broken reader is one pane's problem
        return Found(None, f"the {agent} transcript reader ({name}) does not load: {exc!r}")
    if not (is_paged(module) or callable(getattr(module, "events", None))):
        return Found(None, f"{name} is not a transcript store (no events() and no page())")
    return Found(module)


def agents(env: Mapping[str, str]) -> Iterable[str]:
    """Every agent a reader is registered for."""
    return sorted(set(REGISTRY) | set(_overrides(env)))

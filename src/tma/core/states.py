"""The closed vocabularies: states, sources, detail tokens."""

from __future__ import annotations

WORKING = "working"
BLOCKED = "blocked"
IDLE = "idle"
UNKNOWN = "unknown"

#: The published state set. Closed and frozen: a fifth token is unreadable, not new.
STATES: tuple[str, ...] = (WORKING, BLOCKED, IDLE, UNKNOWN)

#: A display pseudo-state: idle with attention still standing. Never stored.
DONE = "done"

#: Classes a selector or `wait --until` may name.
SELECTABLE: tuple[str, ...] = (IDLE, WORKING, BLOCKED, UNKNOWN, DONE)

#: Surface order (rows, status segments): blocked first, unknown last.
STATE_ORDER: dict[str, int] = {BLOCKED: 0, WORKING: 1, IDLE: 2, UNKNOWN: 3}

#: The fold ladder across states: higher wins.
LADDER: dict[str, int] = {BLOCKED: 3, WORKING: 2, IDLE: 1}

SOURCE_HOOK = "hook"
SOURCE_CAPTURE = "capture"
SOURCE_PROCESS = "process"
#: Read-only legacy provenance, treated like capture.
SOURCE_ACTIVITY = "activity"

SOURCES: tuple[str, ...] = (SOURCE_HOOK, SOURCE_CAPTURE, SOURCE_PROCESS)
READABLE_SOURCES: tuple[str, ...] = SOURCES + (SOURCE_ACTIVITY,)

# Detail tokens. The axis is open; these are the ones tma knows.
PERMISSION = "permission"
PLAN = "plan"
TRUST = "trust"
RATE_LIMIT = "rate_limit"
QUESTION = "question"
ERROR = "error"
BACKGROUND = "background"
COMPACTING = "compacting"

#: Emitted by the bundled manifests.
EMITTED_DETAILS: tuple[str, ...] = (PERMISSION, PLAN, TRUST, RATE_LIMIT, QUESTION, COMPACTING)
#: Declared, not emitted by any bundled manifest yet.
DECLARED_DETAILS: tuple[str, ...] = (ERROR, BACKGROUND)
KNOWN_DETAILS: tuple[str, ...] = EMITTED_DETAILS + DECLARED_DETAILS

LIFECYCLE = "lifecycle"
LIFECYCLE_START = "start"
LIFECYCLE_END = "end"

_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def is_safe_token(value: str) -> bool:
    """True for a non-empty token drawn from [a-z0-9_-] only."""
    return bool(value) and all(c in _TOKEN_CHARS for c in value)


def safe_detail(value: str | None) -> str:
    """The detail as it may be written: unsafe bytes make the whole token empty.

    `#`, `{`, `}`, `,`, whitespace or a control byte would corrupt a conditional
    write format, so such a token is written as empty rather than escaped.
    """
    if not value:
        return ""
    return value if is_safe_token(value) else ""


def display_class(state: str, attention: bool) -> str:
    """The disjoint class a surface counts a pane in (done = idle + attention)."""
    if state == IDLE and attention:
        return DONE
    return state


def matches_class(state: str, attention: bool, wanted: str) -> bool:
    """Selector semantics: `idle` also matches done panes; `done` never plain idle."""
    if wanted == DONE:
        return state == IDLE and attention
    return state == wanted

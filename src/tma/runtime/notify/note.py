"""One notification as data: the `Note`, built in one place, and what a sink is handed.

`Note.for_pane` is the one constructor from a pane (the hook intake's own fire and the
daemon's notifier both use it); `payload` is the command's stdin JSON (schema 3),
`env` its TMA_* variables, `message` the status-line text, `osc9` the terminal
notification. Import-light (os and tma only): the hook path imports it when it fires.
"""

from __future__ import annotations

import os

from tma.core.record import Record
from tma.tmux.notify import strip_controls

# 2: `since_ms` (an age, unlike ls --json's epoch since_ms) renamed `age_ms`;
# 3: a value that does not apply is null, `repo` and `branch` too (they were ""), the
#    one rule of the webhook's document, ls --json and subscribe
SCHEMA = 3
OSC_MAX = 200  # bytes of OSC 9 body

PAYLOAD_KEYS = ("schema", "agent", "pane", "state", "detail", "session", "locator", "title",
                "repo", "branch", "age_ms", "context_pct", "tool", "summary", "last_sentence")
LOG_KEYS = ("schema", "at") + PAYLOAD_KEYS[1:]
ENV_ALWAYS = ("TMA_AGENT", "TMA_PANE", "TMA_STATE", "TMA_LOCATOR", "TMA_TITLE", "TMA_AGE_MS")
ENV_OPTIONAL = ("TMA_DETAIL", "TMA_SESSION", "TMA_REPO", "TMA_BRANCH", "TMA_CONTEXT_PCT",
                "TMA_TOOL", "TMA_SUMMARY", "TMA_LAST_SENTENCE")


class Note(Record):
    """One notification. `trigger` is the word a sink sees as the state: blocked, done
    or context_high. `tty` is optional: the pane's tty when the caller already has it
    (saves resolving it); `since_ms` is the episode's age (0 for a hook's own fire).
    `tool` and `summary` say what a blocked pane asks (empty when nobody knows). `host`:
    the fleet host the pane is on, by its hosts.toml name (empty: this machine).
    `last_sentence`: the agent's last sentence from its transcript, only where `[notify]
    last_sentence` opts in (tma.runtime.notify.said; empty otherwise)."""

    trigger: str = "blocked"
    agent: str = ""
    pane: str = ""
    detail: str | None = None
    session: str | None = None
    locator: str = ""
    title: str = ""
    repo: str = ""
    branch: str = ""
    since_ms: int = 0
    context_pct: int | None = None
    tty: str = ""
    tool: str = ""      # the pending call's tool ("Bash"), when the pane says
    summary: str = ""   # what the blocked pane asks, one line ("Bash: rm -rf build/")
    host: str = ""      # a fleet host's name (HOST of a HOST:%N pane); "" for this machine
    last_sentence: str = ""  # what the agent said last ([notify] last_sentence only)

    @property
    def state(self) -> str:
        return self.trigger

    @classmethod
    def for_pane(cls, trigger: str, agent: str, pane, *, detail: str = "",
                 session: str = "", since_ms: int = 0, tty: str = "") -> Note:
        """The note for a tmux pane (a tma.tmux.read Pane): its id, locator, title and
        context % from the pane; empty detail and session read as absent."""
        ctx = pane.options.get("@agent_context_pct", "")
        asks = trigger == "blocked"
        return cls(trigger=trigger, agent=agent, pane=pane.pane_id, detail=detail or None,
                   session=session or None, locator=pane.locator, title=pane.title,
                   repo="", branch="", since_ms=max(0, since_ms),
                   context_pct=int(ctx) if ctx.isdigit() else None, tty=tty,
                   tool=pane.options.get("@agent_pending_tool", "") if asks else "",
                   summary=pane.options.get("@agent_pending_summary", "") if asks else "")

    @classmethod
    def combined(cls, notes: list[Note]) -> Note:
        """Several notes of one trigger as one (the daemon's coalesced `done`): agent
        "3 agents", the title naming each agent and pane in the order given ("claude
        %1, codex %4, claude %7"), the first note's pane and locator (what a jump
        action or a bell reaches), the youngest episode's age."""
        first = notes[0]
        return cls(trigger=first.trigger, agent=f"{len(notes)} agents", pane=first.pane,
                   locator=first.locator,
                   title=", ".join(f"{n.agent} {n.pane}" for n in notes),
                   since_ms=min(n.since_ms for n in notes))


# ------------------------------------------------------------------ payload and env


def payload(note: Note) -> dict:
    """The stdin JSON of the command, keys in their pinned order (schema 3). A value
    that does not apply is null, as in the webhook's document (tma.runtime.notify.push):
    the log line and the webhook agree on every key they share."""
    return {
        "schema": SCHEMA,
        "agent": note.agent,
        "pane": note.pane,
        "state": note.trigger,
        "detail": note.detail or None,
        "session": note.session or None,
        "locator": note.locator,
        "title": note.title or "",
        "repo": note.repo or None,
        "branch": note.branch or None,
        "age_ms": int(note.since_ms or 0),
        "context_pct": None if note.context_pct is None else int(note.context_pct),
        "tool": note.tool or None,
        "summary": note.summary or None,
        "last_sentence": note.last_sentence or None,
    }


def stdin(note: Note) -> bytes:
    """The command's stdin: the payload as one JSON line."""
    return to_bytes(dumps(payload(note)) + "\n")


def log_record(note: Note, at: int) -> dict:
    """A `[notify] log` line: the payload with `at` (epoch ms) right after `schema`."""
    body = payload(note)
    out = {"schema": body.pop("schema"), "at": int(at)}
    out.update(body)
    return out


def env(note: Note) -> dict[str, str]:
    """The TMA_* variables of the command. The first six are always set; the optional
    eight only when they have a value (a child never inherits a stale one, see child_env)."""
    out = {
        "TMA_AGENT": note.agent,
        "TMA_PANE": note.pane,
        "TMA_STATE": note.trigger,
        "TMA_LOCATOR": note.locator,
        "TMA_TITLE": note.title or "",
        "TMA_AGE_MS": str(int(note.since_ms or 0)),
    }
    for key, value in (("TMA_DETAIL", note.detail), ("TMA_SESSION", note.session),
                       ("TMA_REPO", note.repo), ("TMA_BRANCH", note.branch),
                       ("TMA_CONTEXT_PCT", note.context_pct), ("TMA_TOOL", note.tool),
                       ("TMA_SUMMARY", note.summary), ("TMA_LAST_SENTENCE", note.last_sentence)):
        if value is not None and value != "":
            out[key] = str(value)
    return out


def child_env(note: Note) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ENV_OPTIONAL}
    base.update(env(note))
    return base


_JESC = {i: f"\\u{i:04x}" for i in range(32)}
_JESC.update({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"})


def _jvalue(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    return '"' + str(v).translate(_JESC) + '"'


def dumps(obj: dict) -> str:
    """Compact JSON of a flat dict of str/int/bool/None (no json import on the hook path)."""
    return "{" + ",".join(f"{_jvalue(str(k))}:{_jvalue(v)}" for k, v in obj.items()) + "}"


def to_bytes(text: str) -> bytes:
    return text.encode("utf-8", "replace")


# ------------------------------------------------------------------ texts


def message(note: Note) -> str:
    """The status-line text (unescaped; tma.tmux.notify escapes it for tmux)."""
    title = strip_controls(note.title or "").strip()
    asks = strip_controls(note.summary or "").strip()
    said = strip_controls(note.last_sentence or "").strip()
    text = f"tma: {note.agent} {note.trigger} — {title}" if title else \
        f"tma: {note.agent} {note.trigger} in {note.pane}"
    text = f"{text}: {asks}" if asks else text
    return f"{text} — “{said}”" if said else text


def osc9(note: Note) -> bytes:
    """`ESC ] 9 ; <agent> <state> BEL`: never the title, no control byte, body <= 200 bytes."""
    body = to_bytes(strip_controls(f"{note.agent} {note.trigger}"))
    if len(body) > OSC_MAX:
        body = body[:OSC_MAX].decode("utf-8", "ignore").encode("utf-8")
    return b"\x1b]9;" + body + b"\x07"

"""The conversation view of the picker's and watch's preview (ctrl-t): a pane's last turns
as a person reads a chat, newest at the bottom.

Pure, like tma.ui.picker: a conversation (a dict, below) + a size -> lines of (text,
style) spans. The driver (tma.runtime.screen's Feed) reads the pane's transcript, or asks
a fleet host for it; this renders what came back. Loaded only when the view is toggled:
the picker's first frame never imports it.

A conversation: `events`, the transcript's events newest first as `tma transcript
--json` prints them (kind, its keys, `preview`, `body` when read); `agent`, who speaks;
`note`, why there is nothing to show (no transcript, no reader, the host did not
answer); `asking`, a host's answer is on its way; `partial`, some events carry only
their first words (a host's window carries headers only, and the bodies of its newest
messages are fetched).

What it shows, oldest first: your messages and the agent's answers, each under its
speaker; each tool call on one line with its result's status (✓ ok, ✗ error, … no result
yet); a compaction, an interrupted turn, a permission the agent asked for. Bookkeeping,
usage, thinking and attachments are left out. Every text is the agent's (or the
transcript's): escape sequences and control characters go (tma.core.untrusted) before
any of it reaches the terminal.
"""

from __future__ import annotations

import re
import textwrap

from tma.core.untrusted import block, clean
from tma.ui import width as cw

Span = tuple[str, str]
Line = list[Span]

#: The most characters of one message rendered (its end: the newest words matter most).
MESSAGE_MAX = 4000
#: An escape sequence, whole (its tail would print: `[2J`, `52;c;...`), in its 7-bit and
#: its 8-bit (C1) spelling: a string (DCS, SOS, OSC, PM, APC) to its terminator, or to the
#: end when it has none, as a terminal would swallow it; a CSI; any other escape
#: (`ESC ( B`, `ESC 7`). tma.core.untrusted then takes the lone control bytes left.
_ESCAPES = re.compile(r"(?:\x1b[P\]X^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*"
                      r"(?:\x07|\x1b\\|\x9c)?"
                      r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                      r"|\x1b[ -/]*[0-~]")


def _text(e: dict) -> str:
    """An event's words: its body's text when read (a json body is no message), else its
    preview; escapes and control characters out, the newest MESSAGE_MAX kept."""
    body = e.get("body")
    raw = body.get("text") if isinstance(body, dict) and body.get("kind") == "text" else None
    if not isinstance(raw, str):
        raw = e.get("preview") or ""
    raw = _ESCAPES.sub("", str(raw))  # before the cut, which could leave a tail
    if len(raw) > MESSAGE_MAX:
        raw = "…" + raw[-MESSAGE_MAX:]
    return block(raw, MESSAGE_MAX + 1).strip("\n")


def _wrap(text: str, width: int, indent: str) -> list[str]:
    out: list[str] = []
    for para in text.split("\n"):
        para = para.replace("\t", "    ").rstrip()
        if not para:
            out.append("")
            continue
        room = max(width - len(indent), 8)
        if not para.isascii():  # by cells: CJK is two a character and has no spaces
            out += [indent + ln for ln in cw.wrap(para, room - len(indent))] or [indent]
            continue
        out += textwrap.wrap(para, room, initial_indent=indent,
                             subsequent_indent=indent, drop_whitespace=True,
                             break_on_hyphens=False) or [indent]
    while out and not out[-1].strip():
        out.pop()
    return out


def _one(text: object, width: int) -> str:
    """One line of the transcript's (a name, a call's first words, a note): its escape
    sequences gone whole, then its control characters, at most `width` long."""
    one = clean(" ".join(_ESCAPES.sub("", str(text or "")).split()), max(width, 1))
    return one if one.isascii() else cw.clip(one, max(width, 1))


def _results(events: list[dict]) -> dict[str, dict]:
    return {str(e.get("call_id")): e for e in events
            if e["kind"] == "tool_result" and e.get("call_id")}


def _call(e: dict, result: dict | None, newest: bool, width: int, plain: bool) -> Line:
    """`  ▸ Bash  pytest -q  ✓`: the call's name, its first words, its result's status."""
    name = _one(e.get("name") or "tool", 40)
    what = _one(e.get("preview") or "", width)
    if result is None:
        mark = "… waiting" if newest else "…"
    elif result.get("status") == "error":
        said = _one(result.get("preview") or "", 60)
        mark = "✗ " + said if said else "✗ error"
    else:
        mark = "✓"
    head = f"  ▸ {name}"
    room = width - cw.cells(head) - cw.cells(mark) - 4
    what = ((what if cw.cells(what) <= room else cw.clip(what, room - 1) + "…") if room > 0
            else "")
    text = f"{head}  {what}  {mark}" if what else f"{head}  {mark}"
    style = "" if plain else ("bold" if result is None and newest else "dim")
    return [(cw.clip(clean(text, width), width), style)]


def _note(text: str, width: int, plain: bool) -> list[Line]:
    # a note may quote what the agent wrote (a session id, a path in an error)
    return [[(_one(ln, width), "" if plain else "dim")]
            for ln in textwrap.wrap(_ESCAPES.sub("", text), max(width, 8)) or [""]]


def lines(said: dict | None, width: int, height: int, plain: bool = False) -> list[Line]:
    """The conversation's newest `height` lines (fewer when it is short), none wider than
    `width`."""
    if height <= 0:
        return []
    if said is None:
        return _note("(reading the conversation…)", width, plain)[:height]
    if said.get("asking") and not said.get("events"):
        return _note(f"({said.get('asking')})", width, plain)[:height]
    if said.get("note") and not said.get("events"):
        return _note(f"(no conversation: {said['note']})", width, plain)[-height:]
    events = list(reversed(said.get("events") or []))  # oldest first
    if not events:
        return _note("(nothing said in this session yet)", width, plain)[:height]
    chat = _Chat(_one(said.get("agent") or "agent", 24), events, width, plain)
    for e in events:
        chat.add(e)
    out = chat.out
    if said.get("partial"):
        out.append([(clean("(a host's window: older messages show their first words)", width),
                     "" if plain else "dim")])
    if said.get("note"):
        out += _note(f"({said['note']})", width, plain)
    return out[-height:]


class _Chat:
    """The lines of a conversation, built event by event (oldest first)."""

    def __init__(self, agent: str, events: list[dict], width: int, plain: bool) -> None:
        self.agent, self.width, self.plain = agent, width, plain
        self.results = _results(events)
        calls = [e for e in events if e["kind"] == "tool_call"]
        self.newest_call = calls[-1] if calls else None
        self.called = {str(e.get("call_id")) for e in calls}
        self.out: list[Line] = []
        self.speaker = ""

    def note(self, text: str, style: str = "dim") -> None:
        self.out.append([(cw.clip(clean(text, self.width), self.width),
                          "" if self.plain else style)])

    def label(self, who: str) -> None:
        if who != self.speaker:
            if self.out:
                self.out.append([])
            self.note(who, "bold")
            self.speaker = who

    def say(self, who: str, text: str) -> None:
        if text:
            self.label(who)
            self.out.extend([(ln, "")] for ln in _wrap(text, self.width, "  "))

    def add(self, e: dict) -> None:
        kind = e["kind"]
        if kind == "user_message":
            self.say("you", _text(e))
        elif kind == "assistant_text":
            self.say(self.agent, _text(e))
        elif kind == "tool_call":
            self.label(self.agent)  # a call is the agent's part of the turn
            self.out.append(_call(e, self.results.get(str(e.get("call_id"))),
                                  e is self.newest_call, self.width, self.plain))
        elif kind == "tool_result" and str(e.get("call_id")) not in self.called:
            status = "✗" if e.get("status") == "error" else "✓"  # its call is older
            self.note(f"  ◂ result {status} {_one(e.get('preview'), self.width)}".rstrip())
        elif kind == "permission_request":
            self.note(f"  ? asks to run {_one(e.get('tool') or 'a tool', 40)}", "bold")
        elif kind == "compaction":
            self.out.append([])
            self.note("── the context was compacted ──")
            self.speaker = ""
        elif kind == "turn_boundary" and e.get("boundary") == "end" \
                and e.get("reason") not in (None, "completed"):
            self.note(f"  (the turn ended: {_one(e.get('reason'), 40)})")
        elif kind == "subagent_ref":
            self.note(f"  ▸ a subagent ({_one(e.get('child_id'), 40)})")

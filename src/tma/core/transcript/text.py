"""What the store modules share: a record's values read defensively, an event's preview,
its body and its size (pure).

A transcript is the agent's file, not ours: any value may be missing or of another type
in a release we have not seen, so the readers here answer None (or an empty value)
rather than raise, and the store modules decide what that means.
"""

from __future__ import annotations

import json
import re

PREVIEW_CHARS = 80
_SPACE = re.compile(r"\s+")
# terminal escapes (a local command's coloured output) and other control characters
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def preview(text: str | None) -> str | None:
    """The first words of `text` on one line, at most PREVIEW_CHARS characters: cut at a
    word's end with `…` when longer (a single word longer than that is cut inside it),
    terminal escapes and control characters left out; None for no text or only white
    space."""
    if not text:
        return None
    line = _SPACE.sub(" ", _CONTROL.sub("", text)).strip()
    if not line:
        return None
    if len(line) <= PREVIEW_CHARS:
        return line
    head = line[:PREVIEW_CHARS - 1]
    cut = head.rfind(" ")
    if cut > 0:
        head = head[:cut]
    return head.rstrip() + "…"


def compact(value: object) -> str:
    """`value` as compact JSON (no spaces, non-ASCII kept): an event's json body."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(text: str) -> int:
    """The UTF-8 size of `text` in bytes: an event's `bytes`."""
    return len(text.encode("utf-8", "surrogatepass"))


def string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def obj(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def integer(value: object) -> int | None:
    """`value` when it is a JSON integer (a bool is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def first_string(value: object) -> str | None:
    """The first string among a JSON object's values, in their order: a tool call's
    preview (the command, the path, the description)."""
    for v in obj(value).values():
        if isinstance(v, str) and v.strip():
            return v
    return None


#: A sentence ends at `.`, `!`, `?` or `…` (closing quotes or brackets kept with it)
#: before white space or the text's end.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s|$)")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_MARKUP = re.compile(r"^\s*(?:[-*+>]|#+|\d+[.)])\s+")


def last_sentence(text: str | None, limit: int = 200) -> str:
    """The last sentence of an agent's answer, on one line: its last paragraph that holds
    words (a code fence's marker, a list's bullet or a heading's `#` is no word), then that
    paragraph's last sentence; terminal escapes and control characters left out; cut at
    `limit` characters with `…` (its end kept: the last words are the point). "" for no
    text."""
    if not text:
        return ""
    paragraphs: list[list[str]] = [[]]
    fenced = False
    for ln in _CONTROL.sub("", text).splitlines():
        if _FENCE.match(ln):  # a code block is no sentence
            fenced = not fenced
            paragraphs.append([])
            continue
        if fenced:
            continue
        bare = _MARKUP.sub("", ln)
        if not ln.strip() or bare != ln:  # a blank line, a bullet or a heading starts one
            paragraphs.append([])
        paragraphs[-1].append(bare)
    para = next((" ".join(p) for p in reversed(paragraphs)
                 if any(c.isalnum() for x in p for c in x)), "")
    para = _SPACE.sub(" ", para).strip()
    if not para:
        return ""
    ends = [m.end() for m in _SENTENCE_END.finditer(para)]
    # the sentence after the last end but one (a paragraph that ends without a stop
    # keeps its tail as the sentence)
    if ends and ends[-1] == len(para):
        ends.pop()
    start = ends[-1] if ends else 0
    sentence = para[start:].strip()
    if len(sentence) > limit:
        sentence = "…" + sentence[-(limit - 1):].lstrip()
    return sentence

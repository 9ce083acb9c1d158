"""What a blocked agent's permission dialog asks, read off its screen.

Pure: the captured pane text and the agent manifest's `[dialog]` rules in, a `ScreenAsk`
out; no I/O, no clock. Every agent-specific fact (where the dialog is, which line names the
tool and its command or file, what the option rows look like, what each option means) is
manifest data, so this module has no per-agent branch.

The extraction level says how far the reading can be trusted:
  exact    the command or file was read whole, from one line of the dialog;
  wrapped  it spanned several screen rows and was joined back (a word split at the edge
           may be joined with one space too many or too few);
  failed   no target was read (the tool may still be known).
A screen that shows no such dialog gives None.
"""

from __future__ import annotations

from tma.core.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

    from tma.core.manifest import DialogRules, DialogTarget

EXACT = "exact"
WRAPPED = "wrapped"
FAILED = "failed"
EXTRACTIONS = (EXACT, WRAPPED, FAILED)
SUMMARY_MAX = 200
INPUT_MAX = 4096  # the card's string budget (a screen is smaller than this anyway)
OTHER = "other"  # the kind of an option no `[[dialog.kinds]]` entry names


class Option(Record):
    kind: str  # allow-once | allow-always | reject-once | reject-always | other (open set)
    name: str  # the dialog's own row, e.g. "1. Yes"
    option_id: str = ""  # the key tma would press ("" when the row shows none)


class ScreenAsk(Record):
    tool: str = ""  # "Bash", "Edit", "Write", "WebFetch", ...; "" when unknown
    summary: str = ""  # one line, "Bash: rm -rf build/"
    input: tuple[tuple[str, str], ...] = ()  # the call's input as (field, value) pairs
    options: tuple[Option, ...] = ()
    extraction: str = FAILED

    def input_dict(self) -> dict[str, str]:
        return dict(self.input)


# C0 and C1 control characters out, a tab as a space, in C: a row that holds none (most)
# is returned as it is, the rest pass str.translate once (a character-by-character join
# cost a cold `ls --json` about a millisecond for every blocked pane it read)
_PRINTABLE = {**dict.fromkeys(range(32)), **dict.fromkeys(range(127, 160)), 9: " "}


def _printable(text: str) -> str:
    """Control characters out (a pane may hold stray ones), tabs as spaces."""
    if text.isprintable():  # no control character and no tab (both are unprintable)
        return text
    return text.translate(_PRINTABLE)


def _clean(line: str, strip: re.Pattern[str] | None) -> str:
    """A row without control characters, frame borders (nested frames lose one border per
    pass) and outer blanks."""
    text = _printable(line).strip()
    if strip is not None:
        for _ in range(4):
            stripped = strip.sub("", text).strip()
            if stripped == text:
                break
            text = stripped
    return text


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Whitespace runs to one space, at most `limit` characters (an ellipsis marks a cut)."""
    flat = " ".join(_printable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _last(pattern: re.Pattern[str], rows: list[str], lo: int, hi: int) -> tuple[int, re.Match[str]] | None:
    for i in range(hi - 1, lo - 1, -1):
        m = pattern.search(rows[i])
        if m is not None:
            return i, m
    return None


def _group(m: re.Match[str], name: str) -> str:
    return (m.group(name) or "").strip() if name in m.re.groupindex else ""


def _options(rules: DialogRules, rows: list[str], lo: int, hi: int) -> tuple[list[Option], int]:
    """Every option row from the anchor down, and the row the first one is on."""
    found: list[Option] = []
    first = hi
    for i in range(lo, hi):
        for m in rules.option.finditer(rows[i]):
            name = _group(m, "name")
            if not name:
                continue
            kind = next((k.kind for k in rules.kinds if k.match.search(name)), OTHER)
            found.append(Option(kind, name, _group(m, "id")))
            first = min(first, i)
    return found, first


def _join(parts: list[str]) -> str:
    """Rows of one wrapped text, joined back. A row that ends inside a word (its last
    character and the next row's first are both word characters, with no break the
    agent would wrap at) is glued; any other break was a space."""
    out = parts[0]
    for part in parts[1:]:
        # a row ending in a hyphen after a word character was broken inside a hyphenated
        # word (opencode and codex break there)
        hyphen = out.endswith("-") and out[-2:-1].isalnum()
        glue = hyphen or (out[-1:].isalnum() and part[:1].isalnum() and not _soft_break(out))
        out = out + ("" if glue else " ") + part
    return out


def _soft_break(text: str) -> bool:
    # Word-wrapping renderers break at spaces; a row that ends in a long unbroken token
    # (a path, a URL) was cut at the edge instead.
    last = text.rsplit(" ", 1)[-1]
    return len(last) < 20 and " " in text


def _block(t: DialogTarget, rows: list[str], start: int, limit: int) -> list[str] | None:
    begin = start
    if t.start is not None:
        at = next((j for j in range(start, limit) if t.start.search(rows[j])), None)
        if at is None:
            return None
        begin = at + 1
    while begin < limit and not rows[begin]:
        begin += 1
    end = begin
    while end < limit and (rows[end] if t.until is None else not t.until.search(rows[end])):
        end += 1
    block = rows[begin:end]
    if t.item is not None:
        items = [t.item.search(r) for r in block]
        block = [_group(m, "text") for m in items if m is not None]
    block = [r for r in block if r]
    if t.drop_last and len(block) >= 2:
        block = block[:-1]
    return block


def _target(t: DialogTarget, rules: DialogRules, rows: list[str],
            hit: tuple[int, re.Match[str]], limit: int) -> tuple[str, str, str]:
    """(tool, text, level) of one target form whose header is on row hit[0]."""
    i, m = hit
    tool = t.tool or _group(m, "tool")
    tool = dict(rules.aliases).get(tool, tool)
    inline = _group(m, "text")
    if inline and t.start is None:
        # the text starts on the header row; with `until`, rows under it continue it
        parts = [inline]
        j = i + 1
        while t.until is not None and j < limit and rows[j] and not t.until.search(rows[j]):
            parts.append(rows[j])
            j += 1
        if len(parts) > 1:
            return tool, _join(parts), WRAPPED
        if inline.endswith(("…", "...")):  # cut to the row: not read whole
            return tool, "", FAILED
        return tool, inline, EXACT
    block = _block(t, rows, i + 1, limit)
    if not block:
        return tool, "", FAILED
    if len(block) == 1 and not t.drop_last:
        return tool, block[0], EXACT
    # several rows joined; or a guess that the last row was a description, which a call
    # without one would turn into a cut command: neither is shown as read whole
    return tool, _join(block), WRAPPED


def extract(agent: str, lines: list[str], rules: DialogRules | None) -> ScreenAsk | None:
    """The permission dialog of `agent` on this screen, or None when none is shown.

    `lines` is the captured pane text, plain; `rules` the agent manifest's `[dialog]`
    (None when the manifest has none: nothing can be read). Never raises on any screen.
    """
    del agent  # the rules are the agent's; the name is for the caller's symmetry
    if rules is None or not lines:
        return None
    rows = [_clean(line, rules.strip) for line in lines]
    anchored = _last(rules.anchor, rows, 0, len(rows))
    if anchored is None:
        return None
    a = anchored[0]
    if rules.within:
        # the dialog is drawn at the bottom: an anchor with more than `within` non-blank rows
        # under it is an old dialog left in the transcript
        if sum(1 for r in rows[a + 1:] if r) > rules.within:
            return None
    lo, hi = max(0, a - rules.above), min(len(rows), a + rules.below + 1)
    options, first_option = _options(rules, rows, a, hi)
    # The header nearest the options is the dialog's own: a finished dialog's header can
    # still stand higher up in the transcript. Equal rows keep the manifest's order.
    hits = []
    for order, t in enumerate(rules.targets):
        if t.on is not None and not t.on.search(rows[a]):
            continue  # a form of another dialog (aider asks each on one line)
        hit = _last(t.header, rows, lo, first_option)
        if hit is not None:
            hits.append((-hit[0], order, t, hit))
    hits.sort(key=lambda h: (h[0], h[1]))
    tool = ""
    for _row, _order, t, hit in hits:
        name, text, level = _target(t, rules, rows, hit, first_option)
        if not text:
            tool = tool or name
            continue
        text = text[:INPUT_MAX]  # rows were cleaned; inner spacing stays as drawn
        summary = one_line(f"{name}: {text}" if name else text)
        return ScreenAsk(name, summary, ((t.key, text),), tuple(options), level)
    return ScreenAsk(tool, one_line(tool), (), tuple(options), FAILED)

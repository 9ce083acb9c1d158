"""The picker's screen (bare `tma`): agent rows, a fuzzy filter, a preview, drawn from data.

Pure: row dicts (the `ls --json` rows) + a View (query, selection, scope, preview text) +
a size -> lines, each a list of (text, style) spans. No terminal and no tmux here: the
driver (tma.runtime.screen, tma.ui.app) reads the snapshots and paints the spans.

Styles are space-separated tokens the driver maps to attributes: `state:<class>` (the
class's palette colour), `dim`, `bold`, `sel` (the highlighted row), `head`. In plain mode
(NO_COLOR, TERM=dumb) no token is emitted: the text alone must carry the meaning, which
is why the highlighted row also has a `>` marker.
"""

from __future__ import annotations

import re

from tma.ui import table, width as cw

#: Row order by display class: whose move it is first.
CLASS_RANK = {"blocked": 0, "done": 1, "working": 2, "idle": 3, "unknown": 4}
#: The preview (the selected pane's screen) needs at least this many columns.
PREVIEW_MIN_WIDTH = 76
MIN_WIDTH, MIN_HEIGHT = 30, 5
_NEVER = 1 << 62
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

Span = tuple[str, str]
Line = list[Span]


class View:
    """What the person has done to the screen: typed, moved, toggled."""

    __slots__ = ("query", "selected", "scope", "session", "exclude", "preview", "message",
                 "notes", "talk", "said")

    def __init__(self, query: str = "", selected: str | None = None, scope: str = "all",
                 session: str | None = None, exclude: str | None = None,
                 preview: str | None = None, message: str = "",
                 notes: list[str] | None = None, talk: bool = False,
                 said: dict | None = None) -> None:
        self.query = query
        self.selected = selected  # pane id of the highlighted row (survives re-ordering)
        self.scope = scope  # "all" or "session"
        self.session = session  # the invoking session (scope "session")
        self.exclude = exclude  # the invoking pane: never listed
        self.preview = preview  # the selected pane's captured screen, when read
        self.message = message  # one line for the footer (a refusal, a note)
        self.notes = notes or []  # hosts with no rows to show: one line each, under the rows
        self.talk = talk  # ctrl-t: the preview shows the pane's conversation, not its screen
        self.said = said  # that conversation (tma.ui.conversation), when read


# ---------------------------------------------------------------- rows


def remote(row: dict) -> bool:
    """A fleet host's row: its pane is named HOST:%N (as `tma ls --hosts` names it)."""
    return ":" in (row.get("pane") or "")


def order(rows: list[dict]) -> list[dict]:
    """This machine's rows, then the hosts' (as `tma ls --hosts` lists them); each
    blocked, done, working, idle, unknown; the oldest state first within a class."""
    return sorted(rows, key=lambda r: (remote(r), CLASS_RANK.get(table.display_class(r), 9),
                                       r.get("since") or _NEVER, r.get("locator") or "",
                                       r.get("pane") or ""))


def cells(row: dict, palette: dict, now: int) -> dict[str, str]:
    """Every column the picker can show for a row (empty string = nothing to show)."""
    cls = table.display_class(row)
    repo = row.get("repo") or ""
    branch = row.get("branch") or ""
    context = row.get("context")
    age = f"{cls} {table.age(row.get('since'), now)}" + (" muted" if row.get("muted") else "")
    if row.get("stale"):  # an offline host's last word: the glyph keeps its class
        age = table.stale_note(row)
    return {
        "glyph": palette.get(cls, ("?", ""))[0] or "?",
        "host": (row.get("host") or "") if remote(row) else "",
        "agent": row.get("agent") or "?",
        "where": row.get("locator") or row.get("pane") or "",
        "age": age,
        "repo": f"{repo}/{branch}" if repo and branch else repo,
        "detail": row.get("detail") or "",
        "context": f"ctx {context}%" if context is not None else "",
        "model": row.get("model") or "",
        "title": " ".join((row.get("title") or "").split()),
    }


def fuzzy(term: str, text: str) -> bool:
    """Is `term` a subsequence of `text` (case-insensitive)?"""
    return rank(term, text) > 0


#: How a term matched a text, best first (fzf's order: the whole text, its start, a
#: word inside it, a run anywhere, then letters scattered along it).
EXACT, PREFIX, WORD, SUBSTRING, SCATTERED = 1000, 800, 600, 400, 200


def rank(term: str, text: str) -> int:
    """How well `term` matches `text`: 0 for no match, higher for better (pure, no I/O).

    A scattered subsequence scores less the wider it is spread, so `cod` in `codex`
    (a prefix) beats `cod` in `command` (c, o ... d)."""
    q, t = term.lower(), text.lower()
    if not q:
        return 1
    if t == q:
        return EXACT
    if t.startswith(q):
        return PREFIX
    at = t.find(q)
    if at >= 0:
        while at >= 0:
            if not t[at - 1].isalnum():
                return WORD
            at = t.find(q, at + 1)
        return SUBSTRING
    # the tightest window holding the letters in order: leftmost ends, then shrink back
    best = 0
    start = t.find(q[0])
    while start >= 0:
        pos = start
        for ch in q[1:]:
            pos = t.find(ch, pos + 1)
            if pos < 0:
                return best
        begin = pos
        for ch in reversed(q[:-1]):
            begin = t.rfind(ch, start, begin)
        spread = (pos - begin + 1) - len(q)
        boundary = 20 if begin == 0 or not t[begin - 1].isalnum() else 0
        best = max(best, max(SCATTERED - 10 * spread + boundary, 10))
        start = t.find(q[0], begin + 1)
    return best


#: The columns a person names a pane by: a match there counts double.
_NAMED = ("agent", "where", "session", "host")


def score(query: str, row: dict, palette: dict, now: int) -> int:
    """Every whitespace-separated term must match some column; the sum of each term's
    best match (agent, session and location weigh double). 0: the row is filtered out."""
    named, other = _columns(row, palette, now)
    total = 0
    for term in query.split():
        best = max([2 * rank(term, v) for v in named] + [rank(term, v) for v in other])
        if not best:
            return 0
        total += best
    return total


def visible(rows: list[dict], view: View, palette: dict, now: int) -> list[dict]:
    """The rows the screen lists: scope, the invoking pane left out, the filter. With a
    query, the best match first (ties in the usual order); without, the usual order."""
    out = []
    for r in rows:
        if view.exclude and r.get("pane") == view.exclude:
            continue
        if view.scope == "session" and view.session and (remote(r)
                                                         or _session(r) != view.session):
            continue  # a host's session of the same name is another session
        out.append(r)
    out = order(out)
    if not view.query:
        return out
    scored = [(score(view.query, r, palette, now), i, r) for i, r in enumerate(out)]
    return [r for s, _i, r in sorted((x for x in scored if x[0]), key=lambda x: (-x[0], x[1]))]


def _session(row: dict) -> str:
    locator = row.get("locator") or ""
    return locator.rpartition(":")[0] if ":" in locator else locator


def _columns(row: dict, palette: dict, now: int) -> tuple[list[str], list[str]]:
    c = cells(row, palette, now)
    named = [c["agent"], c["where"], _session(row), c["host"]]
    other = [row.get("pane") or "", row.get("state") or ""] + [
        v for k, v in c.items() if k not in ("agent", "where", "host")]
    return named, other


def selected_index(shown: list[dict], selected: str | None) -> int:
    ids = [r.get("pane") for r in shown]
    return ids.index(selected) if selected in ids else 0


def pane_at(lines: list[Line], y: int) -> str | None:
    """The pane id of the row drawn on screen line `y` (None: a header, the preview...)."""
    if not 0 <= y < len(lines) or not lines[y]:
        return None
    for token in lines[y][0][1].split():
        if token.startswith("pane:"):
            return token[5:]
    return None


def scroll(shown: list[dict], selected: str | None, step: int) -> str | None:
    """`step` rows away, stopping at either end (the mouse wheel: no wrap)."""
    if not shown:
        return None
    i = min(max(selected_index(shown, selected) + step, 0), len(shown) - 1)
    return shown[i].get("pane")


def move(shown: list[dict], selected: str | None, step: int) -> str | None:
    """The pane id `step` rows away from the selection, wrapping."""
    if not shown:
        return None
    i = (selected_index(shown, selected) + step) % len(shown)
    return shown[i].get("pane")


# ---------------------------------------------------------------- layout


#: Picker columns, in screen order, with the order they are dropped in when space is short
#: (higher drops first). The title takes what is left. The host column is there only when
#: a host's row is (local rows leave it empty, and an empty column vanishes); it is never
#: dropped: without it a remote row reads as a local one.
COLUMNS = ("glyph", "host", "agent", "where", "repo", "detail", "age", "context", "model",
           "title")
DROP = ("title", "model", "repo", "context", "detail", "where")


def fit(text: str, width: int) -> str:
    """`text` in at most `width` cells, its cut marked with `…`."""
    if width <= 0:
        return ""
    return text if cw.cells(text) <= width else cw.clip(text, width - 1) + "…"


def layout(grid: list[dict[str, str]], columns, drop, width: int) -> dict[str, int]:
    """Column widths that fit `width`: empty columns vanish, then the low-priority ones."""
    cols = [c for c in columns if any(g[c] for g in grid)]
    widths = {c: max(cw.cells(g[c]) for g in grid) for c in cols}
    if "title" in widths:
        widths["title"] = min(widths["title"], 40)

    def total() -> int:
        return 2 + sum(widths.values()) + 2 * (len(widths) - 1)

    for name in drop:
        if total() <= width:
            break
        if name == "title" and "title" in widths:
            rest = total() - widths["title"]
            if width - rest >= 12:
                widths["title"] = width - rest
                break
        widths.pop(name, None)
    return widths


def row_line(c: dict[str, str], cls: str, widths: dict[str, int], *, selected: bool,
             plain: bool, pane: str = "", stale: bool = False) -> Line:
    """One row; its first span carries `pane:<id>` (also in plain mode: it is no style,
    it tells a mouse click which row it hit)."""
    sel = " sel" if selected else ""
    tag = f" pane:{pane}" if pane else ""
    line: Line = [(">" if selected else " ", (("" if plain else "bold" + sel) + tag).strip()),
                  (" ", "" if plain else sel.strip())]
    first = True
    for name, w in widths.items():
        if not first:
            line.append(("  ", "" if plain else sel.strip()))
        first = False
        style = ""
        if name == "age" and stale:
            style = "dim"
        elif name in ("glyph", "age"):
            style = f"state:{cls}"
        elif name == "host":
            style = "bold"
        elif name in ("repo", "model", "where"):
            style = "dim"
        text = fit(c[name], w)
        line.append((text + " " * (w - cw.cells(text)), "" if plain else (style + sel).strip()))
    return line


def clean_screen(text: str) -> list[str]:
    """A captured screen as plain lines: escapes and control characters removed."""
    text = _ANSI.sub("", text)
    return [_CONTROL.sub("", ln.replace("\t", "    ")).rstrip() for ln in text.split("\n")]


def too_small(width: int, height: int) -> list[Line]:
    msg = [f"terminal too small ({width}x{height})",
           f"tma needs {MIN_WIDTH}x{MIN_HEIGHT}: enlarge it, or q to quit"]
    return [[(fit(m, width), "")] for m in msg[:max(height, 1)]]


def pad(lines: list[Line], height: int) -> list[Line]:
    return lines[:height] + [[] for _ in range(height - len(lines))]


def preview_lines(view: View, width: int, height: int, plain: bool,
                  selected: dict | None) -> list[Line]:
    """The rule naming the previewed pane (and what it asks, when it is blocked on a
    call: `── s:1.0 · Bash: rm -rf build/ ──`), then the bottom of its screen, or, with
    the conversation toggled (ctrl-t), its last turns (tma.ui.conversation, loaded only
    then)."""
    name = selected.get("locator") or selected.get("pane") if selected else ""
    if selected and remote(selected):  # the host's locator alone reads as a local pane
        name = f"{selected.get('pane')} {selected.get('locator') or ''}".strip()
    if view.talk and selected:
        name = f"{name} · conversation"
    asks = _one_line(selected.get("pending_summary") or "") if selected else ""
    if asks:
        name = f"{name} · {asks}" if name else asks
    rule = f"── {name} " if name else "── "
    out: list[Line] = [[(fit(rule + "─" * max(width - cw.cells(rule), 0), width),
                         "" if plain else "dim")]]
    if height <= 1:
        return out
    if view.talk and selected:
        from tma.ui import conversation

        return out + conversation.lines(view.said, width, height - 1, plain)
    if view.preview is None:
        body = ["(no preview)"] if selected else []
    else:
        body = clean_screen(view.preview)
        while body and not body[-1]:
            body.pop()
    for text in body[-(height - 1):]:
        out.append([(fit(text, width), "")])
    return out


def _one_line(text: str) -> str:
    """Pane-supplied text on one line: no control byte reaches the terminal."""
    return " ".join("".join(c if c >= " " and c != "\x7f" else " " for c in text).split())


def header(view: View, width: int, plain: bool, shown: int, total: int) -> Line:
    scope = "this session" if view.scope == "session" else "all sessions"
    left = f" tma  {shown}/{total}  {scope}  > {view.query}"
    return [(fit(left, width), "" if plain else "head")]


def footer(view: View, width: int, plain: bool, keys: str) -> Line:
    text = view.message or hints(keys, width - 1)
    return [(fit(" " + text, width), "" if plain else "dim")]


def hints(keys: str, width: int) -> str:
    """A "key what · key what" line that fits `width`: hints drop from the right, rather
    than the line being cut mid-word; the first, the last (how to leave) and `? help`
    (which lists them all) stay."""
    parts = keys.split(" · ")
    for i in range(len(parts) - 2, 0, -1):
        if len(" · ".join(parts)) <= width:
            break
        if not parts[i].startswith("? "):
            del parts[i]
    return " · ".join(parts)


PICKER_KEYS = "enter jump · tab actions · ctrl-t conversation · ctrl-s scope · esc quit"
#: With the conversation shown, ctrl-t goes back to the screen.
PICKER_TALK_KEYS = "enter jump · tab actions · ctrl-t screen · ctrl-s scope · esc quit"
#: Without room for the preview (previews()) there is nothing for ctrl-t to turn.
PICKER_NARROW_KEYS = "enter jump · tab actions · ctrl-s scope · esc quit"


def empty_hint(view: View) -> list[str]:
    """What an empty list says, and what to do about it."""
    if view.query:
        if getattr(view, "scope", "all") == "session":
            return ["no agent in this session matches the filter",
                    "Backspace edits it, ctrl-s shows every session"]
        if getattr(view, "searching", True):  # the picker, or watch while searching
            return ["no agent matches the filter", "Backspace edits it"]
        return ["no agent matches the filter", "/ edits it, esc clears it"]
    if view.scope == "session":
        return ["no agent is running in this session", "ctrl-s shows every session"]
    return ["no agent is running in this tmux server",
            "start one (claude, codex, gemini...) in a tmux pane and it shows here"]


def list_lines(shown: list[dict], view: View, palette: dict, now: int, width: int,
               height: int, plain: bool, cell_fn=cells, columns=COLUMNS,
               drop=DROP) -> list[Line]:
    """The rows, scrolled so the selection is on screen."""
    if height <= 0:
        return []
    if not shown:
        style = "" if plain else "dim"
        return [[(fit("  " + t, width), style)] for t in empty_hint(view)][:height]
    grid = [cell_fn(r, palette, now) for r in shown]
    widths = layout(grid, columns, drop, width)
    idx = selected_index(shown, view.selected)
    top = max(0, min(idx - height + 1, len(shown) - height)) if idx >= height else 0
    out = []
    for i in range(top, min(top + height, len(shown))):
        out.append(row_line(grid[i], table.display_class(shown[i]), widths,
                            selected=i == idx, plain=plain, pane=shown[i].get("pane") or "",
                            stale=bool(shown[i].get("stale"))))
    return out


def note_lines(notes: list[str], width: int, height: int, plain: bool) -> list[Line]:
    """The hosts with no row to show (offline, connecting, no daemon holding them): one
    dim line each, no `pane:` tag (nothing to select there)."""
    return [[(fit("  " + n, width), "" if plain else "dim")] for n in notes[:max(height, 0)]]


def with_notes(rows_h: int, notes: list[str]) -> tuple[int, int]:
    """Split `rows_h` lines between the rows and the host notes: the notes get at most
    half (the rows are what a person came for), and at least one line when there is room."""
    n = min(len(notes), max(rows_h // 2, 1 if rows_h > 1 else 0))
    return rows_h - n, n


def render(rows: list[dict], view: View, width: int, height: int, *, palette: dict,
           now: int, plain: bool = False) -> list[Line]:
    """The whole picker screen: exactly `height` lines, none wider than `width`."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return pad(too_small(width, height), height)
    shown = visible(rows, view, palette, now)
    body = height - 2
    out = [header(view, width, plain, len(shown), len(rows) - (1 if _has(rows, view.exclude)
                                                                else 0))]
    preview = bool(shown) and previews(width, height)  # none: no rule
    list_h = min(len(shown) + len(view.notes), body // 2) if preview else body
    rows_h, notes_h = with_notes(list_h, view.notes)
    listed = list_lines(shown, view, palette, now, width, rows_h, plain)
    out += pad(listed + note_lines(view.notes, width, notes_h, plain), list_h)
    if preview:
        sel = shown[selected_index(shown, view.selected)] if shown else None
        out += preview_lines(view, width, body - list_h, plain, sel)
    out = pad(out, height - 1)
    keys = PICKER_TALK_KEYS if view.talk else PICKER_KEYS
    if not previews(width, height):
        keys = PICKER_NARROW_KEYS
    out.append(footer(view, width, plain, keys))
    return out


def previews(width: int, height: int) -> bool:
    """Whether a screen this size has room for the preview (and so for ctrl-t)."""
    return width >= PREVIEW_MIN_WIDTH and height - 2 >= 8


def _has(rows: list[dict], pane: str | None) -> bool:
    return bool(pane) and any(r.get("pane") == pane for r in rows)


def text(lines: list[Line]) -> str:
    """The screen as plain text (tests, the dumb-terminal driver)."""
    return "\n".join("".join(t for t, _ in ln).rstrip() for ln in lines)

"""The watch dashboard's screen (`tma watch`): the picker's rows plus tokens, quota, cost.

Pure, like tma.ui.picker (whose rows, layout and spans it reuses): row dicts + a
WatchView + a size -> lines of (text, style) spans. Wide (>= 76 columns) the body is the
list with the selected pane's preview under it, or (`--table`, `p`) a full-width table
with a header row; rows can be grouped by repo or by session (`▸ name` headers, the group
holding the most urgent row first). Narrow, it is one flat list.
"""

from __future__ import annotations

from tma.ui import picker, table

COLUMNS = ("glyph", "host", "agent", "where", "repo", "detail", "age", "context", "tokens", "quota",
           "cost", "model", "title")
DROP = ("title", "model", "repo", "quota", "tokens", "cost", "context", "detail", "where")
HEADINGS = {"glyph": "", "host": "HOST", "agent": "AGENT", "where": "WHERE", "repo": "REPO/BRANCH",
            "detail": "DETAIL", "age": "STATE", "context": "CTX", "tokens": "TOKENS",
            "quota": "QUOTA", "cost": "COST", "model": "MODEL", "title": "TITLE"}
CAVEAT = "cost: the vendor's estimate, not the bill"
WATCH_KEYS = "enter jump · tab actions · / search · g group · ? help · q quit"
#: `p` only does something on a wide screen (narrow, the body is always one flat list)
WIDE_KEYS = "enter jump · tab actions · / search · p table/preview · g group · ? help · q quit"
SEARCH_KEYS = "type to filter · enter keep · esc clear · ↑/↓ move"
#: The `?` overlay: every key and what it does (any key closes it).
HELP = (
    ("↑/↓  k/j", "move the highlight (wraps)"),
    ("enter", "jump there; watch stays open"),
    ("tab  a", "the pane's action menu"),
    ("/", "search anew: type to filter the rows, best match first; enter keeps it, esc clears it"),
    ("esc", "clear the filter (when one is set)"),
    ("p", "preview <-> full table (76 columns or more)"),
    ("ctrl-t", "preview: the pane's screen <-> its conversation (its last turns, from its "
               "transcript)"),
    ("g", "group rows (by repo, or --group's choice) <-> flat"),
    ("?", "this help"),
    ("q  ctrl-c", "quit"),
)


class WatchView(picker.View):
    __slots__ = ("table", "group", "help", "searching")

    def __init__(self, *, table: bool = False, group: str | None = None, **kw) -> None:
        super().__init__(**kw)
        self.table = table  # wide body: the full table instead of list + preview
        self.group = group  # None, "repo" or "session"
        self.help = False  # `?`: the key overlay instead of the body
        self.searching = False  # `/`: printable keys edit the query


def tokens(n: int | None) -> str:
    if n is None:
        return ""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size:
            return f"{n / size:.1f}{unit} tok"
    return f"{n} tok"


def clock(ms: int | None) -> str:
    """HH:MM (UTC) of an epoch-ms time: when a quota window resets."""
    if not ms:
        return ""
    secs = (ms // 1000) % 86400
    return f"{secs // 3600:02d}:{secs % 3600 // 60:02d}"


def quota(row: dict) -> str:
    pct = row.get("quota")
    if pct is None:
        return ""
    parts = [f"{pct}%"]
    if row.get("quota_window"):
        parts.append(row["quota_window"])
    reset = clock(row.get("quota_resets_at_ms"))
    if reset:
        parts.append(f"↻{reset}")
    return " ".join(parts)


def cost(row: dict) -> str:
    usd = row.get("cost_usd")
    return "" if usd is None else f"~${usd:.2f}"


def cells(row: dict, palette: dict, now: int) -> dict[str, str]:
    c = picker.cells(row, palette, now)
    c.update(tokens=tokens(row.get("tokens")), quota=quota(row), cost=cost(row))
    return c


def group_key(row: dict, group: str) -> str:
    if group == "session":
        return picker._session(row)
    return row.get("repo") or "(no repo)"


def grouped(shown: list[dict], group: str | None) -> list[tuple[str | None, list[dict]]]:
    """(header, rows) in screen order: groups keep the picker's order of their first row."""
    if not group:
        return [(None, shown)]
    groups: dict[str, list[dict]] = {}
    for r in shown:
        groups.setdefault(group_key(r, group), []).append(r)
    return list(groups.items())


def flat(groups) -> list[dict]:
    return [r for _, rows in groups for r in rows]


def _table_header(widths: dict[str, int], plain: bool) -> picker.Line:
    text = "  " + "  ".join(HEADINGS[c].ljust(w) for c, w in widths.items())
    return [(text.rstrip(), "" if plain else "head")]


def body_lines(shown: list[dict], view: WatchView, palette: dict, now: int, width: int,
               height: int, plain: bool, with_header: bool) -> list[picker.Line]:
    """The rows (grouped when asked), scrolled to the selection."""
    if not shown:
        return picker.list_lines(shown, view, palette, now, width, height, plain)
    groups = grouped(shown, view.group)
    ordered = flat(groups)
    grid = [cells(r, palette, now) for r in ordered]
    if with_header:  # a heading over a column nobody has a value for would keep it
        grid.append({c: HEADINGS[c] if any(g[c] for g in grid) else "" for c in COLUMNS})
    widths = picker.layout(grid, COLUMNS, DROP, width)
    entries: list[tuple[str, object]] = []  # ("head", text) or ("row", index)
    i = 0
    for name, rows in groups:
        if name is not None:
            entries.append(("head", f"▸ {name}"))
        for _ in rows:
            entries.append(("row", i))
            i += 1
    idx = picker.selected_index(ordered, view.selected)
    at = next(n for n, e in enumerate(entries) if e == ("row", idx))
    out = [_table_header(widths, plain)] if with_header else []
    room = max(height - len(out), 1)
    top = 0 if at < room else at - room + 1
    for kind, value in entries[top:top + room]:
        if kind == "head":
            out.append([(picker.fit(str(value), width), "" if plain else "bold")])
        else:
            assert isinstance(value, int)  # a "row" entry carries its row index
            r = ordered[value]
            out.append(picker.row_line(grid[value], table.display_class(r), widths,
                                       selected=value == idx, plain=plain,
                                       pane=r.get("pane") or "", stale=bool(r.get("stale"))))
    return out


def render(rows: list[dict], view: WatchView, width: int, height: int, *, palette: dict,
           now: int, plain: bool = False) -> list[picker.Line]:
    """The whole dashboard: exactly `height` lines, none wider than `width`."""
    if width < picker.MIN_WIDTH or height < picker.MIN_HEIGHT:
        return picker.pad(picker.too_small(width, height), height)
    shown = flat(grouped(picker.visible(rows, view, palette, now), view.group))
    wide = width >= picker.PREVIEW_MIN_WIDTH
    body = height - 2
    out = [header(view, width, plain, len(shown))]
    if view.help:
        out = picker.pad(out + help_lines(width, plain), height - 1)
        out.append(picker.footer(view, width, plain, "any key closes this help"))
        return out
    notes = view.notes
    if wide and not view.table and body >= 8 and shown:  # no rows: no preview, no rule
        list_h = min(len(shown) + _heads(shown, view.group) + len(notes), body // 2)
        rows_h, notes_h = picker.with_notes(list_h, notes)
        listed = body_lines(shown, view, palette, now, width, rows_h, plain, False)
        out += picker.pad(listed + picker.note_lines(notes, width, notes_h, plain), list_h)
        sel = shown[picker.selected_index(shown, view.selected)]
        out += picker.preview_lines(view, width, body - list_h, plain, sel)
    else:
        rows_h, notes_h = picker.with_notes(body, notes)
        out += body_lines(shown, view, palette, now, width, rows_h, plain,
                          with_header=wide and view.table)
        out += picker.note_lines(notes, width, notes_h, plain)
    out = picker.pad(out, height - 1)
    has_cost = any(r.get("cost_usd") is not None for r in shown)
    keys = SEARCH_KEYS if view.searching else WIDE_KEYS if wide else WATCH_KEYS
    keys += "  ·  " + CAVEAT if has_cost else ""
    out.append(picker.footer(view, width, plain, keys if not has_cost or width >= len(keys)
                             else CAVEAT))
    return out


def header(view: WatchView, width: int, plain: bool, shown: int) -> picker.Line:
    parts = [f" tma watch  {shown} agent{'' if shown == 1 else 's'}"]
    if view.group:
        parts.append(f"by {view.group}")
    if view.searching or view.query:
        parts.append(f"/ {view.query}" + ("▏" if view.searching else ""))
    return [(picker.fit("  ".join(parts), width), "" if plain else "head")]


def _heads(shown: list[dict], group: str | None) -> int:
    return len(grouped(shown, group)) if group else 0


def help_lines(width: int, plain: bool) -> list[picker.Line]:
    """The `?` overlay: a title, then one line per key."""
    pad = max(len(k) for k, _ in HELP) + 2
    out: list[picker.Line] = [[(picker.fit(" keys", width), "" if plain else "bold")]]
    for key, what in HELP:
        out.append([(picker.fit(f"  {key.ljust(pad)}{what}", width), "")])
    return out

"""`tma ls` for a person: a header, aligned columns, relative ages and the state glyphs.

Pure: rows (the ls --json row dicts) + width + now -> lines. The piped form (tab-separated,
for scripts) is tma.ui.rows.text_line and never changes with the terminal.
"""

from __future__ import annotations

from tma.core import states
from tma.ui import width as cw

HEADER = ("PANE", "AGENT", "STATE", "DETAIL", "AGE", "WHERE", "REPO", "BRANCH", "TITLE")
#: Columns shown even when empty in every row (the rest drop out).
ALWAYS = frozenset(("PANE", "AGENT", "STATE", "AGE", "WHERE", "TITLE"))
INDENT = "  "
GAP = "  "
MIN_TITLE = 12
#: Dropped in this order while the table is wider than the terminal (PANE, AGENT and
#: STATE always stay; a line still too wide is cut with …).
DROP = ("TITLE", "BRANCH", "REPO", "WHERE", "DETAIL", "AGE")


def age(ms: int | None, now: int) -> str:
    """Relative age of an epoch-ms time: 5s, 3m, 2h, 4d ("-" when never stamped)."""
    if not ms:
        return "-"
    secs = max(0, now - ms) // 1000
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return f"{secs}s"


def stale_note(row: dict) -> str:
    """An offline host's row (`stale`: its last word), in the age's place or the title's:
    `stale: offline 12s`."""
    age = row.get("age_ms")
    return "stale: offline" + (f" {age // 1000}s" if age is not None else "")


def display_class(row: dict) -> str:
    """A JSON row's display class (tma.core.states: done = idle with attention standing)."""
    return states.display_class(row["state"], bool(row.get("attention")))


def state_cell(row: dict, palette: dict[str, tuple[str, str]]) -> str:
    cls = display_class(row)
    glyph = palette.get(cls, ("", ""))[0]
    cell = f"{glyph} {cls}" if glyph else cls
    return cell + " (muted)" if row.get("muted") else cell


def _cells(row: dict, palette, now: int) -> dict[str, str]:
    branch = row.get("branch") or ""
    if row.get("worktree"):
        branch += " (worktree)"
    return {
        "PANE": row["pane"], "AGENT": row["agent"], "STATE": state_cell(row, palette),
        "DETAIL": row.get("detail") or "", "AGE": age(row.get("since"), now),
        "WHERE": row.get("locator") or "", "REPO": row.get("repo") or "", "BRANCH": branch,
        "TITLE": " ".join((row.get("title") or "").split()),
    }


def _fit(text: str, width: int) -> str:
    if cw.cells(text) <= width:
        return text
    return cw.clip(text, max(width - 1, 0)) + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cw.cells(text))


def lines(rows: list[dict], width: int, now: int,
          palette: dict[str, tuple[str, str]]) -> list[str]:
    """The table, one string per line (no newline); the title is cut to fit `width`."""
    if not rows:
        return []
    cells = [_cells(r, palette, now) for r in rows]
    cols = [h for h in HEADER if h in ALWAYS or any(c[h] for c in cells)]
    grid = [dict(zip(cols, cols, strict=True))] + cells
    widths = {h: max(cw.cells(g[h]) for g in grid) for h in cols}

    def total() -> int:
        return len(INDENT) + sum(widths[h] for h in cols) + len(GAP) * (len(cols) - 1)

    for name in DROP:
        if total() <= width or name not in cols:
            continue
        if name == "TITLE":
            room = width - (total() - widths["TITLE"])
            if room >= MIN_TITLE:
                widths["TITLE"] = room
                break
        cols.remove(name)
    out = []
    for g in grid:
        text = GAP.join(_pad(_fit(g[h], widths[h]), widths[h]) for h in cols)
        out.append(_fit((INDENT + text).rstrip(), width))
    return out


def legend(palette: dict[str, tuple[str, str]]) -> list[str]:
    """What the columns and glyphs mean, for a reader who has never seen them."""
    g = {cls: palette.get(cls, ("", ""))[0] for cls in
         ("blocked", "working", "done", "idle", "unknown")}
    return [
        "STATE says whose move it is:",
        f"  {g['blocked']} blocked  yours: the agent waits for you (DETAIL says why, "
        "e.g. permission)",
        f"  {g['working']} working  the agent's: it is busy",
        f"  {g['done']} done     finished a turn you have not looked at yet",
        f"  {g['idle']} idle     nobody's: waiting for a new prompt",
        f"  {g['unknown']} unknown  an agent tma cannot read right now",
        "AGE is how long the pane has been in that state; WHERE is session:window.pane;",
        "the status line counts panes per state (e.g. "
        f"{g['blocked']}1 {g['working']}2 = one blocked, two working).",
    ]

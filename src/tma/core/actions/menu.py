"""An unnumbered menu on screen, as an action's `[select.<agent>]` arm reads it.

Some dialogs print no digit and no accelerator on their rows: Claude Code 2.1.332's approval
when auto mode cannot check an action draws `❯ No` over `Yes`, and only the selection
cursor and Enter answer it. A key that means "Yes" there does not exist, so the broker
walks the cursor: it reads where the cursor rests on the screen captured just now, presses
the arm's `move` key, reads the screen again, and presses `confirm` only once the cursor
is seen on the option the action picks (tma.runtime.act.fire). The cursor is never
assumed: the same screen can hold it on either row, and a press of Up on the top row of
Claude's menu moves it nowhere visible while the next Down is swallowed, so a fixed
"Down, Enter" would pick No.

The menu is the bottommost run of two or more consecutive rows that `row` matches, with
exactly one row carrying the cursor mark. One such row alone is not a menu (a transcript
line `❯ Yes`, the user's own message, is one).

Pure: lines in, a reading out.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tma.core.actions.schema import Select

#: The fewest rows a run must have to be read as a menu.
MIN_ROWS = 2


@dataclass(frozen=True)
class Menu:
    options: tuple[str, ...]  # each row's words, top to bottom
    cursor: int  # the row the cursor mark is on; -1: on none, or on more than one

    @property
    def under_cursor(self) -> str | None:
        return self.options[self.cursor] if self.cursor >= 0 else None


def read(lines: list[str], sel: Select) -> Menu | None:
    """The menu on these screen lines (top to bottom), or None when none is drawn."""
    runs: list[list[tuple[str, bool]]] = []
    current: list[tuple[str, bool]] = []
    for line in lines:
        m = sel.row.match(line)
        if m is None:
            if current:
                runs.append(current)
            current = []
            continue
        current.append((m.group("option").strip(), bool(m.group("cursor"))))
    if current:
        runs.append(current)
    runs = [r for r in runs if len(r) >= MIN_ROWS]
    if not runs:
        return None
    rows = runs[-1]
    marked = [i for i, (_o, on) in enumerate(rows) if on]
    return Menu(tuple(o for o, _on in rows), marked[0] if len(marked) == 1 else -1)


def unusable(menu: Menu, sel: Select) -> str | None:
    """Why the menu cannot be answered by walking its cursor to `sel.option`, or None."""
    if sel.option not in menu.options:
        return f"its menu offers no {sel.option!r} ({' / '.join(menu.options)})"
    if menu.cursor < 0:
        return "the menu's selection cursor cannot be read"
    return None


def next_key(menu: Menu, sel: Select) -> str:
    """`confirm` when the cursor is on the option, else `move`."""
    return sel.confirm if menu.under_cursor == sel.option else sel.move


__all__ = ["MIN_ROWS", "Menu", "next_key", "read", "unusable"]

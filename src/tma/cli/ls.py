"""`tma ls`: one row per agent pane (tab-separated, or the schema-1 JSON document)."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime import card_screen
from tma.runtime.git import GitInfo
from tma.runtime.session import Session
from tma.ui import rows as render
from tma.ui import table


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("ls", argv, session)
    cfg = session.surface_config()

    result = session.cycle()
    git = GitInfo()
    rows = session.select(result.rows, sel, git)
    if args.pane:
        if all(p.pane_id != args.pane for p in result.snapshot.panes):
            raise common.NoPane(args.pane)
        rows = [r for r in rows if r.pane.pane_id == args.pane]

    if args.json:
        from tma.ui import text

        screen = {}
        if any(card_screen.wants_screen(r) for r in rows):  # only the screen knows what they ask
            screen = card_screen.screen_pending(session.server, rows, session.manifests)
        doc = render.document(rows, server=result.snapshot.socket_path, git=git,
                              screen=screen)
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    if common.on_terminal():
        sys.stdout.write(_for_a_person(rows, result, git, cfg))
        return 0
    sys.stdout.write("".join(render.text_line(r, git) for r in rows))  # scripts: TSV
    return 0


def _for_a_person(rows, result, git, cfg) -> str:
    if not rows:
        return "no agent panes (tma doctor says what it sees)\n"
    dicts = [render.row_dict(r, server="", host="", git=git) for r in rows]
    lines = table.lines(dicts, common.terminal_width(), common.now_ms(), cfg.status)
    return "".join(line + "\n" for line in lines)

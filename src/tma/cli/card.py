"""`tma card`: what one blocked pane asks (a permission, a question, a headline, or none)."""

from __future__ import annotations

import sys

from tma.cli import spec
from tma.runtime import card
from tma.runtime.session import Session
from tma.ui import cards as render
from tma.ui import text


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("card", argv, session)
    frame = card.for_pane(session, args.pane)
    if args.json:
        sys.stdout.write(text.dumps(card.document(frame)) + "\n")
        return 0
    sys.stdout.write(render.text(card.document(frame), args.pane))
    return 0

"""`tma attach --pane %N`: a terminal onto one pane, on this host. What a fleet jump
(`tma jump HOST:%N` on another machine) runs here over `ssh -t`; the move is
tma.runtime.navigate's."""

from __future__ import annotations

from tma.cli import common, spec
from tma.runtime import navigate


def main(session: common.Session, argv: list[str]) -> int:
    _sel, args = spec.parse("attach", argv, session)
    return navigate.attach(session, args.pane)

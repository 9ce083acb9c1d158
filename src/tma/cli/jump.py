"""`tma jump`: move a tmux client to the agent pane that needs you.

Forward jumps (--attention, --blocked, --next, --pane) record the pane the client
was showing on a per-client trail that --back pops and --home unwinds. --menu
hands tmux a menu whose entries run `tma jump --pane`. Every jump runs a poll
cycle first, so the candidates are read from fresh stamps. The moves are
tma.runtime.navigate's; the choices (which pane, the trail) tma.core.nav's.
"""

from __future__ import annotations

from tma.cli import common, spec
from tma.runtime.navigate import Navigator, NoClient


def main(session: common.Session, argv: list[str]) -> int:
    sel, args = spec.parse("jump", argv, session)
    direction = "pane" if args.pane is not None else (args.direction or "next")
    cfg = session.surface_config()

    job = Navigator(session, session.cycle(), sel)
    try:
        if direction == "pane":
            return job.to_pane(args.pane)
        if direction == "back":
            return job.back()
        if direction == "home":
            return job.home()
        if direction == "menu":
            return job.menu(cfg, common.now_ms())
        return job.forward(direction)
    except NoClient as exc:
        common.err(f"tma: {exc}")
        return common.FAIL

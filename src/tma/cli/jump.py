"""`tma jump`: move a tmux client to the agent pane that needs you.

Forward jumps (--attention, --blocked, --next, --pane) record the pane the client
was showing on a per-client trail that --back pops and --home unwinds. --menu
hands tmux a menu whose entries run `tma jump --pane`. Every jump runs a poll
cycle first, so the candidates are read from fresh stamps. The moves are
tma.runtime.navigate's; the choices (which pane, the trail) tma.core.nav's.
A fleet host's pane (HOST:%N) is a local window running `ssh -t HOST tma attach
--pane %N`, reused while it lives.
"""

from __future__ import annotations

from tma.cli import common, spec
from tma.runtime.navigate import Navigator, NoClient


def main(session: common.Session, argv: list[str]) -> int:
    sel, args = spec.parse("jump", argv, session)
    if args.target is not None and (args.pane is not None or args.direction):
        raise common.UsageError("TARGET is a pane to jump to: it takes no --pane or "
                                "direction flag")
    pane = args.target if args.target is not None else args.pane
    direction = "pane" if pane is not None else (args.direction or "next")
    cfg = session.surface_config()

    job = Navigator(session, session.cycle(), sel)
    if direction == "pane" and ":" in pane:
        return _to_remote(job, pane)
    try:
        if direction == "pane":
            return job.to_pane(pane)
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


def _to_remote(job: Navigator, name: str) -> int:
    """HOST:%N: a window logged in to the host. hosts.toml's reader only here: a local
    jump never loads the fleet's modules."""
    from tma.runtime.fleet import hosts

    try:
        return job.to_remote(name)
    except (NoClient, hosts.HostError) as exc:
        common.err(f"tma: {exc}")
        return common.FAIL

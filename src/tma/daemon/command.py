"""`tma daemon [--ensure|--stop|--restart]`: the foreground daemon, or its lifecycle.

cli/main.py's loader runs this module with its flags parsed (nothing imports
tma.daemon, and the daemon imports nothing of tma.cli); the lifecycle flags are the
Session's (tma.runtime.daemon_control), as `tma init`, `tma uninstall` and
autostart reach them.
"""

from __future__ import annotations

from tma.daemon import main as daemon

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from tma.runtime.session import Session


def run(session: Session, args: argparse.Namespace) -> int:
    cfg = session.config
    if args.ensure:
        return session.ensure_daemon()
    if args.stop:
        return session.stop_daemon()
    if args.restart:
        return session.restart_daemon()

    return daemon.run(session.server, cfg, session.g.manifest_dir, session.g.config)

"""`tma reload`: the running daemon re-reads its config and manifests (SIGHUP).

The daemon's lifecycle is the Session's (tma.runtime.daemon_control).
"""

from __future__ import annotations

from tma.cli import spec
from tma.runtime.config import ConfigError
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    spec.parse("reload", argv, session)

    try:
        session.config  # noqa: B018 - the server's tmux binary, when the file is good
    except ConfigError:
        pass  # the daemon reads the file itself and reports what is wrong with it
    return session.reload_daemon()

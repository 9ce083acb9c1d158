"""`tma serve --stdio`: this host's agents for a device over a pipe (tma.runtime.fleet.serve)."""

from __future__ import annotations

from tma.cli import common, spec
from tma.runtime.fleet import serve
from tma.runtime.session import Session
from tma.tmux import control


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("serve", argv, session)
    try:
        scopes = serve.parse_scopes(args.scope)
    except ValueError as exc:
        raise common.UsageError(f"--scope: {exc}") from None
    if args.interval < 250:
        raise common.UsageError(f"--interval needs at least 250 ms, got {args.interval}")
    session.surface_config()
    socket_path, _pid = control.server_facts(session.server)  # no server: exit 1 first
    return serve.run(session, scopes=scopes, device=args.device, interval_ms=args.interval,
                     socket_path=socket_path)

"""`tma web [pair]`: this machine's agents in a browser (tma.runtime.web.server) and the
pairing code that lets one in (tma.runtime.web.devices); this module parses."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.fleet.serve import parse_scopes
from tma.runtime.session import Session
from tma.runtime.web import devices, server
from tma.tmux import control


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("web", argv, session)
    try:
        scopes = parse_scopes(args.scope)
        if args.action == "pair":
            sys.stdout.write(devices.pair_text(session, args.name, scopes, args.port))
            return 0
        if args.name is not None or args.scope != "read":
            raise ValueError("--name and --scope go with `tma web pair`")
        server.check_args(args.bind, args.port, args.interval)
    except (ValueError, server.BindRefused) as exc:
        raise common.UsageError(str(exc)) from None
    except devices.DeviceError as exc:
        sys.stderr.write(f"tma web pair: {exc}\n")
        return 1
    session.surface_config()
    socket_path, _pid = control.server_facts(session.server)  # no server: exit 1 first
    return server.run(session, bind=args.bind, port=args.port, interval_ms=args.interval,
                      socket_path=socket_path)

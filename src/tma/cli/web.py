"""`tma web [pair]`: this machine's agents in a browser (tma.runtime.web.server), and the
pairing code that lets one in (tma.runtime.web.devices)."""

from __future__ import annotations

import sys
import time

from tma.cli import common, spec
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("web", argv, session)
    from tma.runtime.fleet.serve import parse_scopes

    try:
        scopes = parse_scopes(args.scope)
    except ValueError as exc:
        raise common.UsageError(f"--scope: {exc}") from None
    web = getattr(session.config, "web", None) or {}
    if args.action == "pair":
        return _pair(session, args, scopes, web)
    if args.name is not None or args.scope != "read":
        raise common.UsageError("--name and --scope go with `tma web pair`")
    if args.interval < 250:
        raise common.UsageError(f"--interval needs at least 250 ms, got {args.interval}")
    if not 0 <= args.port <= 65535:
        raise common.UsageError(f"--port: 0-65535, got {args.port}")
    from tma.runtime.web import server
    from tma.tmux import control

    try:
        server.check_bind(args.bind)
    except server.BindRefused as exc:
        raise common.UsageError(str(exc)) from None
    session.surface_config()
    socket_path, _pid = control.server_facts(session.server)  # no server: exit 1 first
    try:
        return server.run(session, bind=args.bind, port=args.port,
                          interval_ms=args.interval, socket_path=socket_path,
                          allowed_hosts=tuple(web.get("hosts", ())))
    except OSError as exc:
        sys.stderr.write(f"tma web: cannot listen on {args.bind}:{args.port}: "
                         f"{exc.strerror or exc}\n")
        return 1


def _pair(session: Session, args, scopes: tuple[str, ...], web: dict) -> int:
    from tma.runtime.web.devices import DeviceError, Store

    try:
        code, expires = Store(session.paths.state_dir).new_code(args.name, scopes)
    except DeviceError as exc:
        sys.stderr.write(f"tma web pair: {exc}\n")
        return 1
    base = web.get("url") or f"http://127.0.0.1:{args.port}/"
    minutes = max(1, round((expires - time.time() * 1000) / 60000))
    sys.stdout.write(
        f"pairing code: {code}  (good for {minutes} minutes and 5 tries; scopes "
        f"{', '.join(scopes)})\n"
        f"open: {base.split('#')[0]}#pair={code}\n"
        "(the code rides in the URL's fragment: the browser never sends it in a request "
        "line, so no log holds it)\n")
    return 0

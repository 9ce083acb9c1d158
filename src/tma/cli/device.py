"""`tma device list|grant|revoke`: the browsers paired with `tma web`
(tma.runtime.web.devices keeps them and words the answers); this module dispatches."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.fleet.serve import parse_scopes
from tma.runtime.session import Session
from tma.runtime.web import devices


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("device", argv, session)
    try:
        scopes = parse_scopes(args.scope) if args.sub == "grant" else ()
    except ValueError as exc:
        raise common.UsageError(f"--scope: {exc}") from None
    try:
        sys.stdout.write(devices.command(session, args.sub, getattr(args, "name", None),
                                         scopes, json_out=getattr(args, "json", False)))
    except devices.DeviceError as exc:
        sys.stderr.write(f"tma device: {exc}\n")
        return 1
    return 0

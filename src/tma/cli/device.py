"""`tma device list|grant|revoke`: the browsers paired with `tma web`
(tma.runtime.web.devices keeps them); this module dispatches and prints."""

from __future__ import annotations

import sys
import time

from tma.cli import common, spec
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("device", argv, session)
    from tma.runtime.web.devices import DeviceError, Store, check_name

    store = Store(session.paths.state_dir)
    try:
        if args.sub == "list":
            devices = store.list()
            if args.json:
                from tma.ui import text

                sys.stdout.write(text.dumps({"schema": 1, "devices": [
                    {"name": d.name, "scopes": list(d.scopes),
                     "paired_at_ms": d.paired_at_ms} for d in devices]}) + "\n")
                return 0
            if not devices:
                sys.stdout.write("no paired devices (tma web pair pairs one)\n")
            for d in devices:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d.paired_at_ms / 1000))
                sys.stdout.write(f"{d.name}\t{','.join(d.scopes)}\tpaired {when}\n")
            return 0
        if args.sub == "grant":
            from tma.runtime.fleet.serve import parse_scopes

            try:
                scopes = parse_scopes(args.scope)
            except ValueError as exc:
                raise common.UsageError(f"--scope: {exc}") from None
            d = store.grant(check_name(args.name), scopes)
            sys.stdout.write(f"{d.name}: {', '.join(d.scopes)} (from its next request)\n")
            return 0
        store.revoke(check_name(args.name))
        sys.stdout.write(f"revoked {args.name}: its next request is refused\n")
        return 0
    except DeviceError as exc:
        sys.stderr.write(f"tma device: {exc}\n")
        return 1

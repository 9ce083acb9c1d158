"""`tma host add|list|check|remove`: the fleet's hosts (tma.runtime.fleet.hosts keeps them,
tma.runtime.fleet.links checks a link); this module dispatches and prints."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.fleet import hosts as store, links as fleet
from tma.runtime.session import Session
from tma.ui import text


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("host", argv, session)
    try:
        if args.sub == "add":
            via = store.parse_via(args.via) if args.via is not None else None
            host = store.Host(store.check_name(args.name), args.target, via, args.act,
                              args.login)
            file = store.add(session, host, replace=args.replace)
            sys.stdout.write(f"added {host.name} ({host.describe_via() if via else 'ssh ' + host.target}) "
                             f"to {session.paths.tilde(file)}; `tma host check {host.name}` "
                             "tries the link\n")
            return 0
        if args.sub == "set":
            changes: dict[str, object] = {
                "target": args.target, "login": args.login,
                "act": None if args.act is None else ("" if args.act == "none" else args.act),
                "via": None if args.via is None else (
                    () if not args.via.strip() else store.parse_via(args.via))}
            if all(v is None for v in changes.values()):
                raise common.UsageError("host set: name at least one of --target, --via, "
                                        "--act, --login")
            host, file = store.update(session, args.name, changes)
            act = f", act:{host.act}" if host.act else ", read-only"
            login = f", jump logs in as {host.login}" if host.login else ""
            sys.stdout.write(f"{host.name}: {host.describe_via() if host.via else 'ssh ' + host.target}"
                             f"{act}{login} (in {session.paths.tilde(file)})\n")
            return 0
        if args.sub == "remove":
            file = store.remove(session, args.name)
            sys.stdout.write(f"removed {args.name} from {session.paths.tilde(file)}\n")
            return 0
        if args.sub == "list":
            configured = store.load(session)
            if args.json:
                doc = {"schema": 1, "hosts": [
                    {"name": h.name, "target": h.target,
                     "via": list(h.via) if h.via else None, "act": h.act,
                     "login": h.login}
                    for h in configured]}
                sys.stdout.write(text.dumps(doc) + "\n")
                return 0
            if not configured:
                sys.stdout.write("no hosts (tma host add NAME TARGET adds one)\n")
            for h in configured:
                act = f"\tact:{h.act}" if h.act else ""
                sys.stdout.write(f"{h.name}\t{h.target}\t{h.describe_via()}{act}\n")
            return 0
        lines, good = fleet.check(session, args.name, timeout=args.timeout)
    except store.HostError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    for line in lines:
        mark = {True: "ok  ", False: "FAIL", None: "    "}[line.ok]
        sys.stdout.write(f"{mark} {line.what}\n")
        if line.fix and line.ok is not True:
            sys.stdout.write(f"       fix: {line.fix}\n")
    return 0 if good else common.FAIL

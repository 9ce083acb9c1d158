"""`tma transcript`: a pane's transcript, newest first (or one event whole).

`--pane HOST:%N` asks the host (tma.runtime.fleet.read: the protocol's `window` or `event`
request over its link): the host alone picks the file."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.core.errors import REFUSED
from tma.runtime.session import Session
from tma.runtime.transcript import read, stores
from tma.ui import text, transcript as render


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("transcript", argv, session)
    if args.last is not None and not 1 <= args.last <= 1000:
        raise common.UsageError(f"--last takes 1 to 1000 events, got {args.last}")
    if args.event is not None and (args.last is not None or args.headers):
        raise common.UsageError("--event shows one event whole: no --last or --headers")
    if ":" in args.pane:
        return _remote(session, args)
    if args.timeout is not None:
        raise common.UsageError("--timeout bounds a host's answer: it goes with --pane HOST:%N")
    try:
        t = read.target(session, args.pane)
        if args.event is not None:
            doc = render.event_document(read.event(t, session.env, args.event), args.pane)
        else:
            window = read.window(t, session.env, last=args.last, before=args.before,
                                 bodies=not args.headers)
            doc = render.document(window, args.pane)
    except stores.NoTranscript as exc:
        common.err(f"tma: nothing to show for {args.pane}: {exc}")
        return common.FAIL
    except (stores.CursorInvalid, stores.TooLarge) as exc:
        common.err(f"tma: {args.pane}: {exc}")
        return REFUSED
    except stores.TranscriptError as exc:  # e.g. the file was cut while it was read
        common.err(f"tma: {args.pane}: {exc}; try again")
        return common.FAIL
    return _print(doc, args)


def _print(doc: dict, args) -> int:
    if args.json:
        sys.stdout.write(text.dumps(doc) + "\n")
    elif "event" in doc:
        sys.stdout.write(render.body(doc))
    else:
        sys.stdout.write(render.text(doc))
    return 0


def _remote(session: Session, args) -> int:
    # the link's modules cost a local read their import: only over the link
    from tma.runtime.fleet import hosts, link, read as fleet_read

    timeout = link.DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout
    if not timeout > 0:
        raise common.UsageError(f"--timeout needs a number of seconds > 0, got {timeout:g}")
    host = args.pane.partition(":")[0]
    try:
        if args.event is not None:
            doc = render.event_document(
                fleet_read.event(session, args.pane, args.event, timeout=timeout), args.pane,
                host)
        else:
            doc = render.document(fleet_read.window(session, args.pane, last=args.last,
                                                    before=args.before, timeout=timeout),
                                  args.pane, host)
    except hosts.HostError as exc:
        raise common.UsageError(f"--pane {args.pane}: {exc}") from None
    except LookupError:
        raise common.NoPane(args.pane) from None
    except fleet_read.Refused as exc:
        common.err(f"tma: {args.pane}: the host said {exc.code}: {exc.message}")
        return REFUSED if exc.code == "cursor-invalid" else common.FAIL
    except fleet_read.HostDown as exc:
        said = f"tma: host {exc.host} did not answer for {args.pane}'s transcript: {exc.state}"
        common.err(said + (f" ({exc.error})" if exc.error else "")
                   + f" (tma host check {exc.host} says more)")
        return common.FAIL
    return _print(doc, args)

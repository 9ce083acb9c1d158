"""`tma card`: what one blocked pane asks (a permission, a question, a headline, or none).

`--pane HOST:%N` asks the host (tma.runtime.fleet.read: the protocol's `card` request over
its link): the card is the one the host's own `tma card` builds, printed the same way."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.act import card
from tma.runtime.session import Session
from tma.ui import cards as render, text


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("card", argv, session)
    if ":" in args.pane:
        return _remote(session, args)
    if args.timeout is not None:
        raise common.UsageError("--timeout bounds a host's answer: it goes with --pane HOST:%N")
    frame = card.for_pane(session, args.pane)
    if args.json:
        sys.stdout.write(text.dumps(card.document(frame)) + "\n")
        return 0
    sys.stdout.write(render.text(card.document(frame), args.pane))
    return 0


def _remote(session: Session, args) -> int:
    # the link's modules cost a local card their import: only over the link
    from tma.runtime.fleet import hosts, link, read as fleet_read

    timeout = link.DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout
    if not timeout > 0:
        raise common.UsageError(f"--timeout needs a number of seconds > 0, got {timeout:g}")
    try:
        frame = fleet_read.card(session, args.pane, timeout=timeout)
    except hosts.HostError as exc:
        raise common.UsageError(f"--pane {args.pane}: {exc}") from None
    except LookupError:
        raise common.NoPane(args.pane) from None
    except fleet_read.HostDown as exc:
        said = f"tma: host {exc.host} did not answer for {args.pane}'s card: {exc.state}"
        said += f" ({exc.error})" if exc.error else ""
        held = fleet_read.daemon_state(session, exc.host)
        if held is not None and held.get("state") != "online":
            said += f"; the daemon's link says {held['state']} ({held.get('link')})"
        common.err(said + f" (tma host check {exc.host} says more)")
        return common.FAIL
    doc = card.document(frame)
    if args.json:
        sys.stdout.write(text.dumps(doc) + "\n")
        return 0
    shown = dict(doc, pane=args.pane) if "pane" in doc else doc  # a person reads HOST:%N
    sys.stdout.write(render.text(shown, args.pane))
    return 0

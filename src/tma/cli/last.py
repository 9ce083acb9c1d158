"""`tma last`: the agent's last answer as plain text (its transcript's assistant text of
the last turns). `--pane HOST:%N` asks the host over its link."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime.session import Session
from tma.runtime.transcript import read, stores
from tma.ui import transcript as render


def main(session: Session, argv: list[str]) -> int:
    _sel, args = spec.parse("last", argv, session)
    if args.turns < 1:
        raise common.UsageError(f"--turns takes 1 or more, got {args.turns}")
    if ":" in args.pane:
        texts = _remote(session, args)
        if texts is None:
            return common.FAIL
    else:
        if args.timeout is not None:
            raise common.UsageError("--timeout bounds a host's answer: it goes with --pane "
                                    "HOST:%N")
        try:
            texts = read.last_answer(read.target(session, args.pane), session.env, args.turns)
        except stores.TranscriptError as exc:  # none, a bad cursor, too large, cut mid-read
            common.err(f"tma: nothing to show for {args.pane}: {exc}")
            return common.FAIL
    out = render.answer(texts)
    if not out:
        common.err(f"tma: nothing to show for {args.pane}: no answer in its transcript yet")
        return common.FAIL
    sys.stdout.write(out)
    return 0


def _remote(session: Session, args) -> list[str] | None:
    from tma.runtime.fleet import hosts, link, read as fleet_read

    timeout = link.DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout
    if not timeout > 0:
        raise common.UsageError(f"--timeout needs a number of seconds > 0, got {timeout:g}")
    try:
        return fleet_read.last_answer(session, args.pane, args.turns, timeout=timeout)
    except hosts.HostError as exc:
        raise common.UsageError(f"--pane {args.pane}: {exc}") from None
    except LookupError:
        raise common.NoPane(args.pane) from None
    except fleet_read.Refused as exc:
        common.err(f"tma: nothing to show for {args.pane}: the host said {exc.code}: "
                   f"{exc.message}")
    except fleet_read.HostDown as exc:
        common.err(f"tma: host {exc.host} did not answer for {args.pane}'s last answer: "
                   f"{exc.state}" + (f" ({exc.error})" if exc.error else "")
                   + f" (tma host check {exc.host} says more)")
    return None

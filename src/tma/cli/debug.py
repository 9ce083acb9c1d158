"""`tma debug explain|capture|transitions|notify-test|stamp`: manifest authoring,
inspection and test harness tools. The work is tma.runtime.debug's, the text
tma.ui.debug's; this module dispatches and prints."""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime import debug
from tma.runtime.session import Session
from tma.ui import debug as render, text


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("debug", argv, session)

    try:
        if args.sub == "explain":
            if not args.capture and not args.pane:
                raise common.UsageError("explain needs a PANE or --capture FILE")
            doc = (debug.explain_capture(session, args.capture, args.agent, args.prior)
                   if args.capture else debug.explain_pane(session, args.pane))
            out = text.dumps(doc) + "\n" if args.json else render.explain(doc)
        elif args.sub == "transitions":
            session.config  # noqa: B018 - loaded first: the server's tmux binary is its
            doc = debug.transitions(session.server)
            out = text.dumps(doc) + "\n" if args.json else render.transitions(doc)
        elif args.sub == "capture":
            out = debug.capture_pane(session, args.pane)
        elif args.sub == "notify-test":
            import os

            lines, rc = debug.notify_test(session, args.trigger, os.getcwd())
            sys.stdout.write("".join(line + "\n" for line in lines))
            return rc
        else:
            session.config  # noqa: B018 - as above
            debug.stamp(session.server, args)
            return 0
    except debug.DebugError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    sys.stdout.write(out)
    return 0

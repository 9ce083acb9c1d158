"""`tma wait`: block until a pane (or a fleet) reaches a state.

A thin driver over the row feed (tma.runtime.feed): the first cycle runs at once,
then one per 1 s tick, with the config re-read every tick. The decision is
`tma.runtime.waiting`'s.

Exit: 0 satisfied (row(s) on stdout), 1 runtime (no server, ambiguous --agent),
2 usage (also an empty --all scope), 3 watched pane vanished, 4 its agent exited
while the pane lives, 124 timed out.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.runtime import waiting
from tma.runtime.feed import Feed
from tma.runtime.session import Session
from tma.ui import rows as render


def main(session: Session, argv: list[str]) -> int:
    sel, args = spec.parse("wait", argv, session)
    waiter, timeout = waiting.from_args(sel, args)
    session.surface_config()
    feed = Feed(session, sel, slow="tma: tmux slow to respond; still waiting")
    deadline = None
    checked = False
    while True:  # Ctrl-C: 130 at cli/main.py
        tick = feed.tick()
        if deadline is None and timeout is not None:
            deadline = feed.start + timeout
        result = tick.result
        if result is not None:
            opening = [p.pane_id for p in result.first_snapshot.panes]
            if not checked and waiter.kind == waiting.PANE and waiter.pane not in opening:
                raise common.NoPane(waiter.pane or "")  # a --pane absent at the start: exit 3 now
            checked = True
            # the opening read: a pane killed mid-cycle still counts as seen, so the
            # next tick reports it vanished (exit 3)
            step = waiter.step(result.rows, opening, in_scope=feed.in_scope(),
                               producing=not result.stats.stampede)
            for note in waiter.notes:
                common.err(note)
            waiter.notes.clear()
            if step.kind != waiting.WAITING:
                return _finish(step, waiter, sel, tick, args.json, feed.cfg.status)
        if deadline is not None and feed.clock() >= deadline:
            secs = format(timeout, "f").rstrip("0").rstrip(".")
            common.err(f"tma: timed out after {secs}s waiting for "
                       f"{waiter.goal.describe()} (exit {waiting.EXIT_TIMEOUT})")
            return waiting.EXIT_TIMEOUT
        feed.pause(deadline)


def _finish(step, waiter, sel, tick, as_json: bool, palette: dict) -> int:
    goal = waiter.goal.describe()
    if step.kind == waiting.MATCHED:
        if as_json:
            from tma.ui import text

            doc = render.document(step.rows, server=tick.result.snapshot.socket_path,
                                  git=tick.git, one=not waiter.fleet)
            sys.stdout.write(text.dumps(doc) + "\n")
        elif common.on_terminal():  # a person: the ls table (ages, not epoch ms)
            from tma.ui import table

            dicts = [render.row_dict(r, server="", host="", git=tick.git) for r in step.rows]
            lines = table.lines(dicts, common.terminal_width(), common.now_ms(), palette)
            sys.stdout.write("".join(line + "\n" for line in lines))
        else:  # scripts: TSV
            sys.stdout.write("".join(render.text_line(r, tick.git) for r in step.rows))
        return 0
    if step.kind == waiting.VANISHED:
        common.err(f"tma: pane {step.panes[0]} vanished before reaching {goal} (exit 3)")
    elif step.kind == waiting.DEPARTED:
        common.err(f"tma: the agent on pane {step.panes[0]} exited before reaching {goal} "
                   "(exit 4)")
    elif step.kind == waiting.AMBIGUOUS:
        common.err(f'tma: --agent "{sel.agent}" matches {len(step.panes)} panes '
                   f'({", ".join(step.panes)}); target one with --pane')
    elif step.kind == waiting.EMPTY:
        common.err("tma: --all matched no agent panes in scope; nothing to wait for (exit 2)")
    return step.exit_code

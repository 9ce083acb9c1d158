"""`tma wait`: block until a pane (or a fleet) reaches a state.

A thin driver over the poll cycle: the first cycle runs at once, then one full cycle
per 1 s tick (anchored to the start, so ticks do not drift), with config and
manifests re-read every tick. The decision is `tma.runtime.waiting`'s.

Exit: 0 satisfied (row(s) on stdout), 1 runtime (no server, ambiguous --agent),
2 usage (also an empty --all scope), 3 watched pane vanished, 4 its agent exited
while the pane lives, 124 timed out.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec

TICK = 1.0


def _nonneg_int(flag: str, text: str, minimum: int = 0) -> int:
    if not text.strip().isdigit() or int(text) < minimum:
        raise common.UsageError(f"{flag} needs an integer >= {minimum}, got {text!r}")
    return int(text)


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise common.UsageError(f"--timeout needs a number of seconds >= 0, got {text!r}")
    return value


def main(argv: list[str]) -> int:
    from tma.runtime import selectors, waiting

    g, sel, args = spec.parse("wait", argv)
    try:
        until = selectors.parse_states(args.until)
    except selectors.SelectorError as exc:
        raise common.UsageError(f"--until: {exc}") from None
    since = _nonneg_int("--since", args.since) if args.since is not None else None
    timeout = _timeout(args.timeout) if args.timeout is not None else None
    goal = waiting.Goal(until, since)

    if args.pane is not None:
        if not sel.empty:
            raise common.UsageError(
                "--pane names one pane; drop the selector flags or target with "
                "--agent/--any/--all/--count")
        if not args.pane:
            raise common.UsageError("--pane needs a pane id")
        waiter = waiting.Waiter(waiting.PANE, goal, pane=args.pane)
    elif args.all:
        waiter = waiting.Waiter(waiting.ALL, goal)
    elif args.count is not None:
        waiter = waiting.Waiter(waiting.COUNT, goal,
                                count=_nonneg_int("--count", args.count, minimum=1))
    elif args.any:
        waiter = waiting.Waiter(waiting.ANY, goal)
    elif sel.agent is not None:
        waiter = waiting.Waiter(waiting.AGENT, goal)
    else:
        raise common.UsageError("name a target: --pane ID, --agent NAME, --any, --all or "
                                "--count N")

    cfg = common.load_config(g, surface=True)
    return _loop(g, cfg, sel, waiter, timeout, args.json)  # Ctrl-C: 130 at cli/main.py


class _Once:
    """A stderr writer that prints each distinct line once (per-tick reloads repeat them)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, msg: str) -> None:
        if msg not in self.seen:
            self.seen.add(msg)
            common.err(msg)


def _loop(g, cfg, sel, waiter, timeout: float | None, as_json: bool) -> int:
    import time

    from tma.runtime import manifests, waiting
    from tma.runtime.config import ConfigError
    from tma.runtime.config import load as load_config
    from tma.runtime.cycle import Cycle
    from tma.runtime.git import GitInfo
    from tma.tmux.adapter import Timeout

    server = common.server(g, cfg)
    warn = _Once()
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    slow_noted = False
    pane_checked = False
    config_error = None
    first = True
    while True:
        if not first:
            try:  # hot reload: keep the last good config on a broken file
                cfg = load_config(g.config)
                config_error = None
            except ConfigError as exc:
                if str(exc) != config_error:
                    config_error = str(exc)
                    common.err(config_error)
        first = False
        cycle = Cycle(server, cfg, g.manifest_dir, warn=warn)
        result = None
        try:  # no server, a tmux error, a broken bundled manifest: cli/main.py reports
            result = cycle.run(current=True)
            # each broken user manifest once, also when this tick needed no full set
            manifests.report_skipped(manifests.skipped(g.manifest_dir, cfg.agents), warn)
        except Timeout:
            if not slow_noted:
                slow_noted = True
                common.err("tma: tmux slow to respond; still waiting")
        if result is not None and not pane_checked:
            pane_checked = True  # a --pane that does not exist at the start: exit 3 now
            if waiter.kind == waiting.PANE and all(
                    p.pane_id != waiter.pane for p in result.first_snapshot.panes):
                raise common.NoPane(waiter.pane)

        if result is not None:
            git = GitInfo() if sel.needs_git else None
            step = waiter.step(
                # the opening read: a pane killed mid-cycle still counts as seen, so
                # the next tick reports it vanished (exit 3)
                result.rows, [p.pane_id for p in result.first_snapshot.panes],
                in_scope=(lambda r, git=git: sel.matches(r, git)) if not sel.empty else None,
                producing=not result.stats.stampede)
            for note in waiter.notes:
                common.err(note)
            waiter.notes.clear()
            if step.kind != waiting.WAITING:
                return _finish(step, waiter, sel, result, as_json, cfg.status)

        now = time.monotonic()
        if deadline is not None and now >= deadline:
            secs = format(timeout, "f").rstrip("0").rstrip(".")
            common.err(f"tma: timed out after {secs}s waiting for "
                       f"{waiter.goal.describe()} (exit {waiting.EXIT_TIMEOUT})")
            return waiting.EXIT_TIMEOUT
        # Sleep to the next tick boundary counted from the start (skipping any tick a
        # slow cycle overran), but never past the deadline: the last cycle runs there.
        ticks = int((now - start) / TICK) + 1
        wake = start + ticks * TICK
        if deadline is not None:
            wake = min(wake, deadline)
        time.sleep(max(0.0, wake - time.monotonic()))


def _finish(step, waiter, sel, result, as_json: bool, palette: dict) -> int:
    from tma.runtime import waiting

    goal = waiter.goal.describe()
    if step.kind == waiting.MATCHED:
        _emit(step.rows, waiter.fleet, result, as_json, palette)
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


def _emit(rows, fleet: bool, result, as_json: bool, palette: dict) -> None:
    from tma.runtime.git import GitInfo
    from tma.ui import rows as render

    git = GitInfo()
    if not as_json and common.on_terminal():  # a person: the ls table (ages, not epoch ms)
        from tma.ui import table

        dicts = [render.row_dict(r, server="", host="", git=git) for r in rows]
        lines = table.lines(dicts, common.terminal_width(), common.now_ms(), palette)
        sys.stdout.write("".join(line + "\n" for line in lines))
        return
    if not as_json:
        sys.stdout.write("".join(render.text_line(r, git) for r in rows))  # scripts: TSV
        return
    import os

    from tma.ui import text

    server, host = result.snapshot.socket_path, os.uname().nodename
    dicts = [render.row_dict(r, server=server, host=host, git=git) for r in rows]
    doc = {"schema": 1, "agents": dicts} if fleet else {"schema": 1, **dicts[0]}
    sys.stdout.write(text.dumps(doc) + "\n")

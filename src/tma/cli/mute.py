"""`tma mute`: silence a pane's notifications (`@agent_mute_until`).

The notifier checks the deadline after it commits a pane's marker, so a muted
episode is consumed, not queued: unmuting does not ring what the mute hid.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec


def main(argv: list[str]) -> int:
    g, sel, args = spec.parse("mute", argv)
    duration = getattr(args, "for")
    if args.clear and duration is not None:
        raise common.UsageError("--clear takes no --for")
    if args.pane and sel is not None and not sel.empty:
        raise common.UsageError("--pane takes no selector flags")
    from tma.core import notice

    ms = None
    if duration is not None:
        try:
            ms = notice.parse_duration(duration)
        except notice.DurationError as exc:
            raise common.UsageError(str(exc)) from None
    cfg = common.load_config(g)
    panes = _targets(g, cfg, sel, args.pane)
    if not panes:
        common.err("tma: no agent pane matches the selectors")
        return 3
    from tma.tmux import notify as tnotify

    until = None if args.clear else notice.mute_deadline(common.now_ms(), ms)
    server = common.server(g, cfg)
    server.source(tnotify.mute_lines(panes, until))
    listed = " ".join(panes)
    if args.clear:
        sys.stdout.write(f"tma: unmuted: {listed}\n")
    elif duration is None or until == notice.MUTE_FOREVER:
        sys.stdout.write(f"tma: muted indefinitely: {listed}\n")
    else:
        sys.stdout.write(f"tma: muted for {notice.describe_duration(duration)}: {listed}\n")
    return 0


def _targets(g, cfg, sel, pane: str | None) -> list[str]:
    """The panes to write: every agent pane the selectors match (after one cycle),
    else --pane, else $TMUX_PANE (which must exist)."""
    if sel is not None and not sel.empty:
        from tma.cli import cycle_run
        from tma.runtime.git import GitInfo

        _server, result = cycle_run.run(g, cfg)
        return [r.pane.pane_id for r in cycle_run.select(result.rows, sel, GitInfo())]
    pane = pane or common.env_pane()
    if pane is None:
        raise common.UsageError("no pane to mute: pass --pane ID or a selector "
                                "(outside tmux there is no $TMUX_PANE)")
    from tma.tmux import read

    snap = read.list_panes(common.server(g, cfg))
    if all(p.pane_id != pane for p in snap.panes):
        raise common.NoPane(pane)
    return [pane]

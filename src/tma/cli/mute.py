"""`tma mute`: silence a pane's notifications (`@agent_mute_until`).

The notifier checks the deadline after it commits a pane's marker, so a muted
episode is consumed, not queued: unmuting does not ring what the mute hid.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.core import codec, notice
from tma.tmux import notify as tnotify, read


def main(session: common.Session, argv: list[str]) -> int:
    sel, args = spec.parse("mute", argv, session)
    duration = getattr(args, "for")
    if args.list:
        if args.clear or duration is not None or args.pane:
            raise common.UsageError("--list takes no --for, --clear or --pane")
        return _list(session, sel)
    if args.clear and duration is not None:
        raise common.UsageError("--clear takes no --for")
    if args.pane and sel is not None and not sel.empty:
        raise common.UsageError("--pane takes no selector flags")

    ms = None
    if duration is not None:
        try:
            ms = notice.parse_duration(duration)
        except notice.DurationError as exc:
            raise common.UsageError(str(exc)) from None
    panes = _targets(session, sel, args.pane)
    if not panes:
        common.err("tma: no agent pane matches the selectors")
        return 3

    until = None if args.clear else notice.mute_deadline(common.now_ms(), ms)
    session.server.source(tnotify.mute_lines(panes, until))
    listed = " ".join(panes)
    if args.clear:
        sys.stdout.write(f"tma: unmuted: {listed}\n")
    elif duration is None or until == notice.MUTE_FOREVER:
        sys.stdout.write(f"tma: muted indefinitely: {listed}\n")
    else:
        sys.stdout.write(f"tma: muted for {notice.describe_duration(duration)}: {listed}\n")
    return 0


def _targets(session: common.Session, sel, pane: str | None) -> list[str]:
    """The panes to write: every agent pane the selectors match (after one cycle),
    else --pane, else $TMUX_PANE (which must exist)."""
    if sel is not None and not sel.empty:
        from tma.runtime.git import GitInfo

        result = session.cycle()
        return [r.pane.pane_id for r in session.select(result.rows, sel, GitInfo())]
    named = pane
    pane = pane or common.env_pane()
    if pane is None:
        raise common.UsageError("no pane to mute: pass --pane ID or a selector "
                                "(outside tmux there is no $TMUX_PANE)")
    if named is None:  # the pane you typed in: only when an agent runs there
        result = session.cycle()
        if not any(r.pane.pane_id == pane for r in result.rows):
            if all(p.pane_id != pane for p in result.snapshot.panes):
                raise common.NoPane(pane)
            raise common.UsageError(
                f"this pane ({pane}) runs no agent, so there is nothing to mute here: name "
                "one with --pane ID or a selector (--agent, --session...); `tma ls` lists "
                "them, `tma mute --list` the muted ones")
        return [pane]

    snap = read.list_panes(session.server)
    if all(p.pane_id != pane for p in snap.panes):
        raise common.NoPane(pane)
    return [pane]


def _list(session: common.Session, sel) -> int:
    """Every pane whose mute has not run out: pane, where, agent, until when."""
    result = session.cycle()
    now = common.now_ms()
    agents = {r.pane.pane_id: r.agent for r in result.rows}
    panes = result.snapshot.panes
    if sel is not None and not sel.empty:
        from tma.runtime.git import GitInfo

        keep = {r.pane.pane_id for r in session.select(result.rows, sel, GitInfo())}
        panes = [p for p in panes if p.pane_id in keep]
    rows = []
    for p in panes:
        raw = p.options.get("@agent_mute_until", "")
        if notice.muted(raw, now):
            rows.append((p.pane_id, p.locator, agents.get(p.pane_id, "(no agent)"),
                         _until(int(raw), now)))
    if not rows:
        sys.stdout.write("no pane is muted\n")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        cols = [v.ljust(w) for v, w in zip(r[:3], widths, strict=True)]
        sys.stdout.write("  ".join(cols) + "  " + r[3] + "\n")
    return 0


def _until(until: int, now: int) -> str:
    until = codec.to_ms(until)
    if until >= codec.to_ms(notice.MUTE_FOREVER):
        return "muted indefinitely"
    secs = max(0, until - now) // 1000
    left = (f"{secs // 86400}d {secs % 86400 // 3600}h" if secs >= 86400 else
            f"{secs // 3600}h {secs % 3600 // 60}m" if secs >= 3600 else
            f"{secs // 60}m {secs % 60}s" if secs >= 60 else f"{secs}s")
    return f"muted for {left} more"

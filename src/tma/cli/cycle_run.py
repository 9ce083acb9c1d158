"""Running one poll cycle for a surface: server, config, errors, --debug-timing."""

from __future__ import annotations

import sys

from tma.cli import common


def run(g: common.Globals, cfg, *, produce: bool = True, report: bool = True,
        lean: bool = False, current: bool = True):
    """One cycle. NoServer, TmuxError and BundledManifestError reach cli/main.py's
    error boundary (exit 1). `report`: name broken user manifests on stderr even when
    the cycle did not need the full set. `lean`: the rows carry no telemetry or request
    lane and no pane path (see tma.tmux.read.CYCLE_OPTIONS). `current`: no verdict
    older than its screen (tma.runtime.cycle.Cycle.run); only the status line, polled
    by every client at once, passes False."""
    from tma.runtime.cycle import Cycle

    server = common.server(g, cfg)
    cycle = Cycle(server, cfg, g.manifest_dir, warn=sys.stderr.write, lean=lean)
    result = cycle.run(produce=produce, current=current)
    if report:
        common.report_manifests(g, cfg)
    if g.debug_timing:
        sys.stderr.write(result.stats.line() + "\n")
    return server, result


def select(rows, sel, git=None):
    if sel.empty:
        return list(rows)
    return [r for r in rows if sel.matches(r, git)]

"""Running one poll cycle for a surface: server, config, errors, --debug-timing."""

from __future__ import annotations

import sys

from tma.cli import common


def run(g: common.Globals, cfg, *, produce: bool = True):
    """One cycle. NoServer, TmuxError and BundledManifestError reach cli/main.py's
    error boundary (exit 1)."""
    from tma.runtime.cycle import Cycle

    server = common.server(g, cfg)
    cycle = Cycle(server, cfg, g.manifest_dir, warn=sys.stderr.write)
    result = cycle.run(produce=produce)
    if g.debug_timing:
        sys.stderr.write(result.stats.line() + "\n")
    return server, result


def select(rows, sel, git=None):
    if sel.empty:
        return list(rows)
    return [r for r in rows if sel.matches(r, git)]

"""Running one poll cycle for a surface: server, config, errors, --debug-timing."""

from __future__ import annotations

import sys

from tma.cli import common


def run(g: common.Globals, cfg, *, produce: bool = True, report: bool = True):
    """One cycle; exits 1 with a clean message when there is no server. `report`: name
    broken user manifests on stderr even when the cycle did not need the full set."""
    from tma.runtime.cycle import Cycle
    from tma.tmux.adapter import NoServer, TmuxError

    server = common.server(g, cfg)
    cycle = Cycle(server, cfg, g.manifest_dir, warn=sys.stderr.write)
    try:
        result = cycle.run(produce=produce)
    except NoServer:
        common.err("tma: no tmux server running")
        raise SystemExit(common.FAIL) from None
    except TmuxError as exc:
        common.err(f"tma: {exc}")
        raise SystemExit(common.FAIL) from None
    except _bundled_error() as exc:
        common.err(str(exc))
        raise SystemExit(common.FAIL) from None
    if report:
        common.report_manifests(g, cfg)
    if g.debug_timing:
        sys.stderr.write(result.stats.line() + "\n")
    return server, result


def _bundled_error():
    from tma.runtime.manifests import BundledManifestError

    return BundledManifestError


def select(rows, sel, git=None):
    if sel.empty:
        return list(rows)
    return [r for r in rows if sel.matches(r, git)]

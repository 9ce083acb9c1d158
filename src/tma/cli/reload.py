"""`tma reload`: the running daemon re-reads its config and manifests (SIGHUP).

Reaches tma.daemon by name at run time (nothing imports it; see cli/daemon.py).
"""

from __future__ import annotations

import importlib

from tma.cli import common, spec


def main(argv: list[str]) -> int:
    g, _sel, _args = spec.parse("reload", argv)
    from tma.runtime.config import ConfigError

    try:
        cfg = common.load_config(g)
    except ConfigError:
        cfg = None  # the daemon reads the file itself and reports what is wrong with it
    server = common.server(g, cfg)
    return importlib.import_module("tma.daemon.main").reload(server)

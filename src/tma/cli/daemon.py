"""`tma daemon [--ensure|--stop|--restart]`: parse, load the config, hand over to
tma.daemon.

tma.daemon is a leaf that nothing imports (import-linter holds tma.cli to it too):
the command reaches it by name at run time, the way cli/main.py reaches every
command module.
"""

from __future__ import annotations

import importlib
import sys

from tma.cli import common, spec


def _child_argv(g: common.Globals) -> list[str]:
    """The foreground daemon's command line, with the same server, config, manifests."""
    argv = [sys.executable, "-m", "tma"]
    for flag, value in (("--socket-name", g.socket_name), ("--socket-path", g.socket_path),
                        ("--config", g.config), ("--manifest-dir", g.manifest_dir)):
        if value:
            argv += [flag, value]
    return argv + ["daemon"]


def ensure(g: common.Globals, cfg) -> int:
    """`tma daemon --ensure` as a typed call (`tma init` uses it)."""
    daemon = importlib.import_module("tma.daemon.main")
    return daemon.ensure(common.server(g, cfg), _child_argv(g))


def stop(g: common.Globals, cfg) -> int:
    """`tma daemon --stop` as a typed call (`tma uninstall` uses it)."""
    daemon = importlib.import_module("tma.daemon.main")
    return daemon.stop(common.server(g, cfg))


def running(g: common.Globals, cfg) -> str | None:
    """This server's daemon, described, when one runs or is starting (`tma init`)."""
    daemon = importlib.import_module("tma.daemon.main")
    return daemon.running(common.server(g, cfg))


def main(argv: list[str]) -> int:
    g, _sel, args = spec.parse("daemon", argv)
    cfg = common.load_config(g)
    server = common.server(g, cfg)
    daemon = importlib.import_module("tma.daemon.main")
    if args.ensure:
        return ensure(g, cfg)
    if args.stop:
        return daemon.stop(server)
    if args.restart:
        return daemon.restart(server, _child_argv(g))
    return daemon.run(server, cfg, g.manifest_dir, g.config)

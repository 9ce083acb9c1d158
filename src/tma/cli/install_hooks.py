"""`tma install-hooks AGENT|--all [--check] [--uninstall] [--yes]`: wire agents to tma.

This module parses the flags into a `tma.install.wiring.Request` and calls the typed
functions there: per agent an adapter (tma.install.registry) reads the agent's config,
plans the edit and reports its status; the wiring shows the diff, asks, writes, and
installs, removes or verifies the tmux attention hooks (tma.install.tmux_hooks). See
docs/how-to/install-agent-hooks.md for every caveat.

Exit 0 on success; 1 on an unknown/hookless agent, a refused or unwritable file, a
declined prompt, or `--check` drift.
"""

from __future__ import annotations

import argparse

from tma.cli import common
from tma.install.registry import AGENTS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tma install-hooks",
        description="wire an agent's hooks to tma (diff first, then ask)")
    p.add_argument("agent", nargs="?", help=", ".join(AGENTS))
    p.add_argument("--all", action="store_true",
                   help="every agent that already carries tma wiring")
    p.add_argument("--uninstall", action="store_true", help="remove tma's wiring")
    p.add_argument("--check", action="store_true", help="verify the wiring (exit 1 on drift)")
    sl = p.add_mutually_exclusive_group()
    sl.add_argument("--statusline", dest="statusline", action="store_const", const="on",
                    default="keep", help="install the context statusline shim (claude, cursor)")
    sl.add_argument("--no-statusline", dest="statusline", action="store_const", const="off",
                    help="remove the statusline shim and remember that choice")
    p.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    p.add_argument("--settings", metavar="PATH", help="Claude settings.json")
    p.add_argument("--gemini-settings", metavar="PATH", help="Gemini settings.json")
    p.add_argument("--codex-config", metavar="PATH", help="Codex config.toml")
    p.add_argument("--codex-hooks", metavar="PATH", help="Codex hooks.json")
    p.add_argument("--cursor-hooks", metavar="PATH", help="Cursor hooks.json")
    p.add_argument("--cursor-cli-config", metavar="PATH", help="Cursor cli-config.json")
    p.add_argument("--opencode-plugin", metavar="PATH", help="OpenCode plugin file")
    p.add_argument("--pi-extension", metavar="PATH", help="pi extension file")
    p.add_argument("--config-dir", metavar="DIR", help="tma's config directory")
    p.add_argument("--wrapper-path", metavar="PATH", help="where tma-hook is written")
    p.add_argument("--wrapper-ref", choices=("absolute", "bare"),
                   help="how configs name tma-hook (default: [install] wrapper_ref)")
    return p


def main(argv: list[str]) -> int:
    g, rest = common.split_globals(argv)
    args = _parser().parse_args(rest)
    if args.agent and args.all:
        common.err("tma: install-hooks: name an agent or pass --all, not both")
        return common.FAIL
    if not args.agent and not args.all and not args.check:
        raise common.UsageError(f"name an agent ({', '.join(AGENTS)}) or pass --all "
                                "(or --check)")
    if args.check and args.uninstall:
        raise common.UsageError("--check and --uninstall are exclusive")
    cfg = common.load_config(g)
    from tma.install import wiring

    return run(g, cfg, wiring.Request.from_args(args))


def run(g, cfg, req) -> int:
    """One install-hooks run for a parsed request (tma init calls this too)."""
    from tma.install import common as ic
    from tma.install import wiring

    mset = common.load_manifests(g, cfg)
    if req.agent:
        problem = wiring.validate_agent(req.agent, mset)
        if problem:
            common.err(problem)
            return common.FAIL
    io = wiring.Output()
    try:
        setup = wiring.prepare(req, cfg)
        for w in setup.warnings:
            io.warn(w)
        server = common.server(g, cfg)
        if req.check:
            return wiring.check(req, setup, mset, server, cfg, io)
        return wiring.wire(req, setup, mset, server, cfg, io)
    except ic.InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL

"""`tma install-hooks AGENT|--all [--check] [--uninstall] [--yes]`: wire agents to tma.

This module parses the flags into a `tma.install.wiring.Request` and calls the typed
functions there: per agent an adapter (tma.install.registry) reads the agent's config,
plans the edit and reports its status; the wiring shows the diff, asks, writes, and
installs, removes or verifies the tmux attention hooks (tma.install.tmux_hooks). See
docs/how-to/install-agent-hooks.md for every caveat.

Exit 0 on success; 2 usage (no agent named, an unknown agent, an agent with --all);
1 on a hookless agent, a refused or unwritable file, a declined prompt, or `--check`
drift.
"""

from __future__ import annotations

from tma.cli import common, spec
from tma.install.registry import AGENTS


def _parser():
    return spec.parser("install-hooks")  # declared in tma.cli.spec


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("install-hooks", argv)
    if args.agent and args.all:
        raise common.UsageError("name an agent or pass --all, not both")
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

    mset = common.load_manifests(g, cfg)  # BundledManifestError: cli/main.py
    if req.agent:
        problem = wiring.validate_agent(req.agent, mset)
        if problem:
            if mset.get(req.agent) is None:  # a name no manifest has: a usage error
                problem += spec.did_you_mean(req.agent, wiring.registry.AGENTS)
                common.err(problem)
                return common.USAGE
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

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
from tma.install import wiring
from tma.install.registry import AGENTS
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("install-hooks", argv, session)
    if args.agent and args.all:
        raise common.UsageError("name an agent or pass --all, not both")
    if not args.agent and not args.all and not args.check:
        raise common.UsageError(f"name an agent ({', '.join(AGENTS)}) or pass --all "
                                "(or --check)")
    if args.check and args.uninstall:
        raise common.UsageError("--check and --uninstall are exclusive")

    cfg = session.config
    mset = session.manifests  # BundledManifestError: cli/main.py
    if args.agent:
        problem = wiring.validate_agent(args.agent, mset)
        if problem:
            if mset.get(args.agent) is None:  # a name no manifest has: a usage error
                common.err(problem + spec.did_you_mean(args.agent, AGENTS))
                return common.USAGE
            common.err(problem)
            return common.FAIL
    return wiring.run(wiring.Request.from_args(args), cfg, mset, session.server,
                      wiring.Output())

"""`tma uninstall [--yes] [file options]`: take tma back out, wiring and options.

1. Every agent's wiring, through that agent's own installer (`install-hooks
   --uninstall`: the diff first, `Apply this change? [y/N]`, `--yes` skips it). An
   agent with nothing of tma's says so and is skipped.
2. Only when no agent carries tma wiring any more (a declined or failed agent keeps
   its hooks firing, and they need the rest): the tmux attention hooks, then the
   sweep — every pane loses every option tma writes (the option registry's
   `UNINSTALL_PANE_OPTIONS`, survivors included: @agent_action, @agent_mute_until,
   @tma_watch_pid), every window and session its rollup, the server every `@tma_*`
   option (jump trails, @tma_last_poll, @tma_setpf_ok ...). `@agent_ignore` is the
   user's and stays.
3. A reminder: a `#(tma status)` added to status-right by hand is the user's to
   remove (tma never edits it).

Exit 0 when everything is gone; 1 when an agent was declined or could not be
unwired, or the tmux side failed.
"""

from __future__ import annotations

import sys

from tma.cli import common, spec

REMINDER = ("tma: if you added #(tma status) to your tmux status-right by hand, remove it "
            "yourself (tma never edits status-right), then reload: tmux source-file "
            "~/.tmux.conf")


def installer_args(args, *, uninstall: bool):
    """install-hooks' own argument namespace carrying our flags."""
    from tma.cli import install_hooks as ih

    ns = ih._parser().parse_args([])
    for key, value in vars(args).items():
        if hasattr(ns, key) and value is not None:
            setattr(ns, key, value)
    ns.uninstall = uninstall
    return ns


def _manifest(name: str, mset):
    """The agent's manifest; the bundled one when the loaded set lacks it or made it
    hookless (uninstall must still find and remove what an earlier install wrote)."""
    m = mset.get(name)
    if m is not None and m.hook_capable:
        return m
    from tma.core import bundled

    try:
        return bundled.load(name)
    except (KeyError, bundled.BundledManifestError):
        return m  # no bundled manifest: the loaded one is all there is


def sweep_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(pane options, session options) the sweep unsets, from the option registry."""
    from tma.core import options

    session = tuple(o.name for o in options.OPTIONS if o.scope == "session"
                    and o.removal == options.SERVER)
    return options.UNINSTALL_PANE_OPTIONS, session


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("uninstall", argv)
    cfg = common.load_config(g)

    from tma.cli import install_hooks as ih
    from tma.install import common as ic
    from tma.runtime import manifests

    mset = manifests.load(g.manifest_dir, cfg.agents)  # BundledManifestError: cli/main.py
    ns = installer_args(args, uninstall=True)
    ns.yes = args.yes
    try:
        ctx, _bare, _warnings = ih._ctx(ns, cfg)
    except ic.InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL

    failed = False
    pending = ih._Pending()  # nothing shared to write on an uninstall
    for name in ih.AGENTS:
        manifest = _manifest(name, mset)
        if manifest is None:
            continue
        ok, _ = ih._run(name, manifest, ctx, ns, pending)
        failed = failed or not ok

    still = [n for n in ih.AGENTS
             if (m := _manifest(n, mset)) is not None and m.hook_capable
             and ih._adapter(n).status(ctx, m).kind != ic.ABSENT]
    if still:
        common.err(f"tma: uninstall: still wired: {', '.join(still)}; the tmux hooks and the "
                   "pane options are left in place (run tma uninstall again)")
        return common.FAIL

    problems = ih._ensure(g, cfg, ns, ctx, uninstall=True, yes=args.yes)
    for p in problems:
        common.err(f"tma: {p}")
    swept = _sweep(g, cfg)
    if swept is None:
        failed = True
    if _status_right_runs_tma(g, cfg):
        sys.stdout.write("tma: your global status-right still runs `tma status`\n")
    sys.stdout.write(REMINDER + "\n")
    return common.FAIL if failed or problems else 0


def _status_right_runs_tma(g, cfg) -> bool:
    from tma.cli.init import runs_tma_status
    from tma.tmux import setup
    from tma.tmux.adapter import TmuxError

    try:
        return runs_tma_status(setup.status_right(common.server(g, cfg)))
    except TmuxError:
        return False


def _sweep(g, cfg) -> dict | None:
    """Unset every tma option on the server; None when it failed."""
    from tma.tmux import setup
    from tma.tmux.adapter import NoServer, TmuxError

    pane_names, session_names = sweep_names()
    try:
        counts = setup.sweep(common.server(g, cfg), pane_names, session_names)
    except NoServer:
        sys.stdout.write("tmux: no server running; no pane options to remove\n")
        return {}
    except TmuxError as exc:
        common.err(f"tma: tmux: {exc}; the pane options were not removed")
        return None
    sys.stdout.write(f"tmux: removed tma's options from {counts['panes']} pane(s), "
                     f"{counts['windows']} window(s), {counts['sessions']} session(s) and "
                     f"{counts['server_options']} server option(s)\n")
    return counts

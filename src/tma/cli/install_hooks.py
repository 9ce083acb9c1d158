"""`tma install-hooks AGENT|--all [--check] [--uninstall] [--yes]`: wire agents to tma.

Per agent an adapter (tma.install.<agent>) reads the agent's config, plans the edit and
reports its status; this module shows the diff, asks, writes, and then lets
tma.install.tmux_hooks (when present) install, remove or verify the tmux attention
hooks. See docs/how-to/install-agent-hooks.md for every caveat.

Exit 0 on success; 1 on an unknown/hookless agent, a refused or unwritable file, a
declined prompt, or `--check` drift.
"""

from __future__ import annotations

import os
import sys

from tma.cli import common, spec

AGENTS = ("claude", "codex", "gemini", "cursor", "opencode", "pi")
STATUSLINE_AGENTS = ("claude", "cursor")


def _parser():
    return spec.parser("install-hooks")  # declared in tma.cli.spec


# ---------------------------------------------------------------- context


def _abs(value: str) -> str:
    return os.path.abspath(os.path.expanduser(value))


def _paths(args) -> dict[str, str]:
    from tma.install.common import env, home

    h = home()
    codex_home = env("CODEX_HOME") or os.path.join(h, ".codex")
    xdg = env("XDG_CONFIG_HOME") or os.path.join(h, ".config")
    pi_dir = env("PI_CODING_AGENT_DIR") or os.path.join(h, ".pi", "agent")
    table = {
        "claude_settings": (args.settings, "TMA_CLAUDE_SETTINGS",
                            os.path.join(h, ".claude", "settings.json")),
        "gemini_settings": (args.gemini_settings, "TMA_GEMINI_SETTINGS",
                            os.path.join(h, ".gemini", "settings.json")),
        "codex_config": (args.codex_config, "TMA_CODEX_CONFIG",
                         os.path.join(codex_home, "config.toml")),
        "codex_hooks": (args.codex_hooks, "TMA_CODEX_HOOKS",
                        os.path.join(codex_home, "hooks.json")),
        "cursor_hooks": (args.cursor_hooks, "TMA_CURSOR_HOOKS",
                         os.path.join(h, ".cursor", "hooks.json")),
        "cursor_cli_config": (args.cursor_cli_config, "TMA_CURSOR_CLI_CONFIG",
                              os.path.join(h, ".cursor", "cli-config.json")),
        "opencode_plugin": (args.opencode_plugin, "TMA_OPENCODE_PLUGIN",
                            os.path.join(xdg, "opencode", "plugin", "tma.js")),
        "pi_extension": (args.pi_extension, "TMA_PI_EXTENSION",
                         os.path.join(pi_dir, "extensions", "tma.js")),
    }
    return {k: _abs(flag or env(var) or default) for k, (flag, var, default) in table.items()}


def config_dir(args) -> str:
    from tma.install.common import env, home

    if args.config_dir:
        return _abs(args.config_dir)
    if env("TMA_CONFIG_DIR"):
        return _abs(env("TMA_CONFIG_DIR"))
    xdg = env("XDG_CONFIG_HOME") or os.path.join(home(), ".config")
    return os.path.join(xdg, "tma")


def _ctx(args, cfg):
    from tma.install import common as ic
    from tma.install import statusline

    tma = ic.running_tma()
    wp = args.wrapper_path or ic.env("TMA_WRAPPER_PATH")
    if wp:
        path = _abs(wp)
    elif tma:
        path = os.path.join(os.path.dirname(tma), ic.WRAPPER_NAME)
    else:
        raise ic.InstallError("cannot find the tma executable to put tma-hook beside it; pass "
                              "--wrapper-path PATH (or set TMA_WRAPPER_PATH)")
    bare = (args.wrapper_ref or cfg.wrapper_ref) == "bare"
    warnings: list[str] = []
    if bare:
        ref = ic.WRAPPER_NAME
    else:
        ref = path
        if path.startswith(ic.STORE_PREFIXES):
            alias = ic.store_alias(path)
            if alias is not None:
                ref = alias
            else:
                warnings.append(f"tma: {path} is in a package store and nothing on $PATH "
                                "outside it names the same file: the hooks break when that "
                                "store path is garbage-collected")
    optout, _ = statusline.read_optout(config_dir(args))
    ctx = ic.Ctx(wrapper_path=path, ref=ref, tma_bin=tma, paths=_paths(args),
                 statusline=args.statusline, optout=optout)
    return ctx, bare, warnings


def _adapter(name: str):
    import importlib

    return importlib.import_module(f"tma.install.{name}")


# ---------------------------------------------------------------- tmux side


def _tmux_hooks():
    try:
        from tma.install import tmux_hooks
    except ImportError:
        return None
    return tmux_hooks


def _ensure(g, cfg, args, ctx, **kw) -> list[str]:
    """tma.install.tmux_hooks.ensure when that module exists; its problems."""
    mod = _tmux_hooks()
    if mod is None:
        return []
    from tma.tmux.adapter import TmuxError

    kw.update(focus_events=cfg.focus_events, config_dir=config_dir(args), tma_bin=ctx.tma_bin)
    try:
        return list(mod.ensure(common.server(g, cfg), out=sys.stdout, **kw) or [])
    except TmuxError as exc:
        return [f"tmux: {exc or 'no server reachable'}; tmux hooks not "
                f"{'verified' if kw.get('check') else 'updated'}"]


def _purge(g, cfg) -> None:
    """The last agent was unwired: unset every tma pane option and both rollups."""
    from tma.core import options
    from tma.tmux import read, write
    from tma.tmux.adapter import TmuxError

    try:
        server = common.server(g, cfg)
        snap = read.list_panes(server)
        lines = [write.remove(p.pane_id, options.UNINSTALL_PANE_OPTIONS) for p in snap.panes]
        lines += [write.rollup("window", w, "") for w in sorted({p.window_id
                                                                 for p in snap.panes})]
        lines += [write.rollup("session", s, "") for s in sorted({p.session_id
                                                                  for p in snap.panes})]
        server.source(lines)
    except TmuxError:
        return


# ---------------------------------------------------------------- check


def _check(args, g, cfg, ctx, bare, mset) -> int:
    from tma.install import common as ic

    names = [args.agent] if args.agent else list(AGENTS)
    reasons: list[str] = []
    wired_any = False
    for name in names:
        manifest = mset.get(name)
        if manifest is None or not manifest.hook_capable:
            continue
        st = _adapter(name).status(ctx, manifest)
        if st.kind == ic.ABSENT:
            if args.agent:
                reasons.append(f"{name}: hooks not installed")
            continue
        wired_any = True
        reasons += st.reasons
    if wired_any:
        reasons += ic.wrapper_problems(ctx, bare)
        reasons += _ensure(g, cfg, args, ctx, check=True)
    if reasons:
        out = ["tma: hook wiring incomplete:"] + [f"  - {r}" for r in reasons]
        hint = f"tma install-hooks {args.agent}" if args.agent else "tma install-hooks --all"
        out.append(f"run `{hint}` to repair")
        sys.stderr.write("\n".join(out) + "\n")
        return common.FAIL
    sys.stdout.write("tma: hooks OK\n")
    return 0


# ---------------------------------------------------------------- install / uninstall


class _Pending:
    """Changes shared by every agent of one run, shown with the first agent that applies."""

    def __init__(self) -> None:
        self.wrapper = None
        self.state = None


def _run(name, manifest, ctx, args, pending: _Pending) -> tuple[bool, bool]:
    """(succeeded, wrote something) for one agent."""
    from tma.install import common as ic

    try:
        plan = _adapter(name).plan(ctx, manifest, args.uninstall)
    except ic.InstallError as exc:
        common.err(f"tma: {name}: {exc}")
        return False, False
    for note in plan.notes:
        sys.stdout.write(f"tma: {note}\n")
    changes = list(plan.changes)
    shared = []
    if pending.wrapper is not None and not args.uninstall:
        shared.append(("wrapper", pending.wrapper))
    if pending.state is not None and name in STATUSLINE_AGENTS:
        shared.append(("state", pending.state))
    all_changes = [c for _, c in shared] + changes
    if not all_changes:
        verb = "nothing to remove" if args.uninstall else "already wired"
        sys.stdout.write(f"tma: {name}: {verb}\n")
        return True, False
    colour = ic.use_colour(sys.stdout)
    for ch in all_changes:
        sys.stdout.write(ic.diff(ch, colour))
    if not ic.confirm(args.yes):
        common.err("tma: aborted; no changes written")
        return False, False
    for ch in all_changes:
        try:
            ic.apply(ch)
        except ic.InstallError as exc:
            common.err(f"tma: {name}: {exc}")
            return False, True
    for kind, _ in shared:
        setattr(pending, kind, None)
    if changes:
        verb = "unwired" if args.uninstall else "wired"
        sys.stdout.write(f"tma: {name}: {verb}\n")
    for caveat in plan.caveats:
        sys.stdout.write(f"note: {caveat}\n")
    return True, True


def _carries(name, ctx, mset) -> bool:
    from tma.install import common as ic

    manifest = mset.get(name)
    if manifest is None or not manifest.hook_capable:
        return False
    return _adapter(name).status(ctx, manifest).kind != ic.ABSENT


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("install-hooks", argv)
    if args.agent and args.all:
        common.err("tma: install-hooks: name an agent or pass --all, not both")
        return common.FAIL
    if not args.agent and not args.all and not args.check:
        raise common.UsageError(f"name an agent ({', '.join(AGENTS)}) or pass --all "
                                "(or --check)")
    if args.check and args.uninstall:
        raise common.UsageError("--check and --uninstall are exclusive")
    cfg = common.load_config(g)

    from tma.install import common as ic
    from tma.install import statusline
    from tma.runtime import manifests

    mset = manifests.load(g.manifest_dir, cfg.agents)  # BundledManifestError: cli/main.py
    manifests.report_skipped(mset, sys.stderr.write)

    if args.agent:
        manifest = mset.get(args.agent)
        if manifest is None:
            common.err(f'tma: no manifest for agent "{args.agent}"')
            return common.FAIL
        if not manifest.hook_capable:
            common.err(f'tma: agent "{args.agent}" declares no [hooks] in its manifest; '
                       "there is nothing to wire")
            return common.FAIL
        if args.agent not in AGENTS:
            common.err(f'tma: no hook installer for agent "{args.agent}" (installers: '
                       f"{', '.join(AGENTS)})")
            return common.FAIL

    try:
        ctx, bare, warnings = _ctx(args, cfg)
    except ic.InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL
    for w in warnings:
        common.err(w)

    if args.check:
        return _check(args, g, cfg, ctx, bare, mset)

    if args.agent:
        targets = [args.agent]
    else:
        targets = [n for n in AGENTS if _carries(n, ctx, mset)]
        if not targets:
            sys.stdout.write("tma: no agent carries tma wiring (name one: tma install-hooks "
                             "AGENT)\n")
            return 0

    pending = _Pending()
    if not args.uninstall:
        try:
            pending.wrapper = ic.wrapper_change(ctx.wrapper_path)
        except ic.InstallError as exc:
            common.err(f"tma: {exc}")
            return common.FAIL
    if args.statusline != "keep" and not args.uninstall:
        chosen = {n for n in targets if n in STATUSLINE_AGENTS}
        optout = (ctx.optout | chosen) if args.statusline == "off" else (ctx.optout - chosen)
        _, text = statusline.read_optout(config_dir(args))
        pending.state = statusline.optout_change(config_dir(args), optout, text)

    failed = False
    wrote = False
    for name in targets:
        ok, changed = _run(name, mset.get(name), ctx, args, pending)
        failed = failed or not ok
        wrote = wrote or changed

    if bare and not args.uninstall and not failed:
        import shutil

        found = shutil.which(ic.WRAPPER_NAME)
        if found is None:
            common.err(f"tma: {ic.WRAPPER_NAME} is wired by bare name but is not on $PATH; "
                       f"add {os.path.dirname(ctx.wrapper_path)} to PATH")
            failed = True
        elif os.path.realpath(found) != os.path.realpath(ctx.wrapper_path):
            common.err(f"tma: warning: {found} shadows {ctx.wrapper_path} on $PATH")

    problems: list[str] = []
    if args.uninstall:
        if wrote and not any(_carries(n, ctx, mset) for n in AGENTS):
            problems = _ensure(g, cfg, args, ctx, uninstall=True, yes=args.yes)
            _purge(g, cfg)
            sys.stdout.write("tma: no agent is wired any more; if you added #(tma status) to "
                             "your tmux status line by hand, remove it yourself\n")
    elif not failed or wrote:
        problems = _ensure(g, cfg, args, ctx, yes=args.yes)
    for p in problems:
        common.err(f"tma: {p}")
    return common.FAIL if failed or problems else 0

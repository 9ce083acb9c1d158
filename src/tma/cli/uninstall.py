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


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("uninstall", argv)
    cfg = common.load_config(g)

    from tma.install import common as ic
    from tma.install import wiring

    mset = common.load_manifests(g, cfg)  # BundledManifestError: cli/main.py
    req = wiring.Request.from_args(args, uninstall=True)
    io = wiring.Output()
    try:
        setup = wiring.prepare(req, cfg)
    except ic.InstallError as exc:
        common.err(f"tma: {exc}")
        return common.FAIL

    still = wiring.unwire_all(req, setup, mset, io)
    if still:
        common.err(f"tma: uninstall: still wired: {', '.join(still)}; the tmux hooks and the "
                   "pane options are left in place (run tma uninstall again)")
        return common.FAIL

    server = common.server(g, cfg)
    problems = wiring.tmux_hooks(server, cfg, setup, io, uninstall=True)
    for p in problems:
        common.err(f"tma: {p}")
    failed = _sweep(server) is None
    _forget(setup, io)
    if _status_right_runs_tma(server):
        sys.stdout.write("tma: your global status-right still runs `tma status`\n")
    sys.stdout.write(REMINDER + "\n")
    return common.FAIL if failed or problems else 0


def _forget(setup, io) -> None:
    """The tma-hook wrapper tma wrote, tma's own files in its config dir (the statusline
    choices, the record of what it created), every now-empty folder it created, and its
    cache."""
    import os

    from tma.install import statusline

    setup.created.remove_wrapper(setup.ctx.wrapper_path, io)
    setup.created.prune(io)
    try:
        os.unlink(statusline.state_path(setup.config_dir))
    except OSError:
        pass
    setup.created.forget_config_dir(io)
    from tma.runtime import cache

    if cache.clear():
        io.say(f"removed tma's cache {cache.directory()}")


def _status_right_runs_tma(server) -> bool:
    from tma.install.tmux_status import runs_tma_status
    from tma.tmux import setup
    from tma.tmux.adapter import TmuxError

    try:
        return runs_tma_status(setup.status_right(server))
    except TmuxError:
        return False


def _sweep(server) -> dict | None:
    """Unset every tma option on the server; None when it failed."""
    from tma.install import wiring
    from tma.tmux.adapter import NoServer, TmuxError

    try:
        counts = wiring.sweep(server)
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

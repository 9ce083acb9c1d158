"""`tma uninstall [--yes] [file options]`: take tma back out, wiring and options.

1. Every agent's wiring, through that agent's own installer (`install-hooks
   --uninstall`: the diff first, `Apply this change? [y/N]`, `--yes` skips it). An
   agent with nothing of tma's says so and is skipped.
2. Only when no agent carries tma wiring any more (a declined or failed agent keeps
   its hooks firing, and they need the rest): the daemon of this tmux server is
   stopped (`tma daemon --stop`), the key file goes (`install-keys --uninstall`),
   then the tmux attention hooks tma set (exactly those: a foreign entry on the same
   hook stays), then the sweep — every pane loses every option tma writes (the option registry's
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
from tma.install import common as ic
from tma.install import keybind, wiring
from tma.runtime import cache, daemon_files
from tma.runtime.session import Session

REMINDER = ("tma: if you added #(tma status) to your tmux status-right by hand, remove it "
            "from ~/.tmux.conf yourself (tma never edits status-right); the running server "
            "keeps it until you set it anew or run: tmux set -gu status-right")


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("uninstall", argv, session)
    cfg = session.config

    mset = session.manifests  # BundledManifestError: cli/main.py
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

    server = session.server
    # the daemon first: left running, it would stamp every pane again within a second
    failed = session.stop_daemon() != 0
    # the key file next: while it is there it owns the attention hooks (and would set
    # them again on the next server); then the hooks themselves off the running server
    keys_rc = keybind.uninstall_if_installed(
        cfg, server, session.paths, session.env, io, yes=bool(getattr(args, "yes", False)),
        config_dir=getattr(args, "config_dir", None), hooks_follow=True)
    failed = failed or bool(keys_rc)
    problems = wiring.tmux_hooks(server, cfg, setup, io, uninstall=True)
    for p in problems:
        common.err(f"tma: {p}")
    wiring.stop_watches(server, io)  # a running watch would stamp every pane again
    failed = wiring.sweep_all(server, io) is None or failed
    wiring.forget(setup, io)

    if daemon_files.forget():  # the stopped daemons' logs, and tma's cache
        io.say(f"removed the stopped daemons' logs from {daemon_files.runtime_dir()}")
    if cache.clear():
        io.say(f"removed tma's cache {cache.directory()}")
    if wiring.status_right_runs_tma(server):
        sys.stdout.write("tma: your global status-right still runs `tma status`\n")
    sys.stdout.write(REMINDER + "\n")
    return common.FAIL if failed or problems else 0

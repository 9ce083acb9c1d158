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

import os
import shutil
import sys

from tma.cli import common, spec
from tma.install import common as ic, keybind, wiring
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

    # this server's stopped daemon's log and marks (other servers' daemons keep theirs)
    removed, others = daemon_files.forget(session.known_socket())
    where = daemon_files.runtime_dir()
    if removed:
        io.say(f"removed this server's daemon files from {where}: {', '.join(removed)}")
    if others:
        io.say(f"kept {others} file{'s' if others != 1 else ''} of other tmux servers' "
               f"daemons in {where} (uninstall from each server, or remove them yourself)")
    if cache.clear():
        io.say(f"removed tma's cache {cache.directory()}")
    failed = _fleet_files(session, io, yes=bool(getattr(args, "yes", False))) or failed
    if wiring.status_right_runs_tma(server):
        sys.stdout.write("tma: your global status-right still runs `tma status`\n")
    sys.stdout.write(REMINDER + "\n")
    return common.FAIL if failed or problems else 0


def _fleet_files(session: Session, io, *, yes: bool) -> bool:
    """The fleet's records in the state dir (this machine's dispatch outbox and rung
    episodes, a host's serve ledger) go: they are tma's own. hosts.toml is the person's
    configuration: asked about, and kept unless they say yes (`--yes` does not remove
    it). True when something could not be removed."""
    state = session.paths.state_dir
    failed = False
    for part in ("fleet", "serve"):
        path = os.path.join(state, part)
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                shutil.rmtree(path)
                io.say(f"removed the fleet's records {session.paths.tilde(path)}")
            except OSError as exc:
                common.err(f"tma: could not remove {path}: {exc.strerror}")
                failed = True
    try:
        os.rmdir(state)  # only when that left it empty
    except OSError:
        pass
    hosts = session.paths.hosts_file()
    if not os.path.exists(hosts):
        return failed
    shown = session.paths.tilde(hosts)
    if yes or not ic.confirm(False, question=f"Remove your hosts file {shown} (your fleet's "
                                             "configuration)?"):
        io.say(f"kept your hosts file {shown} (yours: remove it when you want)")
        return failed
    try:
        os.unlink(hosts)
        io.say(f"removed {shown}")
    except OSError as exc:
        common.err(f"tma: could not remove {hosts}: {exc.strerror}")
        failed = True
    return failed

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
from tma.runtime.session import Session

REMINDER = ("tma: if you added #(tma status) to your tmux status-right by hand, remove it "
            "from ~/.tmux.conf yourself (tma never edits status-right); the running server "
            "keeps it until you set it anew or run: tmux set -gu status-right")


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("uninstall", argv, session)
    cfg = session.config

    from tma.install import common as ic
    from tma.install import keybind, wiring

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
    _stop_watches(server)  # a running watch would stamp every pane again
    failed = _sweep(server) is None or failed
    _forget(setup, io)
    if _status_right_runs_tma(server):
        sys.stdout.write("tma: your global status-right still runs `tma status`\n")
    sys.stdout.write(REMINDER + "\n")
    return common.FAIL if failed or problems else 0


def _forget(setup, io) -> None:
    """The tma-hook wrapper tma wrote, tma's own files in its config dir (the statusline
    choices, the hooks-state-*.toml records, the record of what it created), every
    now-empty folder it created, and its cache."""
    import glob
    import os

    from tma.install import statusline, tmux_hooks

    setup.created.remove_wrapper(setup.ctx.wrapper_path, io)
    setup.created.prune(io)
    # the statusline choices, and the record of the tmux hooks of every server (the
    # hooks live in a server's memory: a server not running now has none to remove)
    states = glob.glob(os.path.join(glob.escape(setup.config_dir),
                                    f"{tmux_hooks.STATE_PREFIX}*.toml"))
    for path in [statusline.state_path(setup.config_dir), *states]:
        try:
            os.unlink(path)
        except OSError:
            pass
    setup.created.forget_config_dir(io)
    from tma.runtime import cache, daemon_files

    if daemon_files.forget():
        io.say(f"removed the stopped daemons' logs from {daemon_files.runtime_dir()}")
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


def _stop_watches(server) -> None:
    """SIGTERM every `tma watch` the panes advertise (@tma_watch_pid) and wait up to 2 s
    for each to leave; only a process whose command line is a tma watch."""
    import os
    import signal
    import time

    from tma.tmux import attention
    from tma.tmux.adapter import NoServer, TmuxError

    try:
        pids = attention.watcher_pids(server)
    except (NoServer, TmuxError):
        return
    stopped = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if pid == os.getpid() or b"watch" not in argv or not any(b"tma" in a for a in argv):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            continue
        stopped.append(pid)
    deadline = time.monotonic() + 2.0
    while stopped and time.monotonic() < deadline and any(_alive(p) for p in stopped):
        time.sleep(0.05)
    for pid in stopped:
        sys.stdout.write(f"tma: stopped tma watch (pid {pid})\n")


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for tmux to reap it has stopped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:
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

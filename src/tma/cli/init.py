"""`tma init [--yes] [--diff] [--daemon | --no-daemon] [--config-dir DIR] [--conf PATH]`:
the first-run chain.

1. Detect the agents installed on this machine: an agent is installed when its
   manifest name, or one of its process_names that is not a generic runtime name
   (node, bun, python ...), resolves on $PATH.
2. Wire each detected agent that has a hook installer with `tma install-hooks
   <agent>` (its diff first, then `Apply this change? [y/N]`; `--yes` applies without
   asking). A declined prompt (a stdin that is not a terminal declines) skips that
   agent and makes init exit 1 at the end.
3. Install the keys with `tma install-keys` (the managed tmux file, which also keeps
   the attention hooks across tmux restarts, and its one source line in tmux.conf:
   the diff first, then one question; `--yes` applies without asking).
4. Report whether the global status-right runs `tma status`. init never edits it: it
   prints the line to add, the file to add it to and the reload command.
5. Start the daemon for this tmux server (`tma daemon --ensure`; one question, `--yes`
   starts it without asking; skipped when no tmux server runs).
6. Run `tma doctor` (the text report).

Exit 0 when every step succeeded; 1 when an agent or the keys were declined or failed,
the daemon did not start, or doctor could not run (no tmux server).
"""

from __future__ import annotations

import shutil
import sys

from tma.cli import common, spec
from tma.runtime.session import Session

#: process names that name a runtime, not an agent: never evidence an agent is installed.
GENERIC = frozenset(("node", "bun", "deno", "python", "python3", "ruby", "perl", "sh", "bash",
                     "zsh", "fish", "agent"))


def detect(mset) -> list[tuple[str, str]]:
    """(agent, the executable found) for every loaded agent installed on $PATH."""
    found = []
    for m in mset.ordered():
        names = [m.name] + [n for n in m.identity.process_names
                            if n not in GENERIC and n != m.name]
        for name in names:
            path = shutil.which(name)
            if path is not None:
                found.append((m.name, path))
                break
    return found


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("init", argv, session)
    cfg = session.config
    mset = session.manifests  # BundledManifestError: cli/main.py
    failed = _wire(session, mset, args)
    failed += _keys(session, args)
    _status_line(session, args.conf)
    failed += _daemon(session, args)
    say("tma: init: tma doctor")
    from tma.runtime import doctor, manifests

    # no server, a tmux error, a broken bundled manifest: reported by cli/main.py (exit 1)
    doc = doctor.gather(session.server, cfg, session.g.manifest_dir, common.now_ms())
    manifests.report_skipped([(i["file"], i["problem"]) for i in doc["manifests"]["issues"]],
                             session.warn)
    from tma.cli.doctor import render  # TODO(session): doctor (the text report's renderer)

    sys.stdout.write(render(doc))
    sys.stdout.flush()
    if failed:
        common.err(f"tma: init: incomplete: {'; '.join(failed)}")
        return common.FAIL
    return 0


def _wire(session: Session, mset, args) -> list[str]:
    """Steps 1 and 2: detect the agents, wire each one that has an installer; what failed."""
    from tma.install import registry, wiring

    cfg = session.config
    found = detect(mset)
    if found:
        say("tma: init: found " + ", ".join(f"{name} ({path})" for name, path in found))
    else:
        looked = ", ".join(m.name for m in mset.ordered())
        say(f"tma: init: no agent found on $PATH (looked for: {looked})")
    failed: list[str] = []
    for name, _path in found:
        if not mset.get(name).hook_capable or name not in registry.AGENTS:
            say(f"tma: init: {name} has no hooks tma can wire: its state is read from the "
                "screen")
            continue
        say(f"tma: init: wiring {name} (tma install-hooks {name})")
        req = wiring.Request(agent=name, yes=args.yes, config_dir=args.config_dir,
                             summary=not args.diff,
                             statusline=_statusline(cfg, mset.get(name), args))
        if wiring.run(req, cfg, mset, session.server, wiring.Output()) != 0:
            failed.append(f"{name} not wired")
            common.err(f"tma: init: {name} was not wired (declined or failed); run "
                       f"`tma install-hooks {name}` later")
    return failed


#: what the agents' own status line is called in the question
_STATUS_LINE = {"claude": "Claude Code's status line", "cursor": "Cursor CLI's status line"}


def _statusline(cfg, manifest, args) -> str:
    """Ask, apart from the agent's wiring, before tma's context shim takes the agent's
    own status line (Claude's footer hint `? for shortcuts` gives way to it; a
    statusLine command of the user's is wrapped). "keep" when nothing is at stake
    (the agent has none, the shim is there already, or it was declined before), "on"
    or "off" (recorded: install-hooks keeps to it) by the answer; --yes says yes."""
    from tma.install import common as ic
    from tma.install import registry, wiring

    name = manifest.name
    if not getattr(registry.adapter(name), "STATUSLINE", False):
        return "keep"
    req = wiring.Request(agent=name, config_dir=args.config_dir, statusline="on")
    try:
        setup = wiring.prepare(req, cfg)
        plan = registry.adapter(name).plan(setup.ctx, manifest, False)
    except ic.InstallError:
        return "keep"  # the wiring step says what is wrong
    if name in setup.ctx.optout:
        return "keep"  # declined before: install-hooks keeps to that
    marker = f"event --agent {name} --kind context"
    if not any(isinstance(c.new, str) and marker in c.new
               and marker not in (c.old if isinstance(c.old, str) else "")
               for c in plan.changes):
        return "keep"
    what = _STATUS_LINE.get(name, f"{name}'s status line")
    say(f"tma: init: {name}: tma's context gauge reads {what}: the shim takes its place "
        "(the built-in footer hint gives way to a model · context line; a statusLine "
        "command of yours keeps running inside it)")
    return "on" if ic.confirm(args.yes, question=f"Put the shim into {what}?") else "off"


def _keys(session: Session, args) -> list[str]:
    """Step 3: `tma install-keys` (its diff, its question); what failed."""
    from tma.install import keybind
    from tma.install.wiring import Output

    say("tma: init: keys (tma install-keys)")
    req = keybind.Request(yes=args.yes, conf=args.conf, config_dir=args.config_dir,
                          no_daemon=args.no_daemon, summary=not args.diff, reminder=False)
    if keybind.run(req, session.config, session.server, session.paths, session.env,
                   keybind.features(spec.COMMANDS), Output()) != 0:
        common.err("tma: init: the keys were not installed (declined or failed); run "
                   "`tma install-keys` later")
        return ["keys not installed"]
    return []


def _daemon(session: Session, args) -> list[str]:
    """Step 5: start the daemon (tier 3) unless one runs; what failed."""
    from tma.install.common import confirm

    if args.no_daemon:
        say("tma: init: daemon not started (--no-daemon; start it later: tma daemon --ensure)")
        return []
    who = session.daemon_running()
    if who:  # the key file's launcher (loaded a step ago) may have started it already
        say(f"tma: init: daemon already running ({who})")
        return []
    say("tma: init: daemon (tma daemon --ensure): reads hookless panes the moment they go "
        "quiet")
    if not confirm(args.yes or args.daemon, question="Start the daemon now?"):
        say("tma: init: daemon not started (start it later: tma daemon --ensure)")
        return []
    if session.ensure_daemon() != 0:
        return ["the daemon did not start"]
    say("tma: init: daemon running")
    return []


def _status_line(session: Session, conf: str | None) -> None:
    """Step 4: does status-right run `tma status`? Read, never edited."""
    from tma.install import binary, tmux_status
    from tma.install.common import tilde
    from tma.tmux import setup
    from tma.tmux.adapter import TmuxError

    server = session.server
    try:
        value: str | None = setup.status_right(server)
    except TmuxError:
        value = None
    if tmux_status.runs_tma_status(value):
        say("tma: init: status-right already runs `tma status`")
        return
    path = tilde(tmux_status.tmux_conf(session.paths, conf))
    if value is None:
        say("tma: init: no tmux server to ask whether status-right runs `tma status`; if it "
            f"does not, add this line to {path}:")
    else:
        say(f"tma: init: status-right does not run `tma status`; add this line to {path}:")
    # by its absolute path, as the key file and the attention hooks name it: tmux runs
    # the line with its own PATH, which need not hold tma's directory
    command = binary.running_tma() or binary.NAME
    say(f"    {tmux_status.status_line(command)}")
    try:
        interval = setup.global_option(server, "status-interval") if value is not None \
            else ""
    except TmuxError:
        interval = ""
    if not interval.isdigit() or int(interval) > 5:
        # tmux's default redraws every 15 s: counts that lag that long read as wrong
        say("    set -g status-interval 2")
    say(f"  then reload it: tmux source-file {path}")

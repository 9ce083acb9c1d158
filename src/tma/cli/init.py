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

Each step is a layer's: tma.install.wiring (detection, the wiring, the status-line
advice), tma.install.keybind (the keys), the Session (the daemon), tma.runtime.doctor.

Exit 0 when every step succeeded; 1 when an agent or the keys were declined or failed,
the daemon did not start, or doctor could not run (no tmux server).
"""

from __future__ import annotations

import sys

from tma.cli import common, spec
from tma.install import keybind, registry, wiring
from tma.install.common import confirm
from tma.runtime import doctor
from tma.runtime.session import Session
from tma.ui.doctor import render


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("init", argv, session)
    mset = session.manifests  # a broken config or bundled manifest: cli/main.py, exit 1
    io = wiring.Output()
    failed = _wire(session, mset, args, io)
    failed += _keys(session, args, io)
    wiring.status_line_advice(session.server, session.paths, args.conf, io)
    failed += _daemon(session, args, io)
    io.say("tma: init: tma doctor")

    # no server, a tmux error, a broken bundled manifest: reported by cli/main.py (exit 1)
    doc = doctor.check(session)
    sys.stdout.write(render(doc))
    sys.stdout.flush()
    if failed:
        common.err(f"tma: init: incomplete: {'; '.join(failed)}")
        return common.FAIL
    return 0


def _wire(session: Session, mset, args, io: wiring.Output) -> list[str]:
    """Steps 1 and 2: detect the agents, wire each one that has an installer; what failed."""
    found = wiring.detect(mset)
    if found:
        io.say("tma: init: found " + ", ".join(f"{name} ({path})" for name, path in found))
    else:
        looked = ", ".join(m.name for m in mset.ordered())
        io.say(f"tma: init: no agent found on $PATH (looked for: {looked})")
    failed: list[str] = []
    for name, _path in found:
        if not mset.get(name).hook_capable or name not in registry.AGENTS:
            io.say(f"tma: init: {name} has no hooks tma can wire: its state is read from the "
                   "screen")
            continue
        io.say(f"tma: init: wiring {name} (tma install-hooks {name})")
        # the shim's own question is the wiring's (tma.install.wiring.statusline_choice),
        # asked as `tma install-hooks NAME` asks it
        req = wiring.Request(agent=name, yes=args.yes, config_dir=args.config_dir,
                             summary=not args.diff)
        if wiring.run(req, session.config, mset, session.server, io) != 0:
            failed.append(f"{name} not wired")
            common.err(f"tma: init: {name} was not wired (declined or failed); run "
                       f"`tma install-hooks {name}` later")
    return failed


def _keys(session: Session, args, io: wiring.Output) -> list[str]:
    """Step 3: `tma install-keys` (its diff, its question); what failed."""
    io.say("tma: init: keys (tma install-keys)")
    req = keybind.Request(yes=args.yes, conf=args.conf, config_dir=args.config_dir,
                          no_daemon=args.no_daemon, summary=not args.diff, reminder=False)
    if keybind.run(req, session.config, session.server, session.paths, session.env,
                   keybind.features(spec.COMMANDS), io) != 0:
        common.err("tma: init: the keys were not installed (declined or failed); run "
                   "`tma install-keys` later")
        return ["keys not installed"]
    return []


def _daemon(session: Session, args, io: wiring.Output) -> list[str]:
    """Step 5: start the daemon (tier 3) unless one runs; what failed."""
    if args.no_daemon:
        io.say("tma: init: daemon not started (--no-daemon; start it later: tma daemon "
               "--ensure)")
        return []
    who = session.daemon_running()
    if who:  # the key file's launcher (loaded a step ago) may have started it already
        io.say(f"tma: init: daemon already running ({who})")
        return []
    io.say("tma: init: daemon (tma daemon --ensure): reads hookless panes the moment they "
           "go quiet")
    if not confirm(args.yes or args.daemon, question="Start the daemon now?"):
        # the key file's launcher runs in the background: it may have started one while
        # the question stood, and a "no" must not deny what runs
        who = session.daemon_running()
        if who:
            io.say(f"tma: init: the daemon is running already ({who}: the key file's "
                   "launcher started it); `tma daemon --stop` stops it")
            return []
        io.say("tma: init: daemon not started (start it later: tma daemon --ensure)")
        return []
    if session.ensure_daemon() != 0:
        return ["the daemon did not start"]
    io.say("tma: init: daemon running")
    return []

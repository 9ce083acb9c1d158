"""`tma init [--yes] [--config-dir DIR] [--conf PATH]`: the first-run chain.

1. Detect the agents installed on this machine: an agent is installed when its
   manifest name, or one of its process_names that is not a generic runtime name
   (node, bun, python ...), resolves on $PATH.
2. Wire each detected agent that has a hook installer with `tma install-hooks
   <agent>` (its diff first, then `Apply this change? [y/N]`; `--yes` applies without
   asking). A declined prompt (a stdin that is not a terminal declines) skips that
   agent and makes init exit 1 at the end.
3. Report whether the global status-right runs `tma status`. init never edits it: it
   prints the line to add, the file to add it to and the reload command.
4. Run `tma doctor` (the text report).

Exit 0 when every step succeeded; 1 when an agent was declined or failed, or doctor
could not run (no tmux server).
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from tma.cli import common, spec

#: process names that name a runtime, not an agent: never evidence an agent is installed.
GENERIC = frozenset(("node", "bun", "deno", "python", "python3", "ruby", "perl", "sh", "bash",
                     "zsh", "fish", "agent"))

STATUS_LINE = "set -g status-right '#(tma status) %H:%M'"
_RUNS_TMA_STATUS = re.compile(r"#\([^)]*\btma\b[^)]*\bstatus\b")


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


def runs_tma_status(value: str) -> bool:
    """Does a status-right value run `tma status` (any path to tma, any flags)?"""
    return _RUNS_TMA_STATUS.search(value) is not None


def tmux_conf(explicit: str | None) -> str:
    """The tmux config to name: --conf, else the first existing of ~/.tmux.conf,
    $XDG_CONFIG_HOME/tmux/tmux.conf, ~/.config/tmux/tmux.conf, else ~/.tmux.conf."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    candidates = [os.path.join(home, ".tmux.conf"), os.path.join(xdg, "tmux", "tmux.conf"),
                  os.path.join(home, ".config", "tmux", "tmux.conf")]
    for c in candidates:
        if os.path.isfile(c):
            return c
    return candidates[0]


def global_argv(g) -> list[str]:
    """The global options again, for the commands init runs in-process."""
    out = []
    for flag, key in (("--socket-name", "socket_name"), ("--socket-path", "socket_path"),
                      ("--config", "config"), ("--manifest-dir", "manifest_dir")):
        value = getattr(g, key)
        if value:
            out += [flag, value]
    return out


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    g, _, args = spec.parse("init", argv)
    cfg = common.load_config(g)

    from tma.cli import install_hooks as ih
    from tma.runtime import manifests

    mset = manifests.load(g.manifest_dir, cfg.agents)  # BundledManifestError: cli/main.py
    gargv = global_argv(g)
    failed: list[str] = []

    # 1. detect
    found = detect(mset)
    if found:
        say("tma: init: found " + ", ".join(f"{name} ({path})" for name, path in found))
    else:
        looked = ", ".join(m.name for m in mset.ordered())
        say(f"tma: init: no agent found on $PATH (looked for: {looked})")

    # 2. wire
    for name, _path in found:
        m = mset.get(name)
        if not m.hook_capable or name not in ih.AGENTS:
            say(f"tma: init: {name} has no hooks tma can wire: its state is read from the "
                "screen")
            continue
        say(f"tma: init: wiring {name} (tma install-hooks {name})")
        sub = gargv + [name]
        if args.yes:
            sub.append("--yes")
        if args.config_dir:
            sub += ["--config-dir", args.config_dir]
        sys.stdout.flush()
        if ih.main(sub) != 0:
            failed.append(f"{name} not wired")
            common.err(f"tma: init: {name} was not wired (declined or failed); run "
                       f"`tma install-hooks {name}` later")

    # 3. the status line (read, never edited)
    _status_line(g, cfg, args.conf)

    # 4. doctor
    say("tma: init: tma doctor")
    from tma.cli import doctor

    sys.stdout.flush()
    if doctor.main(gargv) != 0:
        failed.append("doctor")
    if failed:
        common.err(f"tma: init: incomplete: {'; '.join(failed)}")
        return common.FAIL
    return 0


def _status_line(g, cfg, conf: str | None) -> None:
    from tma.install.common import tilde
    from tma.tmux import setup
    from tma.tmux.adapter import TmuxError

    try:
        value: str | None = setup.status_right(common.server(g, cfg))
    except TmuxError:
        value = None
    if value is not None and runs_tma_status(value):
        say("tma: init: status-right already runs `tma status`")
        return
    path = tilde(tmux_conf(conf))
    if value is None:
        say("tma: init: no tmux server to ask whether status-right runs `tma status`; if it "
            f"does not, add this line to {path}:")
    else:
        say(f"tma: init: status-right does not run `tma status`; add this line to {path} "
            "(or put #(tma status) into your own status-right):")
    say(f"    {STATUS_LINE}")
    say(f"  then reload it: tmux source-file {path}")

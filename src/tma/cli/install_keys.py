"""`tma install-keys [--check|--uninstall] [--mouse] [--no-daemon] [--yes]`.

Writes tma's managed tmux file (tma.install.keys renders it) and the one marked line
in the user's tmux.conf that sources it; shows the diff, asks, writes; then, when a
tmux server is running, asks again and loads the file into it. `--uninstall` takes
both back (the user's file byte for byte) and removes what tma created. The run is
tma.install.keybind's; see docs/reference/install-keys.md.
"""

from __future__ import annotations

from tma.cli import common, spec
from tma.install import keybind
from tma.install.wiring import Output
from tma.runtime.session import Session


def main(session: Session, argv: list[str]) -> int:
    _, args = spec.parse("install-keys", argv, session)
    if args.check and args.uninstall:
        raise common.UsageError("--check and --uninstall are exclusive")

    req = keybind.Request(yes=args.yes, check=args.check, uninstall=args.uninstall,
                          mouse=args.mouse, no_daemon=args.no_daemon, conf=args.conf,
                          config_dir=args.config_dir)
    cfg = session.config
    return keybind.run(req, cfg, session.server, session.paths, session.env,
                       keybind.features(spec.COMMANDS), Output())

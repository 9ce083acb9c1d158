"""`tma completions bash|zsh|fish`: a static completion script on stdout.

Rendered by tma.ui.completions from the command table (tma.cli.spec).

    tma completions bash > ~/.local/share/bash-completion/completions/tma
    tma completions zsh  > "${fpath[1]}/_tma"
    tma completions fish > ~/.config/fish/completions/tma.fish
"""

from __future__ import annotations

import sys

from tma.cli import spec
from tma.ui import completions


def main(session, argv: list[str]) -> int:
    _, args = spec.parse("completions", argv, session)

    sys.stdout.write(completions.GENERATORS[args.shell](spec.TABLE))
    return 0

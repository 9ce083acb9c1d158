"""`tma version` (also `tma --version`, `tma -V`)."""

from __future__ import annotations

import sys

from tma import __version__


def main(session, argv: list[str]) -> int:
    if argv:  # the bare form stays import-free; anything else is parsed (--help, a typo)
        from tma.cli import spec

        spec.parse("version", argv)
    sys.stdout.write(f"tma {__version__}\n")
    return 0

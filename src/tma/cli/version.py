"""`tma version`."""

from __future__ import annotations

import sys

from tma import __version__


def main(argv: list[str]) -> int:
    sys.stdout.write(f"tma {__version__}\n")
    return 0

"""The errors a command line can earn, shared by every layer that judges one.

cli/main.py's EXIT_TABLE says what each prints and returns: a UsageError exits 2, a
NoPane 3. They live here, in the pure core, so that the layers a command hands its
work to (the installers, the runtime) can refuse a request in the same words.
"""

from __future__ import annotations


class UsageError(Exception):
    """A bad command line: exit 2."""


class NoPane(Exception):
    """The pane a command was told to use does not exist: exit 3, "tma: no pane %N"."""

    def __init__(self, pane_id: str) -> None:
        super().__init__(f"no pane {pane_id}")
        self.pane_id = pane_id

"""The errors a command line can earn, shared by every layer that judges one.

cli/main.py's EXIT_TABLE says what each prints and returns: a UsageError exits 2, a
NoPane 3. They live here, in the pure core, so that the layers a command hands its
work to (the installers, the runtime) can refuse a request in the same words.
"""

from __future__ import annotations

# Every exit status tma gives, in one table (docs/reference/exit-codes.md lists them with
# the commands that give each; cli/spec.py declares them per command from these).
OK = 0
FAIL = 1            # no server, a broken config or manifest, tmux refused, a failed run
USAGE = 2           # a bad command line
NO_PANE = 3         # the named pane does not exist (or vanished before a keystroke)
REFUSED = 4         # act: the fresh screen no longer asks for this answer
LOCKED = 5          # act: another tma is typing into that pane
ANSWERED = 6        # act: this prompt's episode was already answered
TIMEOUT = 124       # wait: the goal was not met in time (as timeout(1) says it)
INTERRUPTED = 130   # Ctrl-C (128 + SIGINT)


class UsageError(Exception):
    """A bad command line: exit 2."""


class NoPane(Exception):
    """The pane a command was told to use does not exist: exit 3, "tma: no pane %N"."""

    def __init__(self, pane_id: str) -> None:
        super().__init__(f"no pane {pane_id}")
        self.pane_id = pane_id

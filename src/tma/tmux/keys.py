"""Keystrokes into a pane: the one place `send-keys` is built.

Every key element is one send-keys argument with tmux's named-key interpretation on
(Enter, Escape, C-c ...); a text action's `{text}` slot is the caller's text, sent with
`send-keys -l` so it is typed literally and never read as key names. The whole sequence
is one command line (a `;` chain stops at the first failing command) run through
`source-file -`, whose quoting keeps a `;` in the text from splitting the line.
"""

from __future__ import annotations

from tma.core.actions_schema import TEXT_SLOT
from tma.tmux.adapter import Server, TmuxError, classify, quote


def send_line(pane_id: str, keys: tuple[str, ...] | list[str], text: str | None = None) -> str:
    """The command line: runs of named keys as one send-keys each, the slot as -l."""
    commands: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            commands.append(f"send-keys -t {pane_id} -- " + " ".join(quote(k) for k in run))
            run.clear()

    for key in keys:
        if key == TEXT_SLOT:
            if text is None:
                raise ValueError("a text slot with no text")
            flush()
            commands.append(f"send-keys -t {pane_id} -l -- {quote(text)}")
        else:
            run.append(key)
    flush()
    return " ; ".join(commands)


def send(server: Server, pane_id: str, keys: tuple[str, ...] | list[str],
         text: str | None = None) -> None:
    """One spawn; raises PaneGone (or TmuxError) when tmux refused the keys."""
    _out, err = server.source([send_line(pane_id, keys, text)])
    if err.strip():
        raise classify(err)


__all__ = ["send", "send_line", "TmuxError"]

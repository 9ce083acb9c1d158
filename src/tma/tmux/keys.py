"""Keystrokes into a pane: the one place `send-keys` is built.

Every key element is one send-keys argument with tmux's named-key interpretation on
(Enter, Escape, C-c ...); a text action's `{text}` slot is the caller's text, sent with
`send-keys -l` so it is typed literally and never read as key names. The whole sequence
is one command line (a `;` chain stops at the first failing command) run through
`source-file -`, whose quoting keeps a `;` in the text from splitting the line.

Keys after a text slot go in a second spawn, TEXT_SETTLE_S later: a TUI that detects
unbracketed pastes reads text and Enter arriving in one burst as a pasted newline. Codex
0.171.0 did exactly that in the live suite (the text sat in its composer unsent), while
the same Enter sent 10 ms later submitted it; its paste-burst window is 120 ms.
"""

from __future__ import annotations

import time

from tma.core.actions.schema import TEXT_SLOT
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


TEXT_SETTLE_S = 0.15


def after_text(keys: tuple[str, ...] | list[str]) -> tuple[list[str], list[str]]:
    """(up to and including the last text slot, the keys after it)."""
    keys = list(keys)
    if TEXT_SLOT not in keys:
        return keys, []
    cut = len(keys) - keys[::-1].index(TEXT_SLOT)
    return keys[:cut], keys[cut:]


def send(server: Server, pane_id: str, keys: tuple[str, ...] | list[str],
         text: str | None = None) -> None:
    """One spawn (two when keys follow typed text); raises PaneGone (or TmuxError) when
    tmux refused the keys, and then sends nothing more."""
    head, tail = after_text(keys)
    for i, part in enumerate((head, tail)):
        if not part:
            continue
        if i:
            time.sleep(TEXT_SETTLE_S)
        _out, err = server.source([send_line(pane_id, part, text)])
        if err.strip():
            raise classify(err)


__all__ = ["send", "send_line", "TmuxError"]

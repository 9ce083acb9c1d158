"""Keystrokes into a pane: the one place `send-keys` is built."""

from __future__ import annotations

from tma.tmux.adapter import Server


def send(server: Server, pane_id: str, keys: tuple[str, ...] | list[str]) -> None:
    """One send-keys invocation, tmux key names interpreted (Enter, Escape, C-c …)."""
    server.run("send-keys", "-t", pane_id, *keys)

"""Renderers for snapshots (status line, ls rows). Never talks to tmux directly."""

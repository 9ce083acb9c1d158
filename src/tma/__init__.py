"""tma: whose move is it? Live state of AI coding agents in tmux panes."""

__version__ = "0.1.0"

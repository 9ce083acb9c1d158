"""`tma clear-attention PANE` (internal): the navigation clear the tmux hooks run.

Unsets @agent_attention on PANE (the pane arrived at) and, when TMA_HOOK_KIND
names a departure hook (after-select-pane, session-window-changed), on the pane
just left; then sends SIGUSR1 to every `tma watch` advertised in a pane's
@tma_watch_pid so it refreshes now. Runs on every pane switch: no argparse, one
tmux spawn in the common case, no output, every failure silent, exit 0.
"""

from __future__ import annotations

import os


def _tmux_bin(config: str | None) -> str:
    env = os.environ.get("TMA_TMUX_BIN")
    if env:
        return env
    # [tmux] bin, read only when a config file exists (the common case reads nothing)
    from tma.core.paths import here

    path = here().config_file(config)
    if os.path.exists(path):
        try:
            from tma.runtime.config import load

            return load(path).tmux_bin or "tmux"
        except Exception:
            pass
    return "tmux"


def main(session, argv: list[str]) -> int:
    try:
        _run(session.g, argv)
    except Exception:
        pass
    return 0


def _run(g, rest: list[str]) -> None:
    from tma.tmux import attention
    from tma.tmux.adapter import Server

    pane = next((a for a in rest if not a.startswith("-")), "")
    if not attention.is_pane_id(pane):
        return
    server = Server(_tmux_bin(g.config), socket_name=g.socket_name, socket_path=g.socket_path)
    pids = attention.clear(server, pane, attention.env_kind())
    if not pids:
        return
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            pass

"""A tma screen in a pane of the test server, read until it shows what a test waits for."""

from __future__ import annotations

import os
import sys


def tma_command(srv, *args: str, env: str = "", exec_: bool = True,
                manifests: bool = True) -> str:
    """The shell command a pane runs: this tma, on this server, with the test manifests
    (or the bundled ones)."""
    mdir = f"--manifest-dir {srv.manifests} " if manifests else ""
    return (f"{env} {'exec ' if exec_ else ''}{sys.executable} -m tma --socket-name {srv.name} "
            f"{mdir}{' '.join(args)}").strip()

def screen_pane(srv, *args: str, session: str = "ui", width: int = 80, height: int = 24,
                env: str = "") -> str:
    """A session of its own whose one pane runs the picker / watch at width x height."""
    out = srv.tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height),
                   "-P", "-F", "#{pane_id}",
                   f"cd {os.getcwd()} && TERM=xterm-256color {tma_command(srv, *args, env=env)}")
    srv.tmux("set-option", "-t", session, "status", "off")
    srv.tmux("resize-window", "-t", session, "-x", str(width), "-y", str(height))
    return out.strip()

def screen(srv, pane: str) -> str:
    return srv.tmux("capture-pane", "-p", "-t", pane)

def wait_screen(srv, pane: str, pred, timeout: float = 10.0) -> str:
    got = {}

    def check():
        got["s"] = screen(srv, pane)
        return pred(got["s"])

    try:
        srv.wait_for(check, timeout=timeout)
    except AssertionError:
        raise AssertionError(f"screen never matched:\n{got.get('s')}") from None
    return got["s"]

def row_of(text: str, needle: str) -> str:
    return next((ln for ln in text.splitlines() if needle in ln), "")

"""The one answer to "which tma is this?", for every installer and the tmux hooks.

`running_tma` is the absolute path of the tma being run: what the tma-hook wrapper is
written beside, what the statusline shim and the tmux attention hooks call.
`tma_command` is how a tmux status line (or any config a person reads) should name
it: the bare `tma` when that resolves to this same file on the PATH tmux and the
agents get, else the absolute path (tma installed in a virtualenv, say, whose bin
directory only the shell that activated it has on its PATH).
"""

from __future__ import annotations

import os
import shutil
import sys

NAME = "tma"


def running_tma(argv0: str | None = None, executable: str | None = None) -> str | None:
    """The running tma: argv[0] when it is `tma`, else the `tma` script beside this
    interpreter (`python -m tma` inside an install), else `tma` on $PATH; absolute."""
    argv0 = (sys.argv[0] if sys.argv else "") if argv0 is None else argv0
    if os.path.basename(argv0) == NAME:
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found and os.path.isfile(found):
            return os.path.abspath(found)
    beside = os.path.join(os.path.dirname(executable or sys.executable), NAME)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(NAME)
    return os.path.abspath(found) if found else None


def default_path(env=None) -> str:
    """The PATH a tmux server or an agent started elsewhere would get: this one, minus
    the bin directory of an activated virtualenv (activation lives in one shell)."""
    env = os.environ if env is None else env
    venv = env.get("VIRTUAL_ENV")
    dirs = (env.get("PATH") or os.defpath).split(os.pathsep)
    if venv:
        drop = os.path.realpath(os.path.join(venv, "bin"))
        dirs = [d for d in dirs if d and os.path.realpath(d) != drop]
    return os.pathsep.join(d for d in dirs if d)


def tma_command(path: str | None = None, running: str | None = None) -> str:
    """How to name the running tma in a command tmux or an agent runs: `tma` when the
    bare name resolves to this tma on `path` (default: default_path()), else its
    absolute path; `tma` when the running tma cannot be found at all."""
    running = running or running_tma()
    if running is None:
        return NAME
    found = shutil.which(NAME, path=default_path() if path is None else path)
    if found and os.path.realpath(found) == os.path.realpath(running):
        return NAME
    return running


def resolves(command: str, path: str) -> str | None:
    """The executable a command's program resolves to on `path` (None: it does not)."""
    if os.sep in command:
        return command if os.path.isfile(command) and os.access(command, os.X_OK) else None
    return shutil.which(command, path=path)

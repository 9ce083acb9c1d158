"""A machine with agents installed, the way tma init finds one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.helpers.doctor import INSTALL_ENV


def setup_machine(srv, agents=("claude", "codex")) -> dict[str, Path]:
    """Isolated installer paths, and a PATH holding only fake agents, tmux and the
    system tools (nothing else that could pass for an agent)."""
    paths = {k: srv.root / "cfgs" / v for k, v in INSTALL_ENV.items()}
    srv.env.update({k: str(v) for k, v in paths.items()})
    fake = srv.root / "agentbin"
    fake.mkdir(exist_ok=True)
    for name in agents:
        exe = fake / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)
    tmux_dir = os.path.dirname(shutil.which("tmux") or "/usr/bin/tmux")
    srv.env["PATH"] = os.pathsep.join([str(fake), tmux_dir, "/usr/bin", "/bin"])
    return paths

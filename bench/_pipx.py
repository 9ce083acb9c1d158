"""Tools installed as a user's pipx installs them (not a script: test_bench_scripts skips
`_` modules).

`install(spec, home)` puts one tool (a checkout's path, or a PyPI requirement such as
`claude-tmux-status==0.4.1`) into a virtualenv of its own under `home` with
`pipx install --force`: a non-editable install (pip builds a wheel from a checkout and
writes the bytecode) whose console script is pip's own, run by its absolute path. An
editable install times differently (a .pth finder or path hook on every start, modules
read from the checkout), so it is never used. pipx is the one on PATH, else one this
module installs from PyPI into `home`/pipx-tool; when neither can be had, it does what
pipx does by hand (a fresh venv, `pip install SPEC`) and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def _run(argv: list[str], env: dict | None = None) -> str:
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def base_python() -> str:
    """The interpreter under this one's virtualenv: what a user's pipx would be given."""
    return getattr(sys, "_base_executable", None) or sys.executable


def pipx_command(home: Path) -> list[str] | None:
    """pipx as this machine has it, or a copy installed from PyPI into home; None when
    neither can be had."""
    found = shutil.which("pipx")
    if found:
        return [found]
    venv = home / "pipx-tool"
    exe = venv / "bin" / "pipx"
    if not exe.exists():
        try:
            _run([sys.executable, "-m", "venv", str(venv)])
            _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pipx"])
        except RuntimeError as exc:
            print(f"no pipx ({exc}); installing as pipx does, by hand", file=sys.stderr)
            return None
    return [str(exe)]


def _env() -> dict:
    # the bytecode pip writes at install is what a user's runs load; a session that
    # sets PYTHONDONTWRITEBYTECODE would otherwise leave every run compiling
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PIP_USER", "VIRTUAL_ENV", "PYTHONPATH")}


def install(spec: str, home: Path, script: str, how: list[str] | None) -> Path:
    """Install spec with pipx (how) under home (a PIPX_HOME of its own, so two trees of
    the same distribution never share a venv) on this interpreter; return the absolute
    path of its console script `script`."""
    home.mkdir(parents=True, exist_ok=True)
    env = _env()
    if how is not None:
        env.update(PIPX_HOME=str(home), PIPX_BIN_DIR=str(home / "bin"),
                   PIPX_MAN_DIR=str(home / "man"))
        _run([*how, "install", "--force", "--python", base_python(), spec], env=env)
        venvs = [p for p in (home / "venvs").iterdir() if p.is_dir()]
        assert len(venvs) == 1, venvs
        venv = venvs[0]
    else:
        venv = home / "venv"
        shutil.rmtree(venv, ignore_errors=True)
        _run([base_python(), "-m", "venv", str(venv)], env=env)
        py = str(venv / "bin" / "python")
        _run([py, "-m", "pip", "install", "-q", "-U", "pip"], env=env)
        _run([py, "-m", "pip", "install", "-q", spec], env=env)
    exe = venv / "bin" / script
    assert exe.exists(), exe
    # the first run of a fresh install is nobody's steady state: one untimed start
    # (bytecode of anything pip left uncompiled is written now)
    subprocess.run([str(exe), "--help"], capture_output=True, env=env)
    return exe


def python_of(script: Path) -> Path:
    """The interpreter the console script's shebang names (its venv's python)."""
    first = script.read_text(encoding="utf-8").split("\n", 1)[0]
    return Path(first[2:].split()[0])

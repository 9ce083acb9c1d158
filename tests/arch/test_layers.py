"""The architecture rules: import-linter contracts hold, can fail, and tmux is spawned in one place."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "tma"


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("lint-imports (import-linter) is not installed")
    return subprocess.run([exe], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(cwd / "src"), "PATH": "/usr/bin:/bin"})


def test_contracts_hold():
    res = _lint(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("violation,contract", [
    ("import subprocess\n", "tma.core is pure"),
    ("import time\n", "tma.core is pure"),
    ("from tma.tmux import adapter\n", "tma.core is pure"),
    ("import tma.daemon\n", "nothing imports tma.daemon"),
])
def test_a_contract_can_fail(tmp_path, violation, contract):
    copy = tmp_path / "proj"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / "src" / "tma" / "core" / "rollup.py"
    target.write_text(violation + target.read_text())
    res = _lint(copy)
    assert res.returncode != 0
    assert "BROKEN" in res.stdout and contract in res.stdout


_TMUX_ARGV = re.compile(r"""["'](set-option|capture-pane|list-panes|display-message|"""
                        r"""send-keys|source-file|show-options|list-clients|select-pane|"""
                        r"""switch-client|kill-server|new-session|display-menu)\b""")


def test_tmux_command_lines_are_built_only_in_tma_tmux():
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "tmux":
            continue
        if _TMUX_ARGV.search(path.read_text()):
            offenders.append(str(rel))
    assert offenders == [], f"tmux command lines built outside tma.tmux: {offenders}"


def test_other_spawners_live_in_named_runtime_modules():
    allowed = {("tmux", "spawn.py"), ("runtime", "procs.py"), ("runtime", "git.py"),
               ("runtime", "notify.py"), ("cli", "demo.py")}
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        text = path.read_text()
        if re.search(r"^\s*(import subprocess|from subprocess)|posix_spawn|os\.exec|os\.system",
                     text, re.M) and tuple(rel.parts[-2:]) not in allowed:
            offenders.append(str(rel))
    assert offenders == [], f"processes spawned outside the named modules: {offenders}"


def test_status_dispatch_does_not_import_argparse_at_module_level():
    text = (SRC / "cli" / "main.py").read_text()
    assert "import argparse" not in text
    assert sys.version_info >= (3, 11)

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


@pytest.mark.parametrize("violation,contract,module", [
    ("import subprocess\n", "tma.core is pure", "core/rollup.py"),
    ("import time\n", "tma.core is pure", "core/rollup.py"),
    ("from tma.tmux import adapter\n", "tma.core is pure", "core/rollup.py"),
    ("import tma.daemon\n", "nothing imports tma.daemon", "core/rollup.py"),
    # only the layers contract stands between these and the code
    ("from tma.runtime import config\n", "layers:", "ui/status.py"),
    ("from tma.runtime import config\n", "layers:", "install/common.py"),
    ("from tma.ui import rows\n", "layers:", "install/common.py"),
    ("from tma.cli import common\n", "layers:", "runtime/selectors.py"),
    # the runtime's rooms: a notification knows no action and no host; an action no host
    ("from tma.runtime.fleet import hosts\n", "runtime rooms", "runtime/notify/gate.py"),
    ("from tma.runtime.act import describe\n", "runtime rooms", "runtime/notify/note.py"),
    ("from tma.runtime.fleet import hosts\n", "runtime rooms", "runtime/act/describe.py"),
])
def test_a_contract_can_fail(tmp_path, violation, contract, module):
    copy = tmp_path / "proj"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / "src" / "tma" / module
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
    # notify sinks and actions start theirs through tma.tmux.spawn (one kill policy)
    allowed = {("tmux", "spawn.py"), ("runtime", "procs.py"), ("runtime", "git.py"),
               ("runtime", "demo.py"), ("fleet", "link.py")}
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


def test_the_layers_contract_names_every_package():
    import tomllib

    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(c for c in doc["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    named = {m.strip() for layer in layers["layers"] for m in layer.split("|")}
    packages = {f"tma.{p.name}" for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert named == packages
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    where = readme[readme.index("## Where does my change go"):]
    for pkg in sorted(packages):
        assert f"`{pkg.replace('.', '/').replace('tma/', 'src/tma/')}/`" in where, pkg

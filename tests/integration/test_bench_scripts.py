"""Every script in bench/ runs with its smallest parameters, so none rots between the
hand-made measurements that bench/RESULTS.md records.

Each script declares them as a module-level `SMOKE`: a list of argv lists, one per kind of
run it has (read from the source, never imported: a script imports tma as it stands).
A new script is picked up by the glob and fails here until it declares its `SMOKE`. Each
run is a subprocess under the test's private HOME and runtime dir, its tmux sockets in a
directory of its own (TMUX_TMPDIR); it must exit 0, print its figures, and leave no tmux
server running. The scripts reach tma through its executable or `python -m tma`, never
through tma.cli's modules, so a rearranged cli breaks them only where its behaviour broke.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.tmux_sockets import require_tmux

BENCH = Path(__file__).resolve().parents[2] / "bench"
#: `_name.py` is a module the scripts share, not a script
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
#: one run's ceiling; the whole set takes ~2 minutes on a loaded 2-CPU machine
TIMEOUT = 150


def smoke_of(script: Path) -> list[list[str]] | None:
    """The script's SMOKE argv lists, or None when it declares none."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "SMOKE"):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list) and value and all(
                isinstance(a, list) and all(isinstance(x, str) for x in a) for a in value), (
                f"{script.name}: SMOKE must be a non-empty list of argv lists")
            return value
    return None


def _runs() -> list:
    out = []
    for script in SCRIPTS:
        argvs = smoke_of(script)
        if argvs is None:
            out.append(pytest.param(script, None, id=script.stem))
            continue
        for i, argv in enumerate(argvs):
            out.append(pytest.param(script, argv, id=f"{script.stem}-{i}" if i else script.stem))
    return out


def test_the_bench_has_scripts():
    assert len(SCRIPTS) >= 10, [s.name for s in SCRIPTS]


def _live_servers(sockets: Path) -> list[str]:
    """The tmux servers still answering on a socket in this run's directory."""
    alive = []
    for sock in sorted(sockets.glob("tmux-*/*")) if sockets.exists() else []:
        res = subprocess.run(["tmux", "-S", str(sock), "list-sessions"], capture_output=True,
                             timeout=10)
        if res.returncode == 0:
            alive.append(sock.name)
            subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True,
                           timeout=10)
    return alive


@pytest.mark.parametrize(("script", "argv"), _runs())
def test_the_script_runs_with_its_smallest_parameters(script: Path, argv, short_tmp):
    assert argv is not None, (
        f"bench/{script.name} declares no SMOKE: give it its smallest parameters "
        "(SMOKE = [[...argv...]], adding a --smoke flag if it has none) so CI runs it")
    require_tmux()
    sockets = short_tmp / "tmux"
    sockets.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "TMA_CONFIG")}
    env["TMUX_TMPDIR"] = str(sockets)
    start = time.monotonic()
    try:
        res = subprocess.run([sys.executable, str(script), *argv], cwd=BENCH.parent, env=env,
                             capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        left = _live_servers(sockets)
    took = time.monotonic() - start
    said = f"bench/{script.name} {' '.join(argv)} ({took:.1f} s)\n{res.stdout}\n{res.stderr}"
    assert res.returncode == 0, said
    # its figures: a number on some line of what it printed
    assert re.search(r"\d", res.stdout), said
    assert left == [], f"tmux servers left running: {left}\n{said}"


def test_no_script_reaches_into_the_cli():
    """tma.cli is a shell others rearrange: the scripts run tma (its executable or
    `python -m tma`) or import the layers under it, in their code and in the code they
    hand a child interpreter."""
    assert [s.name for s in BENCH.glob("*.py") if "tma.cli" in s.read_text(encoding="utf-8")] \
        == []


def test_a_script_without_smoke_is_caught(tmp_path):
    script = tmp_path / "bench_new.py"
    script.write_text("import sys\nRUNS = 3\n")
    assert smoke_of(script) is None
    script.write_text('SMOKE = [["--runs", "1"]]\n')
    assert smoke_of(script) == [["--runs", "1"]]

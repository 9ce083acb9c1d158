"""The recorded transcript fixtures (tests/fixtures/transcripts, its README says how they
were made): which files there are, their records, and a store module's events over them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tma.core.transcript.event import Event

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
DRIFTED = ROOT / "drifted"
# the fake model's replies (the lab's mockllm.py)
QUICK = "Hello from mockllm. This is a short scripted reply."
AFTER_TOOL = "TOOL RESULT SEEN: the command ran. All done."
THINK = "Mock thinking: the user wants a greeting, so reply with one."
COMMAND = "echo hi > mockllm-hi.txt"


def keys(agent: str) -> list[str]:
    """The recorded versions of `agent`: ["claude-2.1.197", ...]."""
    return sorted(p.name for p in ROOT.glob(f"{agent}-*") if p.is_dir())


def manifest(key: str) -> dict:
    return json.loads((ROOT / key / "manifest.json").read_text(encoding="utf-8"))


def files(agent: str) -> list[Path]:
    """Every recorded JSONL of `agent`, subagents' files included."""
    return sorted(p for key in keys(agent) for p in (ROOT / key).rglob("*.jsonl"))


def scenario(key: str, name: str) -> list[Path]:
    """The session files of one scenario (Claude: the session's own file, not its
    subagents'; Codex: every rollout the scenario wrote, oldest first)."""
    return sorted((ROOT / key / name).glob("*.jsonl"))


def records(path: Path) -> list[dict]:
    """The file's records, one per line, as the agent wrote them."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def read(events: Callable[[dict], list[Event]], path: Path) -> list[Event]:
    """The events of a file read record by record."""
    return [e for r in records(path) for e in events(r)]


def of(evs: list[Event], kind: str) -> list[Event]:
    return [e for e in evs if e.kind == kind]


def text(e: Event) -> str:
    assert e.body is not None, e
    return e.body[1]

"""The recorded transcript fixtures (tests/fixtures/transcripts) and how to read them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
GEMINI = FIXTURES / "gemini-0.61.0"
PI = FIXTURES / "pi-0.73.1"
OPENCODE = FIXTURES / "opencode-1.18.33"
COPILOT = FIXTURES / "copilot-1.0.102"
QWEN = FIXTURES / "qwen-0.24.4"


def records(path: Path) -> list[dict]:
    """The records of a JSONL fixture, parsed, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def recorded(agent_dir: Path) -> list[Path]:
    """The JSONL fixtures an agent's directory holds (the hand-drifted ones are apart)."""
    return sorted(agent_dir.glob("*.jsonl"))


def paths(agent_dir: Path) -> dict[str, dict[str, str]]:
    """Where each fixture was on the recording machine (paths.json)."""
    return json.loads((agent_dir / "paths.json").read_text(encoding="utf-8"))


def load_sql(sql: Path, db: Path, *, wal: bool = True) -> Path:
    """A fresh database at `db` made from an SQL fixture (WAL, as OpenCode keeps it)."""
    conn = sqlite3.connect(db)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(sql.read_text(encoding="utf-8"))
    conn.close()
    return db


def kinds(events, *, skip=("bookkeeping",)) -> list[str]:
    return [e.kind for e in events if e.kind not in skip]


#: What the fake model says to a plain prompt, and after a tool's result (the lab's
#: mockllm), as every recorded transcript holds them.
PROMPT_TEXT = "Hello from mockllm. This is a short scripted reply."
AFTER_TOOL = "TOOL RESULT SEEN: the command ran. All done."


def flow(events):
    """The kinds a reader shows, in order (bookkeeping and usage aside)."""
    return [e.kind for e in events if e.kind not in ("bookkeeping", "usage")]

"""The notify sink's log, read back as records."""

from __future__ import annotations

import json
from pathlib import Path


def _lines(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()]

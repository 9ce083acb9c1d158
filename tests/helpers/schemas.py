"""The JSON schemas shipped in schemas/, loaded for validation."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

def _schema(name: str) -> dict:
    return json.loads((REPO / "schemas" / name).read_text())

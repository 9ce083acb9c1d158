"""The pages that say which test holds a guarantee name tests that exist: a renamed or
deleted test must take its line in the docs with it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "explanation" / "security.md"]


def _defined() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        names.update(re.findall(r"^\s*def (test_\w+)", path.read_text(encoding="utf-8"),
                                re.MULTILINE))
    return names


def test_every_test_a_page_names_exists():
    defined = _defined()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for rel in set(re.findall(r"(tests/[\w/]+\.py)", text)):
            assert (ROOT / rel).exists(), f"{page.name} names {rel}, which is gone"
        for name in set(re.findall(r"\b(test_\w+)\b", text)):
            if name.endswith("_") or (ROOT / "tests" / "unit" / f"{name}.py").exists() or \
                    list((ROOT / "tests").rglob(f"{name}.py")):
                continue  # a module's name, not a test's
            assert name in defined, f"{page.name} names {name}, which no test defines"

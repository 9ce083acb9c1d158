"""The source says what it means: no comment or docstring sends the reader to the
project's founding documents by their file number (a number says nothing to someone
without them; name the contract or the decision record instead)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BY_NUMBER = re.compile(r"\bseeds?[ -]?0\d\d\b|seeds/0\d\d", re.I)


def test_no_comment_cites_a_seed_by_its_number():
    offenders = [f"{p.relative_to(ROOT)}:{n}"
                 for top in ("src", "tests", "bench", "tools", "docs")
                 for p in sorted((ROOT / top).rglob("*"))
                 if p.suffix in (".py", ".md", ".sh", ".toml") and p.is_file()
                 for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace")
                                          .splitlines(), 1)
                 if BY_NUMBER.search(line) and p.name != "test_source_hygiene.py"]
    assert offenders == []


def test_the_pattern_catches_what_it_is_for():
    assert BY_NUMBER.search("order (seed 000): a claim")
    assert BY_NUMBER.search("the seed-001 traces")
    assert not BY_NUMBER.search("re-seeding the hook")

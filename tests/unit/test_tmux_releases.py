"""One list of tmux releases: what CI builds, what doctor claims, what the docs say.

`.ci/tmux-releases` is the list `.ci/run` builds and runs the tmux contract suite on;
tma.tmux.releases.TESTED is what `tma doctor` states; docs/reference/
tmux-compatibility.md has one column per release; the README and the getting-started
pages name the range. A release added to CI without the rest (or the reverse) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import tmux_matrix
from tma.tmux import releases

ROOT = Path(__file__).resolve().parents[2]
COMPAT = ROOT / "docs" / "reference" / "tmux-compatibility.md"


def test_doctor_claims_exactly_what_ci_runs():
    assert list(releases.TESTED) == tmux_matrix.ci_releases()
    assert releases.OLDEST == releases.TESTED[0] and releases.NEWEST == releases.TESTED[-2]
    assert releases.TESTED[-1] == "next"


def test_ci_builds_the_list_and_runs_the_contract_suite():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "tools/tmux_matrix.sh" in run and "TMA_TMUX_MATRIX" in run
    tool = (ROOT / "tools" / "tmux_matrix.sh").read_text(encoding="utf-8")
    assert ".ci/tmux-releases" in tool and "build.sh" in tool


def _cells(row: str) -> list[str]:
    """A markdown table row's cells (`\\|` inside a cell is a literal bar)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def _table_header(text: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith("| feature"):
            return _cells(line)[1:]
    raise AssertionError(f"{COMPAT.name} has no `| feature | ...` table")


def test_the_compatibility_table_has_one_column_per_release():
    text = COMPAT.read_text(encoding="utf-8")
    assert _table_header(text) == list(releases.TESTED)
    rows = [line for line in text.splitlines() if line.startswith("| ")
            and not line.startswith(("| feature", "|---"))]
    assert len(rows) >= 10
    for row in rows:
        assert len(_cells(row)) == len(releases.TESTED) + 1, row
        # every cell says something: a tick, or a degrade with its footnote
        assert all(c.startswith(("✓", "degraded [")) for c in _cells(row)[1:]), row


@pytest.mark.parametrize("page", ["README.md", "docs/tutorial/first-run.md",
                                  "docs/reference/tmux-compatibility.md"])
def test_the_tested_claims_name_the_range_ci_proves(page):
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    claim = f"{releases.OLDEST} to {releases.NEWEST}"
    assert claim in text, page
    # every "tested on tmux ..." names the range, no other version
    for m in re.finditer(r"tested (?:against|with|on) tmux ", text):
        assert text[m.end():].startswith(claim), (page, text[m.start():m.end() + 20])


@pytest.mark.parametrize("text,standing", [
    ("3.2a", "tested"), ("3.3a", "tested"), ("3.4", "tested"), ("3.5a", "tested"),
    ("3.6b", "tested"), ("3.7c", "tested"), ("next-3.8", "tested"),
    ("3.3", "inside"), ("3.6a", "inside"), ("next-3.5", "inside"),
    ("3.1c", "older"), ("2.9a", "older"), ("3.2", "older"),
    ("3.8", "newer"), ("3.10", "newer"), ("next-3.9", "newer"),
    ("openbsd-7.6", "unplaced"), ("master", "unplaced"), ("3.4-rc", "unplaced"),
    ("", "unreported"),
])
def test_standing(text, standing):
    assert releases.standing(text).standing == standing


def test_every_release_in_the_list_is_tested_never_unknown():
    for version in releases.TESTED:
        reported = "next-3.8" if version == "next" else version
        assert releases.standing(reported).standing == releases.TESTED_ON, version

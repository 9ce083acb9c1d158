"""tma.ui.table: the ls table for a person (pure: rows + width + now -> lines)."""

from __future__ import annotations

from tma.runtime.config import STATUS_DEFAULTS
from tma.ui import table

NOW = 1_800_000_000_000


def _row(pane, state, since, **kw):
    return dict({"pane": pane, "agent": "claude", "state": state, "detail": None,
                 "since": since, "locator": "work:1.0", "title": "", "attention": False,
                 "muted": False, "repo": None, "branch": None, "worktree": None}, **kw)


def test_ages_are_relative_and_coarse():
    assert table.age(NOW - 4_999, NOW) == "4s"
    assert table.age(NOW - 3 * 60_000 - 59_000, NOW) == "3m"
    assert table.age(NOW - 2 * 3_600_000, NOW) == "2h"
    assert table.age(NOW - 5 * 86_400_000, NOW) == "5d"
    assert table.age(NOW + 10_000, NOW) == "0s"  # a clock step never shows a negative age
    assert table.age(0, NOW) == "-"


def test_the_table_has_a_header_glyphs_and_drops_empty_optional_columns():
    rows = [_row("%1", "blocked", NOW - 65_000, detail="permission", title="fix\tthe parser"),
            _row("%12", "idle", NOW - 7_200_000, attention=True, muted=True)]
    lines = table.lines(rows, 120, NOW, STATUS_DEFAULTS)
    assert lines == [
        "  PANE  AGENT   STATE           DETAIL      AGE  WHERE     TITLE",
        "  %1    claude  ⚑ blocked       permission  1m   work:1.0  fix the parser",
        "  %12   claude  ✓ done (muted)              2h   work:1.0",
    ]


def test_repo_and_branch_columns_appear_when_a_row_has_them():
    rows = [_row("%1", "working", NOW, repo="tma", branch="main", worktree=True)]
    head, line = table.lines(rows, 120, NOW, STATUS_DEFAULTS)
    assert head.split() == ["PANE", "AGENT", "STATE", "AGE", "WHERE", "REPO", "BRANCH", "TITLE"]
    assert "tma   main (worktree)" in line


def test_a_long_title_is_cut_to_the_width():
    rows = [_row("%1", "working", NOW, title="x" * 200)]
    _, line = table.lines(rows, 60, NOW, STATUS_DEFAULTS)
    assert len(line) == 60 and line.endswith("x…")


def test_no_rows_no_lines_and_the_legend_uses_the_palette():
    assert table.lines([], 80, NOW, STATUS_DEFAULTS) == []
    palette = dict(STATUS_DEFAULTS, blocked=("B", "red"))
    assert any(line.startswith("  B blocked  yours") for line in table.legend(palette))


def test_wide_characters_line_up_and_fit_in_cells():
    """A repo or title in Chinese is two cells a character: the columns after it line up
    and a cut title keeps the line within the width in cells."""
    from tma.ui import width as cw

    rows = [_row("%1", "idle", NOW, repo="项目", branch="主", title="修复登录页面的错误并添加测试"),
            _row("%2", "idle", NOW, repo="proj", branch="main", title="fix login")]
    for width in (50, 60, 120):
        head, a, b = table.lines(rows, width, NOW, STATUS_DEFAULTS)
        assert all(cw.cells(ln) <= width for ln in (head, a, b)), (width, a)
        if "TITLE" in head:
            col = cw.cells(head[:head.index("TITLE")])
            assert cw.cells(a[:a.index("修")]) == col == cw.cells(b[:b.index("fix")]), width

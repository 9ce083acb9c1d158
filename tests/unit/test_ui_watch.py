"""The watch dashboard's pure renderer."""

from __future__ import annotations

from tests.helpers.picker_rows import NOW, PAL, row
from tma.ui import picker, watch


def render(rows, view=None, width=120, height=30, plain=False):
    return watch.render(rows, view or watch.WatchView(), width, height, palette=PAL, now=NOW,
                        plain=plain)


def test_tokens_quota_cost_and_caveat():
    r = row("%1", "working", tokens=12_345, quota=42, quota_window="5h",
            quota_resets_at_ms=(14 * 3600 + 30 * 60) * 1000, cost_usd=1.234)
    out = picker.text(render([r], width=160))
    line = next(ln for ln in out.splitlines() if "claude" in ln)
    for part in ("12.3k tok", "42% 5h ↻14:30", "~$1.23"):
        assert part in line, part
    assert watch.CAVEAT in out.splitlines()[-1]
    assert watch.CAVEAT not in picker.text(render([row("%2")]))


def test_table_has_header_row_when_wide():
    rows = [row("%1", tokens=5), row("%2", "blocked")]
    out = picker.text(render(rows, watch.WatchView(table=True)))
    assert "AGENT" in out and "STATE" in out and "TOKENS" in out
    assert "──" not in out  # no preview in table mode
    narrow = picker.text(render(rows, watch.WatchView(table=True), width=60))
    assert "AGENT" not in narrow  # < 76 columns: one flat list


def test_table_drops_the_columns_nobody_has_a_value_for():
    out = picker.text(render([row("%1"), row("%2", "blocked")], watch.WatchView(table=True)))
    header = next(ln for ln in out.splitlines() if "AGENT" in ln)
    for empty in ("CTX", "TOKENS", "QUOTA", "COST"):
        assert empty not in header, header
    assert "STATE" in header


def test_group_by_repo_most_urgent_group_first():
    rows = [row("%1", "idle", repo="alpha", branch="main"),
            row("%2", "blocked", repo="beta", branch="x"),
            row("%3", "unknown")]
    view = watch.WatchView(group="repo", table=True)
    lines = picker.text(render(rows, view)).splitlines()
    heads = [ln for ln in lines if ln.startswith("▸")]
    assert heads == ["▸ beta", "▸ alpha", "▸ (no repo)"]
    assert lines.index("▸ beta") < next(i for i, ln in enumerate(lines) if "beta/x" in ln)


def test_group_by_session():
    rows = [row("%1", locator="one:1.0"), row("%2", "blocked", locator="two:1.0")]
    lines = picker.text(render(rows, watch.WatchView(group="session"))).splitlines()
    assert [ln for ln in lines if ln.startswith("▸")] == ["▸ two", "▸ one"]


def test_selection_scrolls_into_view_with_groups():
    rows = [row(f"%{i}", repo=f"r{i % 5}", branch="b") for i in range(60)]
    view = watch.WatchView(group="repo", selected="%59", table=True)
    for w, h in ((80, 24), (200, 50), (40, 12)):
        lines = render(rows, view, width=w, height=h)
        assert len(lines) == h
        assert all(sum(len(t) for t, _ in ln) <= w for ln in lines)
        assert any(ln and ln[0][0] == ">" for ln in lines)


def test_preview_mode_and_plain():
    rows = [row("%1")]
    view = watch.WatchView(selected="%1", preview="PANE TEXT")
    assert "PANE TEXT" in picker.text(render(rows, view))
    lines = render(rows, view, plain=True)
    assert all(style in ("", "pane:%1") for ln in lines for _, style in ln)


def test_too_small():
    assert "terminal too small" in picker.text(render([row("%1")], width=25, height=12))


def test_header_counts_and_names_the_grouping():
    out = picker.text(render([row("%1"), row("%2")], watch.WatchView(group="repo")))
    assert out.splitlines()[0] == " tma watch  2 agents  by repo"


# ---------------------------------------------------------------- issue 22: p, ? and /


def test_p_is_advertised_only_where_it_does_something():
    wide = picker.text(render([row("%1")], width=120)).splitlines()[-1]
    narrow = picker.text(render([row("%1")], width=60)).splitlines()[-1]
    assert "p table/preview" in wide and "? help" in wide and "/ search" in wide
    assert "p table" not in narrow and "? help" in narrow


def test_help_overlay_lists_every_key():
    view = watch.WatchView()
    view.help = True
    out = picker.text(render([row("%1")], view))
    for key, what in watch.HELP:
        assert key in out and what[:30] in out
    assert "any key closes this help" in out and "claude" not in out


def test_search_filters_ranks_and_shows_the_query():
    rows = [row("%1", "blocked", agent="claude", title="the command"),
            row("%2", "idle", agent="codex")]
    view = watch.WatchView()
    view.searching, view.query = True, "cod"
    lines = picker.text(render(rows, view)).splitlines()
    assert "/ cod▏" in lines[0] and "type to filter" in lines[-1]
    listed = [ln for ln in lines if "claude" in ln[:12] or "codex" in ln[:12]]
    assert "codex" in listed[0] and "claude" in listed[1]
    view.query = "zzz"
    assert "Backspace edits it" in picker.text(render(rows, view))
    view.searching = False
    out = picker.text(render(rows, view))
    assert "/ zzz" in out and "/ edits it, esc clears it" in out


def test_an_empty_watch_has_no_stray_divider():
    out = picker.text(render([]))
    assert "──" not in out and "no agent is running in this tmux server" in out

"""The picker's pure renderer: rows + view + size -> lines of styled spans."""

from __future__ import annotations

from tests.helpers.picker_rows import NOW, PAL, row
from tma.ui import picker


def render(rows, view=None, width=100, height=24, plain=False):
    return picker.render(rows, view or picker.View(), width, height, palette=PAL, now=NOW,
                         plain=plain)


def test_order_blocked_done_working_idle_unknown_oldest_first():
    rows = [row("%1", "idle"), row("%2", "working"), row("%3", "unknown"),
            row("%4", "blocked", since=NOW - 1000), row("%5", "blocked", since=NOW - 9000),
            row("%6", "idle", attention=True)]
    assert [r["pane"] for r in picker.order(rows)] == ["%5", "%4", "%6", "%2", "%1", "%3"]


def test_row_shows_glyph_agent_locator_repo_detail_age_context_model():
    r = row("%1", "blocked", since=NOW - 240_000, detail="permission", repo="tma",
            branch="main", context=42, model="opus", locator="work:2.1")
    out = picker.text(render([r]))
    line = next(ln for ln in out.splitlines() if "claude" in ln)
    for part in ("⚑", "claude", "work:2.1", "tma/main", "permission", "blocked 4m",
                 "ctx 42%", "opus"):
        assert part in line, part
    assert line.startswith(">")  # the only row is selected


def test_state_colour_span_and_selection_style():
    lines = render([row("%1", "working"), row("%2", "idle")])
    spans = [s for ln in lines for s in ln]
    assert ("●", "state:working sel") in spans
    assert (">", "bold sel pane:%1") in spans and (" ", "bold pane:%2") in spans
    assert any(t.startswith("○") and st == "state:idle" for t, st in spans)


def test_plain_mode_has_no_style_tokens():
    lines = render([row("%1", "working")], plain=True)
    assert all(style in ("", "pane:%1") for ln in lines for _, style in ln)
    assert ">" in picker.text(lines)


def test_fuzzy_filter_over_every_column():
    rows = [row("%1", agent="claude", repo="webapp", branch="feat"),
            row("%2", agent="codex", model="gpt5")]
    view = picker.View(query="wbap")
    assert [r["pane"] for r in picker.visible(rows, view, PAL, NOW)] == ["%1"]
    view.query = "gpt"
    assert [r["pane"] for r in picker.visible(rows, view, PAL, NOW)] == ["%2"]
    view.query = "cdx g5"  # every term must match some column
    assert [r["pane"] for r in picker.visible(rows, view, PAL, NOW)] == ["%2"]
    view.query = "zzz"
    assert "no agent matches the filter" in picker.text(render(rows, view))


def test_scope_session_and_invoking_pane_excluded():
    rows = [row("%1", locator="a:1.0"), row("%2", locator="b:1.0"), row("%3", locator="a:2.0")]
    view = picker.View(scope="session", session="a", exclude="%3")
    assert [r["pane"] for r in picker.visible(rows, view, PAL, NOW)] == ["%1"]
    assert "this session" in picker.text(render(rows, view))


def test_move_wraps_and_follows_pane_id():
    shown = picker.order([row("%1", "blocked"), row("%2", "working"), row("%3", "idle")])
    assert picker.move(shown, "%1", 1) == "%2"
    assert picker.move(shown, "%3", 1) == "%1"
    assert picker.move(shown, "%1", -1) == "%3"
    assert picker.move(shown, "%gone", 1) == "%2"
    assert picker.move([], None, 1) is None


def test_preview_only_when_wide_enough():
    rows = [row("%1")]
    view = picker.View(selected="%1", preview="\x1b[31mHELLO\x1b[0m screen\n\n")
    wide = picker.text(render(rows, view, width=80))
    assert "HELLO screen" in wide and "\x1b" not in wide and "── s:1.0" in wide
    assert "HELLO" not in picker.text(render(rows, view, width=75))


def test_ctrl_t_is_offered_only_where_there_is_a_preview_to_turn():
    rows = [row("%1", "working")]
    assert "ctrl-t" in picker.text(render(rows, width=80)).splitlines()[-1]
    for width, height in ((40, 24), (75, 24), (100, 9)):  # no room for a preview
        footer = picker.text(render(rows, width=width, height=height)).splitlines()[-1]
        assert "ctrl-t" not in footer and "enter jump" in footer, (width, height, footer)


def test_the_preview_rule_says_what_a_blocked_pane_asks():
    rows = [row("%1", "blocked", pending_summary="Bash: rm -rf build/\x1b[2J")]
    view = picker.View(selected="%1", preview="screen\n")
    wide = picker.text(render(rows, view, width=80))
    assert "── s:1.0 · Bash: rm -rf build/ [2J ─" in wide and "\x1b" not in wide
    plain = picker.text(render([row("%1")], view, width=80)).splitlines()
    assert [ln for ln in plain if ln.startswith("── ")] == ["── s:1.0 " + "─" * 71]


def test_exact_size_and_never_wider():
    rows = [row(f"%{i}", title="x" * 300, repo="r" * 50, branch="b") for i in range(40)]
    for w, h in ((80, 24), (200, 50), (40, 12), (30, 5)):
        lines = render(rows, picker.View(selected="%39"), width=w, height=h)
        assert len(lines) == h
        assert all(sum(len(t) for t, _ in ln) <= w for ln in lines), (w, h)
        assert ">" in picker.text(lines)  # the selection is scrolled into view


def test_too_small_says_so():
    out = picker.text(render([row("%1")], width=20, height=4))
    assert "terminal too small" in out and "claude" not in out
    assert len(render([row("%1")], width=20, height=4)) == 4


def test_no_agents_and_message_footer():
    out = picker.text(render([], picker.View(message="actions: not in this release")))
    assert "no agent is running" in out and "actions: not in this release" in out
    assert "esc quit" in picker.text(render([]))


def test_an_empty_picker_has_no_stray_divider_and_says_what_to_do():
    for width in (80, 200):
        lines = picker.text(render([], width=width)).splitlines()
        assert not any("──" in ln for ln in lines), lines
        assert "no agent is running in this tmux server" in lines[1]
        assert "start one (claude, codex" in lines[2]
    out = picker.text(render([row("%1")], picker.View(query="zzz")))
    assert "no agent matches the filter" in out and "──" not in out
    out = picker.text(render([row("%1", locator="x:1.0")],
                             picker.View(scope="session", session="s")))
    assert "no agent is running in this session" in out and "ctrl-s" in out


def test_clean_screen_strips_escapes_and_controls():
    assert picker.clean_screen("a\x1b[1;32mb\x1b]0;t\x07c\x07\td") == ["abc    d"]


def test_pane_at_and_scroll():
    rows = [row("%1", "blocked"), row("%2", "working"), row("%3", "idle")]
    lines = render(rows, width=100, height=24)
    assert [picker.pane_at(lines, y) for y in range(4)] == [None, "%1", "%2", "%3"]
    assert picker.pane_at(lines, 23) is None and picker.pane_at(lines, 99) is None
    shown = picker.order(rows)
    assert picker.scroll(shown, "%1", 3) == "%3"  # stops at the end
    assert picker.scroll(shown, "%3", -3) == "%1"
    assert picker.scroll([], None, 3) is None


# ---------------------------------------------------------------- ranking (issue 22)


def test_rank_orders_exact_prefix_word_substring_scattered():
    r = picker.rank
    assert r("codex", "codex") > r("cod", "codex") > r("cod", "my codex") > \
        r("cod", "xcodex") > r("cod", "command") > 0
    assert r("cod", "claude") == 0 and r("", "anything") > 0
    assert r("COD", "Codex") == r("cod", "codex")  # case-insensitive


def test_rank_prefers_the_tighter_scatter():
    assert picker.rank("abc", "a_b_c") > picker.rank("abc", "axxxxbxxxxc") > 0
    # the tightest window is found even after a looser first one
    assert picker.rank("abc", "axxxxbxxxxc a_bc") > picker.rank("abc", "axxxxbxxxxc")
    assert picker.rank("ac", "axxxxc ac") > picker.rank("ac", "axxxxc")


def test_typing_cod_ranks_codex_above_claude_whose_title_says_command():
    claude = row("%1", "blocked", agent="claude", title="fix the command parser")
    codex = row("%2", "idle", agent="codex")
    assert [r["pane"] for r in picker.order([claude, codex])] == ["%1", "%2"]
    shown = picker.visible([claude, codex], picker.View(query="cod"), PAL, NOW)
    assert [r["pane"] for r in shown] == ["%2", "%1"]
    out = picker.text(render([claude, codex], picker.View(query="cod")))
    assert out.splitlines()[1].startswith("> ") and "codex" in out.splitlines()[1]


def test_a_session_or_agent_name_beats_a_scattered_match_elsewhere():
    api = row("%1", "blocked", agent="claude", locator="api:1.0", title="a pretty interface")
    web = row("%2", "idle", agent="claude", locator="web:2.0", title="build the api")
    shown = picker.visible([api, web], picker.View(query="api"), PAL, NOW)
    assert [r["pane"] for r in shown] == ["%1", "%2"]  # the session, then a word
    shown = picker.visible([api, web], picker.View(query="web"), PAL, NOW)
    assert [r["pane"] for r in shown] == ["%2"]


def test_every_term_must_match_and_ties_keep_the_usual_order():
    a = row("%1", "idle", agent="codex", since=NOW - 1000)
    b = row("%2", "blocked", agent="codex")
    c = row("%3", "working", agent="claude")
    view = picker.View(query="codex")
    assert [r["pane"] for r in picker.visible([a, b, c], view, PAL, NOW)] == ["%2", "%1"]
    view = picker.View(query="codex blk")
    assert [r["pane"] for r in picker.visible([a, b, c], view, PAL, NOW)] == ["%2"]


def test_a_narrow_footer_drops_hints_not_the_way_out():
    """At 40 columns the footer's hints go from the right, keeping `esc quit`; nothing is
    cut mid-word. A filter that finds nothing in this session says ctrl-s widens it."""
    out = picker.text(render([row("%1")], width=40, height=12)).splitlines()
    assert out[-1].rstrip() == " enter jump · tab actions · esc quit", out[-1]
    assert "…" not in out[-1]
    assert picker.hints(picker.PICKER_KEYS, 200) == picker.PICKER_KEYS
    assert picker.hints("a b · c d · e f", 1) == "a b · e f"  # two always stay
    out = picker.text(render([row("%1", locator="x:1.0")],
                             picker.View(query="zzz", scope="session", session="s")))
    assert "no agent in this session matches the filter" in out and "ctrl-s" in out


def test_wide_characters_are_measured_in_cells():
    """A title in Chinese takes two cells a character: the row is cut and padded by cells,
    so no line is wider than the terminal and the columns still line up."""
    from tma.ui import width as cw

    rows = [row("%1", title="修复登录页面的错误并且添加测试用例以及文档说明"),
            row("%2", title="fix the login page")]
    for width in (40, 80, 120):
        lines = picker.text(render(rows, width=width)).splitlines()
        assert all(cw.cells(ln) <= width for ln in lines), (width, lines)
        a, b = (ln for ln in lines if "claude" in ln)
        if width > 40:  # at 40 the title column is dropped
            assert cw.cells(a[:a.index("修")]) == cw.cells(b[:b.index("fix")])


def test_cells_clip_and_wrap():
    from tma.ui import width as cw

    assert (cw.cells("abc"), cw.cells("中文"), cw.cells("e\u0301"), cw.cells("Ａ")) == (3, 4, 1, 2)
    assert cw.clip("中文字", 5) == "中文" and cw.clip("abc", 2) == "ab" and cw.clip("中", 1) == ""
    assert cw.wrap("中文字 abc", 4) == ["中文", "字", "abc"]
    assert cw.wrap("hello world", 5) == ["hello", "world"]
    assert cw.wrap("中", 1) == ["中"]  # wider than the line: one character a line, no loop

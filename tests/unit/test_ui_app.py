"""The picker/watch loop (tma.ui.app) and its terminal (tma.ui.term) without a terminal:
key decoding, colours, and the App's key handling against a screen and a feed that
record what they are asked."""

from __future__ import annotations

from tests.helpers.picker_rows import row
from tma.runtime.config import PICKER_DEFAULTS
from tma.ui import app as ui_app, picker as ui_picker, term, watch as ui_watch


class Cfg:
    picker = dict(PICKER_DEFAULTS)


class Feed:
    def __init__(self, rows):
        self.cfg = Cfg()
        self._rows = rows
        self.problem = ""
        self.jumped: list[str] = []
        self.menus: list[str] = []
        self.refused = ""
        self.asked: list[tuple[str, str]] = []

    def rows(self):
        return list(self._rows)

    def preview(self, pane_id):
        return f"screen of {pane_id}"

    def conversation(self, pane_id, how):
        self.asked.append((pane_id, how))
        return {"agent": "claude", "events": [
            {"cursor": "c1", "kind": "assistant_text", "preview": f"answer on {pane_id}",
             "body": None}]}

    def jump(self, pane_id):
        self.jumped.append(pane_id)
        return self.refused

    def action_menu(self, pane_id):
        self.menus.append(pane_id)
        return ""

    def refresh(self, first=False):
        pass


class Screen:
    def __init__(self, width=100, height=30):
        self.width, self.height = width, height
        self.frames = []

    def size(self):
        return self.width, self.height

    def draw(self, lines):
        self.frames.append(ui_picker.text(lines))


def app(rows, cls=ui_app.App, view=None, **kw):
    a = cls(Feed(rows), view or ui_picker.View(), Screen(**kw))
    a.update(capture=True)
    return a


ROWS = [row("%1", "idle"), row("%2", "blocked", locator="b:1.0"), row("%3", "working")]


def test_decode_keys():
    assert term.decode("\x1b[A\x1b[Bq\r\t\x13\x0e\x10\x7f\x1b\x03") == [
        "up", "down", "q", "enter", "tab", "ctrl-s", "ctrl-n", "ctrl-p", "backspace", "esc",
        "ctrl-c"]
    assert term.decode("\x14") == ["ctrl-t"]
    assert term.decode("a\x1b[1;5Cb") == ["a", "b"]  # unknown sequences skipped
    assert term.decode("\x1bOA") == ["up"]


def test_colour_numbers():
    assert term.colour_number("red", 8) == 1
    assert term.colour_number("brightred", 256) == 9
    assert term.colour_number("colour244", 256) == 244
    assert term.colour_number("colour244", 8) == -1
    assert term.colour_number("darkgray", 256) == 8
    assert term.colour_number("#ff0000", 256) == 196
    assert term.colour_number("nonsense", 256) == -1


def test_plain_wanted():
    assert term.plain_wanted({"NO_COLOR": "1", "TERM": "xterm"})
    assert term.plain_wanted({"TERM": "dumb"})
    assert not term.plain_wanted({"TERM": "xterm", "NO_COLOR": ""})


def test_selection_starts_on_the_most_urgent_and_moves():
    a = app(ROWS)
    assert a.view.selected == "%2" and a.view.preview == "screen of %2"
    a.on_key("down")
    assert a.view.selected == "%3" and a.view.preview == "screen of %3"
    a.on_key("ctrl-n")
    a.on_key("ctrl-n")
    assert a.view.selected == "%2"
    a.on_key("ctrl-p")
    assert a.view.selected == "%1"


def test_typing_filters_and_q_is_a_letter_once_typing():
    a = app(ROWS)
    for ch in "wrk":
        a.on_key(ch)
    assert a.view.query == "wrk" and [r["pane"] for r in a.shown] == ["%3"]
    assert a.view.selected == "%3"
    a.on_key("q")
    assert not a.done and a.view.query == "wrkq"
    for _ in range(4):
        a.on_key("backspace")
    a.on_key("q")
    assert a.done


def test_esc_and_ctrl_c_quit():
    for key in ("esc", "ctrl-c"):
        a = app(ROWS)
        a.on_key(key)
        assert a.done


def test_scope_toggle():
    a = app(ROWS, view=ui_picker.View(session="b"))
    a.on_key("ctrl-s")
    assert a.view.scope == "session" and [r["pane"] for r in a.shown] == ["%2"]
    a.on_key("ctrl-s")
    assert a.view.scope == "all" and len(a.shown) == 3


def test_enter_jumps_and_closes_or_says_why():
    a = app(ROWS)
    a.on_key("enter")
    assert a.feed.jumped == ["%2"] and a.done
    a = app(ROWS)
    a.feed.refused = "pane %2 is gone"
    a.on_key("enter")
    assert not a.done and a.view.message == "pane %2 is gone"


def test_tab_closes_the_picker_for_the_action_menu():
    a = app(ROWS)
    a.on_key("tab")
    assert a.done and a.after_close == "%2" and a.feed.menus == []
    w = app(ROWS, cls=ui_app.WatchApp, view=ui_watch.WatchView())
    w.on_key("tab")
    assert not w.done and w.feed.menus == ["%2"] and w.view.message == "actions for %2"



def test_a_vanished_pane_moves_the_selection():
    a = app(ROWS)
    a.feed._rows = [r for r in ROWS if r["pane"] != "%2"]
    a.update(capture=True)
    assert a.view.selected == "%3"
    a.feed._rows = []
    a.update(capture=True)
    a.draw()
    assert a.view.selected is None and "no agent is running" in a.screen.frames[-1]
    a.on_key("enter")
    a.on_key("down")
    assert a.feed.jumped == []


def test_no_preview_capture_when_narrow():
    a = app(ROWS, width=60)
    assert a.view.preview is None


def test_watch_keys():
    a = app(ROWS, cls=ui_app.WatchApp, view=ui_watch.WatchView())
    a.on_key("j")
    assert a.view.selected == "%3"
    a.on_key("k")
    assert a.view.selected == "%2"
    a.on_key("p")
    assert a.view.table
    a.on_key("g")
    assert a.view.group == "repo"
    a.on_key("g")
    assert a.view.group is None
    a.on_key("ctrl-s")
    assert a.view.scope == "all"
    a.on_key("enter")
    assert a.feed.jumped == ["%2"] and not a.done  # watch stays open
    assert a.view.message == "jumped to %2"
    a.on_key("a")
    assert a.view.message == "actions for %2" and a.feed.menus == ["%2"]
    a.on_key("q")
    assert a.done


def test_mouse_click_selects_then_enters_and_wheel_stops_at_the_ends():
    rows = [row(f"%{i}", "idle", since=1000 + i) for i in range(1, 8)]
    a = app(rows)
    a.draw()
    a.on_key("click:3")  # screen line 3: the third row (line 0 is the header)
    assert a.view.selected == "%3" and not a.feed.jumped
    a.on_key("click:0")  # the header: nothing
    a.on_key("click:29")  # the footer: nothing
    assert a.view.selected == "%3"
    a.draw()
    a.on_key("click:3")
    assert a.feed.jumped == ["%3"] and a.done
    a = app(rows)
    a.on_key("wheel-down")
    a.on_key("wheel-down")
    a.on_key("wheel-down")
    assert a.view.selected == "%7"
    a.on_key("wheel-up")
    assert a.view.selected == "%4"


def test_ctrl_t_shows_the_conversation_asked_anew_then_only_refreshed():
    a = app(ROWS)
    a.on_key("ctrl-t")
    assert a.view.talk and a.feed.asked == [("%2", "fresh")]
    a.draw()
    frame = a.screen.frames[-1]
    assert "── b:1.0 · conversation" in frame and "answer on %2" in frame
    assert "screen of %2" not in frame and "ctrl-t screen" in frame
    a.tick()  # a refresh never asks a host anew
    assert a.feed.asked[-1] == ("%2", "refresh")
    a.on_key("down")  # another pane: asked, from what is kept when it is a host's
    assert a.feed.asked[-1] == ("%3", "cached")
    a.tick()
    assert a.feed.asked[-1] == ("%3", "refresh")
    a.on_key("ctrl-t")  # back to the screen: no conversation asked
    n = len(a.feed.asked)
    a.tick()
    a.draw()
    assert not a.view.talk and len(a.feed.asked) == n
    assert "screen of %3" in a.screen.frames[-1] and "ctrl-t conversation" in a.screen.frames[-1]
    a.on_key("ctrl-t")  # on again: asked anew
    assert a.feed.asked[-1] == ("%3", "fresh")


def test_ctrl_t_on_a_narrow_screen_says_why_not():
    a = app(ROWS, width=60)
    a.on_key("ctrl-t")
    assert not a.view.talk and a.feed.asked == []
    assert "needs 76 columns" in a.view.message


def test_ctrl_t_in_watchs_table_shows_the_preview_with_the_conversation():
    a = app(ROWS, cls=ui_app.WatchApp, view=ui_watch.WatchView(table=True))
    a.on_key("ctrl-t")
    assert a.view.talk and not a.view.table and a.feed.asked == [("%2", "fresh")]
    a.draw()
    assert "answer on %2" in a.screen.frames[-1]

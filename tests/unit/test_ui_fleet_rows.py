"""The hosts' rows in the picker and watch (pure renderers): a host column only when a
host's row is listed, an offline host's rows stale with their age, a host with no rows
still one line, at 40, 80 and 200 columns."""

from __future__ import annotations

import pytest

from tests.helpers.picker_rows import NOW, PAL, row
from tma.runtime import screen
from tma.ui import picker, watch

SIZES = [(40, 12), (80, 24), (200, 50)]
NOTES = ["gpu1  offline (unreachable: ssh: connect to host gpu1 port 22: Connection "
         "refused)"]


def fleet_rows() -> list[dict]:
    return [row("%1", "working"), row("%2", "idle", agent="codex"),
            row("box:%5", "blocked", since=NOW - 30_000, host="box", locator="work:1.0",
                detail="permission", pending_summary="Bash: rm -rf build/"),
            row("far:%3", "working", host="far", locator="main:0.0", stale=True,
                age_ms=12_400)]


def render_picker(rows, width, height, **kw):
    view = picker.View(**kw)
    return picker.text(picker.render(rows, view, width, height, palette=PAL, now=NOW))


def render_watch(rows, width, height, **kw):
    view = watch.WatchView(**kw)
    return picker.text(watch.render(rows, view, width, height, palette=PAL, now=NOW))


def line_of(text: str, needle: str) -> str:
    return next((ln for ln in text.splitlines() if needle in ln), "")


@pytest.mark.parametrize("width,height", SIZES)
@pytest.mark.parametrize("draw", [render_picker, render_watch], ids=["picker", "watch"])
def test_host_rows_after_local_with_their_host_and_stale_age(draw, width, height):
    out = draw(fleet_rows(), width, height, notes=NOTES)
    lines = out.splitlines()
    assert len(lines) == height and all(len(ln) <= width for ln in lines)
    box, far = line_of(out, " box "), line_of(out, " far ")
    assert box and far, out
    assert "stale: offline 12s" in far
    assert "blocked 30s" in box
    # the local rows come first, the host column blank on them, aligned with the hosts'
    local = line_of(out, "codex")
    order = [lines.index(ln) for ln in (local, box, far)]
    assert order == sorted(order), out
    assert local.index("codex") == box.index("claude")  # the host column keeps them aligned
    assert line_of(out, "gpu1").strip().startswith("gpu1  offline"), out


@pytest.mark.parametrize("width,height", SIZES)
def test_no_host_column_without_a_host_row(width, height):
    rows = [row("%1", "working"), row("%2", "idle", agent="codex")]
    with_host = render_picker(rows + [row("box:%5", host="box")], width, height)
    alone = render_picker(rows, width, height)
    assert line_of(alone, "codex").index("codex") < line_of(with_host, "codex").index("codex")
    table = render_watch(rows, width, height, table=True)
    assert "HOST" not in table
    if width >= picker.PREVIEW_MIN_WIDTH:
        assert "HOST" in render_watch(rows + [row("box:%5", host="box")], width, height,
                                      table=True)


def test_a_host_note_is_shown_when_no_row_is_and_is_never_selectable():
    lines = picker.render([], picker.View(notes=NOTES), 80, 24, palette=PAL, now=NOW)
    out = picker.text(lines)
    assert "no agent is running" in out and "gpu1  offline (unreachable" in out
    at = next(i for i, ln in enumerate(lines) if ln and "gpu1" in ln[0][0])
    assert picker.pane_at(lines, at) is None


def test_notes_never_push_the_selected_row_off_screen():
    rows = [row(f"%{i}") for i in range(1, 20)]
    notes = [f"h{i}  offline (closed)" for i in range(10)]
    out = render_picker(rows, 40, 12, notes=notes, selected="%19")
    assert line_of(out, ">") and "h0" in out


def test_the_preview_of_a_host_row_says_what_the_row_knows():
    r = fleet_rows()[2]
    text = screen.remote_preview(r)
    assert "box:%5" in text and "asks: Bash: rm -rf build/" in text
    assert "detail: permission" in text and "on the host" in text
    out = render_picker([r], 100, 24, selected="box:%5", preview=text)
    assert "── box:%5 work:1.0 · Bash: rm -rf build/" in out
    stale = screen.remote_preview(fleet_rows()[3])
    assert "stale: the host is offline" in stale and "12s old" in stale


def test_a_host_row_is_found_by_its_host_and_left_out_of_the_session_scope():
    rows = fleet_rows()
    shown = picker.visible(rows, picker.View(query="box"), PAL, NOW)
    assert shown[0]["pane"] == "box:%5"
    view = picker.View(scope="session", session="work")  # the host's session is not ours
    assert [r["pane"] for r in picker.visible(rows, view, PAL, NOW)] == []


class Side:
    """fleet_view.Remote's answers, as the screen's notes read them."""

    def __init__(self, cached, configured, entries):
        self.cached, self.configured, self._entries = cached, configured, entries

    def entries(self):
        return self._entries


def test_host_notes_say_offline_hosts_without_rows_and_no_daemon_once():
    entries = [{"name": "box", "state": "offline", "link": "timeout", "error": "no frame"},
               {"name": "far", "state": "connecting", "link": "connecting", "error": None},
               {"name": "up", "state": "online", "link": "ok", "error": None}]
    rows = [{"host": "box"}]
    assert screen.host_notes(Side({}, ["box", "far", "up"], entries), rows) == [
        "far  connecting (connecting)"]
    assert screen.host_notes(Side({}, ["box"], entries[:1]), []) == [
        "box  offline (timeout: no frame)"]
    none = screen.host_notes(Side(None, ["box", "far"], []), [])
    assert none == ["2 hosts: their rows need `tma daemon`"]
    assert len("  " + none[0]) <= 40  # whole on the narrowest screen


def test_host_cell_is_bold_and_a_stale_age_is_dim_not_its_state_colour():
    lines = picker.render(fleet_rows(), picker.View(), 100, 24, palette=PAL, now=NOW)
    spans = [s for ln in lines for s in ln]
    assert any(t.startswith("box") and st == "bold" for t, st in spans)
    assert any(t.startswith("stale: offline 12s") and st == "dim" for t, st in spans)
    assert any(t.startswith("blocked 30s") and st == "state:blocked" for t, st in spans)

